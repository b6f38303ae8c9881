"""A load run in words: the lines `ridge load` prints without `--json`."""
from __future__ import annotations

from engine import units
from engine.load import links


def _s(x) -> str:
    return units.seconds(x) if x is not None else "n/a"


def fleet_line(dep, spec) -> str:
    """The fleet and its traffic in one line."""
    if spec.disaggregate is not None:
        p, d = spec.disaggregate
        fleet = (f"{p} prefill + {d} decode GPUs ({dep.gpus} per instance), KV over {links.label(spec)}")
    else:
        fleet = (f"{spec.replicas} x {dep.gpus} {dep.gpu.id}" if spec.replicas > 1 else f"{dep.gpus} x {dep.gpu.id}")
    if spec.arrival == "closed":
        traffic = f"{spec.users} users, think {spec.think_seconds:g} s"
    else:
        traffic = f"{spec.qps:g} requests/s ({spec.arrival})"
    return (f"{dep.model.id} on {fleet}; {traffic}; prompt {dep.prompt}, output {dep.output} tokens "
            f"({spec.lengths}); {spec.requests} requests, seed {spec.seed}; {dep.fidelity} step times")


def summary_lines(dep, spec, result) -> list[str]:
    f = result.figures
    sched = ("whole prompts first (no chunking)" if spec.chunk_tokens is None
             else f"chunked prefill, {spec.chunk_tokens} tokens per step")
    lines = [fleet_line(dep, spec),
             f"scheduler: up to {spec.max_running} running, {sched}"
             + (f", queue capped at {spec.queue_cap}" if spec.queue_cap is not None else ""),
             "",
             f"{'':<6}{'P50':>10}{'P90':>10}{'P99':>10}",
             f"{'TTFT':<6}{_s(f['ttft_p50_seconds']):>10}{_s(f['ttft_p90_seconds']):>10}{_s(f['ttft_p99_seconds']):>10}"
             f"   (alone: {_s(f['lone_ttft_seconds'])})",
             f"{'TPOT':<6}{_s(f['tpot_p50_seconds']):>10}{_s(f['tpot_p90_seconds']):>10}{_s(f['tpot_p99_seconds']):>10}",
             f"{'E2E':<6}{_s(f['e2e_p50_seconds']):>10}{_s(f['e2e_p90_seconds']):>10}{_s(f['e2e_p99_seconds']):>10}",
             "",
             f"arrivals {f['arrival_rate_per_s']:.3g}/s against a steady-state capacity of {f['saturation_qps']:.3g}/s "
             f"({f['arrival_rate_per_s'] / f['saturation_qps']:.0%} utilisation)",
             f"in the system on average {f['mean_in_system']:.3g} requests (Little's law: rate x mean time "
             f"{f['arrival_rate_per_s'] * (f['e2e_mean_seconds'] or 0):.3g}); mean batch {f['mean_batch']:.3g}; "
             f"mean queue {f['mean_queue']:.3g}",
             f"throughput {f['throughput_tokens_per_s']:,.0f} output tokens/s; goodput {f['goodput_requests_per_s']:.3g} "
             f"requests/s within TTFT {f['slo_ttft_seconds']:g} s and TPOT {f['slo_tpot_seconds']:g} s "
             f"({f['slo_attainment']:.1%} of requests)",
             f"preemptions {f['preemptions']}, shed {f['shed']}; {f['gpu_seconds']:,.0f} GPU-seconds, "
             f"{f['prefill_gpu_share']:.0%} of the busy time on prefill",
             f"cost per million input tokens {units.dollars(f['cost_per_million_input_tokens'])}, "
             f"per million output tokens {units.dollars(f['cost_per_million_output_tokens'])}"]
    if spec.disaggregate is not None:
        lines.append(f"KV transfer per average prompt: {_s(f['kv_transfer_seconds'])}, added to its TTFT")
    return lines

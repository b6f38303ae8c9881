"""`ridge load`: serve a deployment under traffic, request by request, and print the tails.

`--json` prints one object (the keys `engine.load.run` names); otherwise a readable summary.
`--size` finds the fewest GPUs that meet a rate at the P99 SLOs instead. `--gpus` is the fleet's
GPU count: one instance of that many GPUs, or `--tp T` GPUs per instance with gpus / T replicas
dealt requests round robin; `--disaggregate P:D` splits the fleet into P prefill and D decode GPUs
(instances of `--tp`, default the largest count dividing both).
"""
from __future__ import annotations

import argparse
import json
import math

from engine.deployment import FIDELITIES, PRECISIONS


def build(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--model", help="catalog model id (see `ridge solve --list`)")
    add("--gpu", default="h100-sxm", help="accelerator id (default h100-sxm)")
    add("--gpus", type=int, default=None, help="GPUs in the fleet (default: --tp, else 1)")
    add("--tp", type=int, default=None, help="GPUs per instance (tensor parallel; default: all of --gpus)")
    add("--prompt", type=int, default=1024, help="average prompt tokens (default 1024)")
    add("--output", type=int, default=256, help="average output tokens (default 256)")
    add("--qps", type=float, default=None, help="arrival rate, requests per second (open loop)")
    add("--users", type=int, default=None, help="closed loop: users who each wait for their answer")
    add("--think", type=float, default=0.0, help="closed loop: mean think time between a user's requests (s)")
    add("--arrival", choices=("poisson", "bursty"), default="poisson",
        help="open-loop arrivals: poisson, or bursty (gaps with twice Poisson's spread)")
    add("--lengths", choices=("fixed", "exponential", "trace"), default="fixed",
        help="prompt and output lengths around their averages (default fixed)")
    add("--requests", type=int, default=10000, help="requests to simulate (default 10000)")
    add("--seed", type=int, default=0, help="seed of the arrivals and lengths (default 0)")
    add("--slo-ttft", type=float, default=2.0, metavar="SECONDS", help="P99 time-to-first-token target (default 2)")
    add("--slo-tpot", type=float, default=0.2, metavar="SECONDS", help="P99 time-per-output-token target (default 0.2)")
    add("--chunk-tokens", type=int, default=None,
        help="token budget per step with chunked prefill (default: no chunking, prompts prefilled whole)")
    add("--max-running", type=int, default=256, help="sequences in flight per instance (default 256, vLLM's)")
    add("--queue-cap", type=int, default=None, help="shed arrivals that find this many already waiting")
    add("--disaggregate", metavar="P:D", default=None,
        help="split the GPUs into a prefill and a decode pool (with --size: auto, to search the split)")
    add("--link", default="infiniband-ndr", metavar="GBPS",
        help="KV transfer link between the pools: GB/s, or nvlink, infiniband-ndr, pcie5, ethernet-100g")
    add("--weights", choices=PRECISIONS, default="bf16", help="weight precision")
    add("--kv", choices=PRECISIONS, default="bf16", help="KV cache precision")
    add("--price", type=float, default=3.0, help="price per GPU-hour in dollars (default 3)")
    add("--shared-prefix", type=int, default=0, help="prompt tokens every request shares")
    add("--prefix-caching", action="store_true", help="reuse the shared prefix's KV cache")
    add("--fidelity", choices=FIDELITIES, default="floor", help="step times: floor, realistic or measured (default floor)")
    add("--size", action="store_true", help="find the fewest GPUs that meet --qps at the P99 SLOs")
    add("--catalog", action="append", default=[], metavar="TOML", help="extra catalog file with [models.*] / [gpus.*]")
    add("--json", action="store_true", help="print one JSON object")


def _split(args) -> tuple[int, int] | None:
    if args.disaggregate is None or (args.size and args.disaggregate == "auto"):
        return None
    from engine.load.spec import parse_split

    return parse_split(args.disaggregate)


def _layout(args, split) -> tuple[int, int]:
    """(GPUs per instance, replicas) from --gpus, --tp and --disaggregate."""
    from engine.errors import RidgeError

    if split is not None:
        total = sum(split)
        if args.gpus is not None and args.gpus != total:
            raise RidgeError(f"--gpus {args.gpus} disagrees with --disaggregate {args.disaggregate} ({total} GPUs)")
        tp = args.tp or math.gcd(*split)
        return tp, 1
    total = args.gpus if args.gpus is not None else (args.tp or 1)
    tp = args.tp or total
    if total < 1 or tp < 1:
        raise RidgeError("--gpus and --tp must be at least 1")
    if total % tp:
        raise RidgeError(f"--gpus {total} is not a whole number of {tp}-GPU instances (--tp)")
    return tp, total // tp


def run(args) -> int:
    from engine.deployment import build_deployment
    from engine.errors import RidgeError
    from engine.load import links
    from engine.load.spec import LoadSpec
    from app.commands.solve import _catalog

    if not args.model:
        raise RidgeError("give --model ID (see `ridge solve --list` for ids)")
    if args.qps is not None and args.users is not None:
        raise RidgeError("give either --qps (open loop) or --users (closed loop), not both")
    split = _split(args)
    tp, replicas = _layout(args, split) if not args.size else (args.tp or 1, 1)
    link, link_gbps = links.resolve(args.link)
    dep = build_deployment(_catalog(args), args.model, args.gpu, gpus=tp, prompt=args.prompt, output=args.output,
                           weights=args.weights, kv=args.kv, price=args.price, shared_prefix=args.shared_prefix,
                           prefix_caching=args.prefix_caching, fidelity=args.fidelity)
    spec = LoadSpec(arrival="closed" if args.users is not None else args.arrival, qps=args.qps, users=args.users,
                    think_seconds=args.think, lengths=args.lengths, requests=args.requests, seed=args.seed,
                    slo_ttft=args.slo_ttft, slo_tpot=args.slo_tpot, chunk_tokens=args.chunk_tokens,
                    max_running=args.max_running, queue_cap=args.queue_cap, replicas=replicas,
                    disaggregate=split, link=link, link_gbps=link_gbps)
    if args.size:
        from engine.load.sizing import size_fleet

        if args.qps is None:
            raise RidgeError("--size needs the rate to meet: --qps Q")
        if split is not None:
            raise RidgeError("--size searches the split itself: give --disaggregate auto, not a P:D")
        result = size_fleet(dep, spec, tp=args.tp, split="also" if args.disaggregate == "auto" else False)
        out = result.to_json()
        print(json.dumps(out, indent=2, allow_nan=False) if args.json else "\n".join(result.lines()))
        return 0
    from engine.load.run import simulate
    from engine.load.report import summary_lines

    result = simulate(dep, spec)
    if args.json:
        print(json.dumps(result.to_json(), indent=2, allow_nan=False))
    else:
        print("\n".join(summary_lines(dep, spec, result)))
    return 0

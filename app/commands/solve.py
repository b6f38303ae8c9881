"""`ridge solve`: analyse one deployment; `--json` prints the contract, otherwise the derivation.

This path imports only the engine's pure-Python modules (no Textual, numpy or pydantic), so a
whole `ridge solve --json` process stays close to the interpreter's own start-up time.
"""
from __future__ import annotations

import json
import os

from engine.deployment import ALLOCATORS, FIDELITIES, OBJECTIVES, PRECISIONS, SCHEDULERS, Deployment


def build(parser) -> None:
    d = Deployment.FIELDS
    add = parser.add_argument
    add("--model", help="catalog model id (see --list), e.g. llama-3-70b")
    add("--config", metavar="PATH", help="a Hugging Face style config.json to use instead of --model")
    add("--gpu", default="h100-sxm", help="accelerator id (default h100-sxm)")
    add("--gpus", type=int, default=d["gpus"], help="GPU count, tensor parallel (default 1)")
    add("--prompt", type=int, default=d["prompt"], help="average prompt tokens P")
    add("--output", type=int, default=d["output"], help="average output tokens O")
    add("--concurrency", type=int, default=d["concurrency"], help="sequences the traffic wants in flight")
    add("--weights", choices=PRECISIONS, default="bf16", help="weight precision")
    add("--kv", choices=PRECISIONS, default="bf16", help="KV cache precision")
    add("--reserve-gib", type=float, default=None, help="per-GPU reserve for activations (GiB; default 10%% of each GPU's memory)")
    add("--mfu", type=float, default=1.0, help="fraction of dense peak compute reached (default 1.0)")
    add("--price", type=float, default=3.0, help="price per GPU-hour in dollars (default 3)")
    add("--shared-prefix", type=int, default=0, help="prompt tokens shared by every request")
    add("--prefix-caching", action="store_true", help="reuse the shared prefix's KV cache")
    add("--spec-k", type=int, default=0, help="speculative decoding draft length (0 = off)")
    add("--spec-alpha", type=float, default=0.7, help="draft acceptance rate")
    add("--spec-draft-cost", type=float, default=0.05, help="draft cost per token, as a fraction of a target step")
    add("--scheduler", choices=SCHEDULERS, default="continuous")
    add("--allocator", choices=ALLOCATORS, default="paged")
    add("--chunked-prefill", action="store_true", help="interleave prefill chunks with decode steps")
    add("--chunk-tokens", type=int, default=512, help="prefill chunk size")
    add("--max-output", type=int, default=0, help="longest output a contiguous allocator must reserve for")
    add("--objective", choices=OBJECTIVES, default="cost", help="what the levers are ranked on")
    add("--route-model", help="a smaller model to route easy requests to")
    add("--route-fraction", type=float, default=0.5, help="share of requests routed (default 0.5)")
    add("--fidelity", choices=FIDELITIES, default="floor",
        help="floor: the course's optimistic model; realistic: an estimate with named, sourced corrections "
             "(shown beside the floor); measured: step times from measured kernels (the optional extra "
             "'measured'), shown beside both")
    add("--draft-model", help="the speculative draft model (its weights and KV cache count in the realistic and "
                              "measured fidelities)")
    add("--catalog", action="append", default=[], metavar="TOML", help="extra catalog file with [models.*] / [gpus.*]")
    add("--json", action="store_true", help="print the JSON contract")
    add("--list", action="store_true", help="list catalog model and accelerator ids")


def _catalog(args):
    from engine.catalog import load_catalog

    extra = list(args.catalog)
    env = os.environ.get("RIDGE_CATALOG")
    if env:
        extra = [p for p in env.split(os.pathsep) if p] + extra
    return load_catalog(extra)


def run(args) -> int:
    from engine.deployment import build_deployment
    from engine.errors import RidgeError

    catalog = _catalog(args)
    if args.list:
        return _print_list(catalog, args.json)
    if args.config:
        from engine.hfconfig import load_config

        model = load_config(args.config)
    elif args.model:
        model = args.model
    else:
        raise RidgeError("give --model ID or --config PATH (see --list for ids)")
    dep = build_deployment(
        catalog, model, args.gpu, route_model=args.route_model,
        gpus=args.gpus, prompt=args.prompt, output=args.output, concurrency=args.concurrency,
        weights=args.weights, kv=args.kv, reserve_gib=args.reserve_gib, mfu=args.mfu, price=args.price,
        shared_prefix=args.shared_prefix, prefix_caching=args.prefix_caching, spec_k=args.spec_k,
        spec_alpha=args.spec_alpha, spec_draft_cost=args.spec_draft_cost, scheduler=args.scheduler,
        allocator=args.allocator, chunked_prefill=args.chunked_prefill, chunk_tokens=args.chunk_tokens,
        max_output=args.max_output, objective=args.objective, route_fraction=args.route_fraction,
        fidelity=args.fidelity, draft_model=args.draft_model,
    )
    from engine.levers import solve

    solution = solve(dep)
    if args.json:
        from engine.contract import solution_to_json

        print(json.dumps(solution_to_json(solution), indent=2, allow_nan=False))
    else:
        from engine.derivation import derivation_lines

        print("\n".join(derivation_lines(solution)))
    return 0


def _print_list(catalog, as_json: bool) -> int:
    if as_json:
        print(json.dumps({
            "models": {m.id: {"name": m.name, "params": m.params, "active_params": m.active_params,
                              "attention": m.attention_kind, "moe": m.is_moe, "context": m.context}
                       for m in catalog.models.values()},
            "gpus": {g.id: {"name": g.name, "memory_gib": g.memory_gib, "bandwidth_tbps": g.bandwidth_tbps,
                            "peak_tflops": g.peak_tflops, "link_gbps": g.link_gbps, "tp_domain": g.tp_domain,
                            "allreduce_latency_us": g.allreduce_latency_us} for g in catalog.gpus.values()},
        }, indent=2))
        return 0
    print("Models:")
    for m in catalog.models.values():
        kind = m.attention_kind.upper() + (" + MoE" if m.is_moe else "")
        print(f"  {m.id:<16} {m.name:<20} {m.params / 1e9:8.2f}B params  {kind:<10} {m.context:>7,} context")
    print("Accelerators:")
    for g in catalog.gpus.values():
        peaks = ", ".join(f"{k} {v:g}" for k, v in g.peak_tflops.items())
        print(f"  {g.id:<10} {g.name:<40} {g.memory_gib:>5g} GiB  {g.bandwidth_tbps:>5g} TB/s  TFLOP/s: {peaks}; "
              f"link {g.link_gbps:g} GB/s, tensor-parallel domain {g.tp_domain}")
    return 0

"""Load and tails: a request-level simulation of serving under traffic.

`spec` holds the inputs a run adds to a deployment (arrivals, lengths, scheduler settings, SLOs,
fleet); `workload` draws the traffic; `scheduler` runs one instance step by step; `run` feeds a
fleet and measures it; `sizing` finds the fewest GPUs that meet the SLOs. Step times come from
the engine's step model at the deployment's fidelity; memory from `engine.analysis`. Nothing
here imports Textual.
"""

"""The Lab: a toy serving stack run for real on this machine.

A small numpy transformer (`model`) is served by one loop (`servers`) with two schedulers and two
KV allocators (`blocks`, `kvcache`) over a seeded request stream (`workload`), next to this CPU's
measured roofline (`roofline`). `runner.run_lab` does it all and returns a JSON-ready dict;
`report` turns that into text. Nothing here imports Textual.
"""

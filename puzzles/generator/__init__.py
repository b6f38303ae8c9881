"""A seeded generator of unlimited, unambiguous puzzles at five difficulty levels.

Ids are `gen-s{seed}-d{difficulty}-{index:04d}`; each puzzle is drawn from its own
`random.Random(f"{seed}:{difficulty}:{index}")` (string seeds hash with SHA-512, the same on every
machine and Python 3.11+), so any id can be rebuilt alone, and no draw depends on hash() or on set
iteration order. Catalog ids are drawn from fixed tuples here, never from dict order.

How a puzzle is drawn:
1. A target (verdict, lever) is dealt from the targets reachable at that difficulty: one turn of
   the cycle gives every verdict an equal share and each verdict's levers in turn, and each turn
   is dealt in an order shuffled by the seed (`target_for`), so what a position asks changes
   with the seed while a long draw stays balanced.
2. The target's recipe draws a deployment steered towards it (model, GPUs, lengths, traffic,
   precisions, scheduler, allocator, prefix, routing, objective) and aims it with the engine
   (`aim`): the GPU count from the engine's memory rules, then the concurrency (or the prompt)
   at which the engine's own analysis names the target verdict with the level's margin and the
   recipe's bounds on the verdict rules' ratios hold. That report is the draw's; the offered
   levers are then solved.
3. A draw is kept only when it is unambiguous at the floor and at the realistic fidelity
   (`puzzles.keys.ambiguity` with the level's margins: every rule's ratio at least 10% from its
   threshold, the best lever at least 15% ahead of the runner-up at the floor and half that (in
   ratio, the square root) at the realistic fidelity, the realistic gain, which keys the band, at
   least 10% from a band edge; easier levels demand wider margins) and robust, by
   the very rule `ridge puzzles check` holds every pack to (`puzzles.keys.robustness_problems`):
   the same verdict and best lever at both fidelities, the band the realistic one, and no lever
   left unoffered (or ruled out in words, such as "no budget for more GPUs") within 2% of the
   offered best. Where realistic and measured still part (`DIVERGING`: 8-bit weights and KV,
   speculation, chunked prefill, routing, prefix caching), the realistic gain must also clear
   its band's edges by that regime's ratios, and no key rests on an 8-bit cache at 256-wide
   heads. After a bounded number of tries on the target, any such draw at that level is
   accepted instead. The measured kernels are never consulted, so a seed draws the same
   puzzles on every machine.
4. No draw spans more GPUs than the accelerator's tensor-parallel domain (`tp_limit`); the
   candidate reasons are the key's and three that are false for the deployment, in the fixed order.

Difficulty 1 is one dominant effect on common dense models and GPUs with the cost objective (routing
an easy share of traffic among them: it is what pays on a compute-bound step, where neither 8-bit
weights nor speculation do on real kernels); 5 adds mixture-of-experts and MLA models, large
multi-GPU deployments, quantized weights, speculation and every objective.

Modules: `ids` (ids and request limits), `levels` (levels, targets, the seeded deal), `picks`
(round numbers), `aim` (where a draw lands), `recipes` (one per target), `checks` (what is kept),
`card` (levers offered, asks, reasons), `words` (title, scenario, hints), `drawing` (make, generate).
"""
from __future__ import annotations

from puzzles.generator.checks import DIVERGING, diverges
from puzzles.generator.drawing import Generated, from_id, generate, iter_generated, make
from puzzles.generator.ids import MAX_COUNT, check_request, is_generated_id, parse_id, puzzle_id
from puzzles.generator.levels import LEVELS, TARGETS, VERDICT_ORDER, target_for, tp_limit
from puzzles.generator.recipes import RECIPES
from puzzles.generator.words import FIRST_HINT

__all__ = ["make", "generate", "iter_generated", "from_id", "parse_id", "puzzle_id", "is_generated_id",
           "check_request", "MAX_COUNT", "Generated", "LEVELS", "TARGETS", "VERDICT_ORDER", "RECIPES", "target_for",
           "tp_limit", "DIVERGING", "diverges", "FIRST_HINT"]

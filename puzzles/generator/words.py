"""The words of a drawn card: its title, the scenario told around the deployment, and the hints
that lead from the verdict to the lever."""
from __future__ import annotations

from engine.deployment import Deployment
from engine.ids import Allocator, Scheduler, Verdict

from puzzles import fmt
from puzzles.explain import verdict_fact
from puzzles.generator.picks import pick
from puzzles.keys import Key

def title(dep: Deployment) -> str:
    many = f"{dep.gpus} x " if dep.gpus > 1 else ""
    return f"{dep.model.name} on {many}{dep.gpu.name}"


def _who(rng, dep: Deployment) -> str:
    p, o, c = dep.prompt, dep.output, dep.concurrency
    if dep.shared_prefix and dep.shared_prefix >= 0.5 * p:
        return pick(rng, (
            f"An agent framework resends the same {fmt.num(dep.shared_prefix)}-token block of tool definitions at the top of every step",
            f"A batch classifier puts one {fmt.num(dep.shared_prefix)}-token rubric in front of each short item it grades",
            f"A support bot opens every conversation with the same {fmt.num(dep.shared_prefix)}-token system prompt",
        ))
    if c <= 2:
        return pick(rng, ("A developer runs a private coding assistant for themselves",
                           "One analyst uses a self-hosted model interactively",
                           "A researcher has the model to themselves for a writing session"))
    if p >= 4 * o and p >= 2000:
        return pick(rng, ("A contract-review service feeds long documents and asks for short findings",
                           "A search product answers questions over long retrieved passages",
                           "A summariser condenses long reports into a paragraph"))
    if o >= 3 * p:
        return pick(rng, ("A story-writing app turns short prompts into long drafts",
                           "A code generator writes whole files from a one-line request",
                           "A report writer expands a few notes into pages"))
    if p + o <= 700 and c >= 200:
        return pick(rng, ("A high-volume moderation endpoint answers in a few sentences",
                           "An autocomplete service handles a flood of short requests",
                           "A translation API serves many short snippets at once"))
    return pick(rng, ("A customer-support chatbot serves its users", "An internal question-answering tool serves staff",
                       "A chat product serves a steady stream of users"))


_CARE = {
    "cost": ("Finance wants the cost per million output tokens down.",
             "The question on the table is the bill: dollars per million output tokens.",
             "They pay by the GPU-hour and want more tokens for it."),
    "tpot": ("Users complain that answers stream slowly; time per output token is what matters.",
             "The product promises fast streaming, so TPOT for one user is the number to improve."),
    "ttft": ("Users wait too long for the first word; time to first token is what matters.",
             "The service is judged on how soon the first token appears."),
    "stall": ("Users see answers freeze mid-sentence whenever a long document arrives; the longest pause is what matters.",
              "Streams stutter: the worst pause between two tokens is the number to shrink."),
}


def scenario(rng, dep: Deployment, note: str = "") -> str:
    who = _who(rng, dep)
    where = f"{dep.gpus} x {dep.gpu.name}" if dep.gpus > 1 else f"one {dep.gpu.name}"
    setup = [f"{who}, using {dep.model.name} on {where}. Prompts average {fmt.num(dep.prompt)} tokens and "
             f"answers {fmt.num(dep.output)}; the traffic would keep {fmt.num(dep.concurrency)} "
             f"sequence{'s' if dep.concurrency != 1 else ''} in flight."]
    precision = f"Weights are stored in {dep.weights.upper()} and the KV cache in {dep.kv.upper()}."
    setup.append(precision)
    if dep.scheduler == Scheduler.NONE:
        setup.append("The server handles one request at a time.")
    elif dep.scheduler == Scheduler.STATIC:
        setup.append("The server forms fixed batches and runs each to completion before admitting more.")
    if dep.allocator == Allocator.CONTIGUOUS:
        setup.append("Each request gets one contiguous cache region sized for the longest answer it might give"
                     + (f" ({fmt.num(dep.max_output)} tokens)." if dep.max_output else "."))
    if dep.shared_prefix and not (dep.shared_prefix >= 0.5 * dep.prompt):
        setup.append(f"The first {fmt.num(dep.shared_prefix)} prompt tokens are the same for everyone.")
    if dep.route_model is not None:
        setup.append(f"An evaluation found that {fmt.pct(dep.route_fraction)} of requests are answered just as well "
                     f"by {dep.route_model.name}.")
    if dep.spec_alpha != 0.7:
        setup.append(f"A draft model for this traffic would see about {fmt.pct(dep.spec_alpha)} of its tokens accepted.")
    if note:
        setup.append(note)
    setup.append(pick(rng, _CARE[dep.objective]))
    return " ".join(setup)


FIRST_HINT = {
    Verdict.DOES_NOT_FIT: "Before anything else, add up the weights and the per-GPU reserve and compare them with the memory.",
    Verdict.KV_CAPACITY: "Work out how many sequences of the average length fit in the memory the weights leave.",
    Verdict.PREFILL_COMPUTE: "Compare the GPU time of one request's prefill with the time of all its decode steps.",
    Verdict.PREFILL_WEIGHTS: "Compare one prompt's arithmetic with the time it takes just to read the weights once.",
    Verdict.DECODE_COMPUTE: "Put the step's arithmetic intensity next to the ridge of this accelerator.",
    Verdict.DECODE_KV: "Per decode step, compare the bytes of weights read with the bytes of KV cache read.",
    Verdict.DECODE_WEIGHTS: "Per decode step, compare the bytes of weights read with the bytes of KV cache read.",
}
LAST_HINT = {
    "weights-overflow": "Only a lever that shrinks the weights or adds memory can make it fit; which does it cheaply?",
    "kv-overflow": "The weights fit; the cache for one request does not. Look at how that cache is allocated.",
    "kv-cap": "The lever to look for lets more sequences share the cache: smaller cache entries or more room.",
    "prefill-flops": "The lever to look for does less prefill arithmetic, or does it faster.",
    "at-ridge": "The arithmetic units are the limit now: faster arithmetic or more of it.",
    "kv-read": "The cache read dominates each step, so the lever must shrink that read.",
    "weight-read": "The weight read dominates each step; the lever must shrink it or share it across more tokens.",
    "idle-flops": "There is spare arithmetic on every step; which lever turns it into extra tokens?",
    "serial-requests": "Each weight read serves a single sequence; what would let it serve many?",
    "straggler-slots": "Look at what happens to a finished sequence's slot while its batch is still running.",
    "reserved-slots": "Compare the cache each request reserves with what it actually holds.",
    "recomputed-prefix": "Much of every prompt is identical; is that work being repeated?",
    "easy-traffic": "Not every request needs this model.",
    "prefill-stall": "The pause is one prompt's prefill done in a single piece; what if it were done in pieces between steps?",
    "prefill-weight-read": "A short prompt cannot keep the arithmetic busy; the wait is one read of the weights.",
}


def hints(key: Key) -> tuple[str, ...]:
    r = key.solution.report
    if key.bottleneck == Verdict.PREFILL_WEIGHTS:
        fact = (f"one {fmt.num(r.deployment.prompt)}-token prompt waits {fmt.secs(r.ttft_seconds)} for its first "
                f"token, about one read of the {fmt.gb(r.weight_bytes)} of weights")
    else:
        fact = verdict_fact(key.bottleneck, r)
    return (FIRST_HINT[key.bottleneck], f"Here {fact}.", LAST_HINT[key.reason])

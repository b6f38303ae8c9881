"""Generated puzzle ids, `gen-s{seed}-d{difficulty}-{index:04d}`, and the limits of one request:
any id names one draw, so it can be rebuilt alone."""
from __future__ import annotations

import re

from engine.errors import RidgeError

ID_RE = re.compile(r"^gen-s(\d{1,18})-d([1-5])-(\d{4,9})$")


def puzzle_id(seed: int, difficulty: int, index: int) -> str:
    return f"gen-s{seed}-d{difficulty}-{index:04d}"


def is_generated_id(text: str) -> bool:
    return text.startswith("gen-")


def parse_id(text: str) -> tuple[int, int, int]:
    match = ID_RE.match(text)
    if not match or puzzle_id(int(match.group(1)), int(match.group(2)), int(match.group(3))) != text:
        raise RidgeError(f"'{text}' is not a generated puzzle id (expected gen-s<seed>-d<1-5>-<index>, "
                         f"e.g. gen-s7-d3-0001)")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))



MAX_COUNT = 10_000  # puzzles one request may ask for: each takes milliseconds to make and key
MAX_INDEX = 10**9 - 1  # the last index an id can hold (ID_RE allows nine digits)


def check_request(seed: int, count: int, start: int = 0) -> None:
    """RidgeError (one line) unless every id `generate` would make for these is one `parse_id`
    reads back, and the count is one a caller can wait for."""
    if count < 0 or count > MAX_COUNT:
        raise RidgeError(f"count must be between 0 and {MAX_COUNT:,}, got {count:,}")
    if seed < 0 or seed >= 10**18:
        raise RidgeError(f"seed must be a whole number from 0 to 10^18 - 1, got {seed}")
    if start < 0 or start + max(count, 1) - 1 > MAX_INDEX:
        raise RidgeError(f"start must be from 0 to {MAX_INDEX:,} less the count (ids hold nine digits), got {start:,}")


"""The two ways of handing out KV memory: fixed-size blocks with reference counts, or one
contiguous range per request. Bookkeeping only; the key and value arrays live in `kvcache`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from engine.errors import RidgeError


class BlockAllocator:
    """Equal-size blocks with reference counts, so several block tables can point at one block.

    A block is free exactly when its count is zero. Sharing (`share`) bumps the count; a writer that
    finds its block shared must copy it first (`copy_on_write`), which is what lets sequences with a
    common prefix hold that prefix once.
    """

    def __init__(self, n_blocks: int) -> None:
        if n_blocks < 1:
            raise RidgeError(f"a block pool needs at least one block, got {n_blocks}")
        self.n_blocks = n_blocks
        self.refs = [0] * n_blocks
        self._free = list(range(n_blocks - 1, -1, -1))  # a stack: lowest ids handed out first

    @property
    def free_count(self) -> int:
        return len(self._free)

    @property
    def used_count(self) -> int:
        return self.n_blocks - len(self._free)

    def allocate(self) -> int:
        """Take one free block with a count of one; raise if the pool is empty."""
        if not self._free:
            raise RidgeError("no free KV blocks left")
        block = self._free.pop()
        self.refs[block] = 1
        return block

    def share(self, block: int) -> int:
        """Add an owner to a block already in use."""
        if self.refs[block] < 1:
            raise RidgeError(f"block {block} is free and cannot be shared")
        self.refs[block] += 1
        return block

    def release(self, block: int) -> None:
        """Drop one owner; the block returns to the pool when its last owner lets go."""
        if self.refs[block] < 1:
            raise RidgeError(f"block {block} released more often than it was owned")
        self.refs[block] -= 1
        if self.refs[block] == 0:
            self._free.append(block)

    def is_shared(self, block: int) -> bool:
        return self.refs[block] > 1

    def copy_on_write(self, block: int) -> tuple[int, bool]:
        """Return a block the caller may write: the same one when it owns it alone, otherwise a
        fresh block (the caller copies the contents) while the old one keeps its other owners."""
        if not self.is_shared(block):
            return block, False
        fresh = self.allocate()
        self.release(block)
        return fresh, True

    def check(self, owners: Iterable[Iterable[int]]) -> None:
        """Raise unless the counts equal the owners listed and free blocks are exactly the unowned."""
        counts = [0] * self.n_blocks
        for table in owners:
            for block in table:
                counts[block] += 1
        if counts != self.refs:
            raise RidgeError("block reference counts disagree with the block tables")
        free = set(self._free)
        if len(free) != len(self._free) or free != {b for b, n in enumerate(counts) if n == 0}:
            raise RidgeError("the free list holds a block that is in use, or holds one twice")


@dataclass(frozen=True, slots=True)
class Hole:
    start: int
    size: int


class RangeAllocator:
    """First-fit allocation of contiguous slot ranges, as a server without paging must do.

    Ranges of different sizes come and go, so free space splinters into holes; a request whose
    range fits in the total free space may still find no single hole large enough.
    """

    def __init__(self, n_slots: int) -> None:
        if n_slots < 1:
            raise RidgeError(f"a KV region needs at least one slot, got {n_slots}")
        self.n_slots = n_slots
        self._ranges: dict[int, int] = {}  # start -> size

    def holes(self) -> list[Hole]:
        out, cursor = [], 0
        for start in sorted(self._ranges):
            if start > cursor:
                out.append(Hole(cursor, start - cursor))
            cursor = start + self._ranges[start]
        if cursor < self.n_slots:
            out.append(Hole(cursor, self.n_slots - cursor))
        return out

    def fits(self, size: int) -> bool:
        return any(h.size >= size for h in self.holes())

    def allocate(self, size: int) -> int | None:
        """Start of the first hole that holds `size` slots, or None when no hole does."""
        if size < 1:
            raise RidgeError(f"a KV range needs at least one slot, got {size}")
        for hole in self.holes():
            if hole.size >= size:
                self._ranges[hole.start] = size
                return hole.start
        return None

    def release(self, start: int) -> None:
        if self._ranges.pop(start, None) is None:
            raise RidgeError(f"no KV range starts at slot {start}")

    @property
    def used_slots(self) -> int:
        return sum(self._ranges.values())

"""KV storage for the two allocation schemes, with the accounting the lab reports.

Both caches hold the same number of token slots. `ContiguousCache` reserves, per request, every
slot it could ever fill (prompt plus longest allowed answer). `PagedCache` hands out fixed-size
blocks as a sequence grows, lets sequences that share a system prompt point at the same blocks,
and copies a shared block only when one of them must write into it.

`sample` splits the pool, at one instant, into slots holding written keys and values, slots the
owner will still fill (reservation), slots it never will (internal fragmentation), and free slots
in holes too small for the request waiting at the head of the queue (external fragmentation).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import RidgeError
from engine.lab.blocks import BlockAllocator, RangeAllocator
from engine.lab.model import ModelConfig


@dataclass(frozen=True, slots=True)
class Occupancy:
    """One instant of the KV pool, in token slots."""

    used: int
    reservation: int
    internal: int
    external: int

    @property
    def allocated(self) -> int:
        return self.used + self.reservation + self.internal


def _final_kv_len(seq) -> int:
    """Keys and values a finished sequence holds: its prompt and every answer token but the last."""
    return seq.request.prompt_len + seq.request.output_len - 1


def _max_kv_len(request) -> int:
    """The most keys and values a request could ever hold: what a contiguous server reserves."""
    return request.prompt_len + request.max_output - 1


class _Arrays:
    def __init__(self, config: ModelConfig, shape: tuple[int, ...]) -> None:
        full = (config.n_layers, *shape, config.n_kv_heads, config.head_dim)
        self.k = np.zeros(full, dtype=np.float32)
        self.v = np.zeros(full, dtype=np.float32)


class ContiguousCache(_Arrays):
    """One range per request, sized to its longest possible sequence, kept until it finishes."""

    kind = "contiguous"
    shares_prefixes = False

    def __init__(self, config: ModelConfig, slots: int) -> None:
        super().__init__(config, (slots,))
        self.slots = slots
        self.ranges = RangeAllocator(slots)
        self._start: dict[int, int] = {}
        self.cow_copies = 0
        self.prefix_hits = 0

    def can_admit(self, request) -> bool:
        return self.ranges.fits(_max_kv_len(request))

    def can_ever_admit(self, request) -> bool:
        return _max_kv_len(request) <= self.slots

    def can_admit_all(self, requests) -> bool:
        """Whether the requests' reservations together fit in the free slots (the batch is full if not)."""
        return sum(_max_kv_len(r) for r in requests) <= self.slots - self.ranges.used_slots

    def open(self, seq) -> int:
        start = self.ranges.allocate(_max_kv_len(seq.request))
        if start is None:
            raise RidgeError(f"request {seq.request.id} does not fit in the KV region")
        self._start[seq.request.id] = start
        return 0

    def prepare(self, seq, end: int) -> bool:
        return True  # everything was reserved up front

    def publish_prefix(self, seq) -> None:
        pass

    def evict_prefixes(self) -> int:
        return 0

    def release(self, seq) -> None:
        self.ranges.release(self._start.pop(seq.request.id))

    def write(self, seq, layer: int, start: int, k: np.ndarray, v: np.ndarray) -> None:
        at = self._start[seq.request.id] + start
        self.k[layer, at:at + len(k)] = k
        self.v[layer, at:at + len(v)] = v

    def read(self, seq, layer: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        at = self._start[seq.request.id]
        return self.k[layer, at:at + length], self.v[layer, at:at + length]

    def sample(self, running, waiting) -> Occupancy:
        used = reservation = internal = 0
        for seq in running:
            final = _final_kv_len(seq)
            used += seq.kv_len
            reservation += final - seq.kv_len
            internal += _max_kv_len(seq.request) - final
        external = 0
        if waiting is not None:
            need = _max_kv_len(waiting)
            external = sum(h.size for h in self.ranges.holes() if h.size < need)
        return Occupancy(used, reservation, internal, external)

    def check(self, running) -> None:
        if self.ranges.used_slots != sum(_max_kv_len(s.request) for s in running):
            raise RidgeError("contiguous ranges disagree with the running sequences")


class PagedCache(_Arrays):
    """Fixed-size blocks, one block table per sequence, blocks handed out as the sequence grows.

    With `share_prefixes`, the blocks of a system prompt are kept in a small table keyed by its
    tokens (holding one reference), and later requests with the same prompt point at them.
    """

    kind = "paged"

    def __init__(self, config: ModelConfig, slots: int, block_size: int = 16,
                 share_prefixes: bool = True, watermark_blocks: int = 1) -> None:
        if block_size < 1 or slots < block_size:
            raise RidgeError(f"block size {block_size} must be at least 1 and at most the {slots} slots")
        n_blocks = slots // block_size
        super().__init__(config, (n_blocks, block_size))
        self.block_size = block_size
        self.slots = n_blocks * block_size
        self.blocks = BlockAllocator(n_blocks)
        self.filled = np.zeros(n_blocks, dtype=np.int64)  # slots written in each block
        self.tables: dict[int, list[int]] = {}
        self.prefixes: dict[tuple[int, ...], list[int]] = {}
        self.shares_prefixes = share_prefixes
        self.watermark = watermark_blocks
        self.cow_copies = 0
        self.prefix_hits = 0

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def _prefix_key(self, request) -> tuple[int, ...] | None:
        if not self.shares_prefixes or request.prefix_len == 0:
            return None
        return tuple(request.prompt[:request.prefix_len])

    def admission_blocks(self, request) -> int:
        """Fresh blocks a request takes to hold its prompt, counting the copy of a shared last block."""
        total = self._blocks_for(request.prompt_len)
        key = self._prefix_key(request)
        if key is None:
            return total
        partial = 1 if request.prefix_len % self.block_size else 0
        if key in self.prefixes:
            return total - request.prefix_len // self.block_size
        return total + partial

    def can_admit(self, request) -> bool:
        return self.admission_blocks(request) <= self.blocks.free_count - self.watermark

    def can_ever_admit(self, request) -> bool:
        """Whether the request could grow to its longest allowed answer in an otherwise empty pool."""
        return self._blocks_for(_max_kv_len(request)) <= self.blocks.n_blocks - self.watermark

    def can_admit_all(self, requests) -> bool:
        """Whether all the prompts fit now (roughly: each is costed as if alone)."""
        need = sum(self.admission_blocks(r) for r in requests)
        return need <= self.blocks.free_count - self.watermark

    def open(self, seq) -> int:
        """Start a block table; on a system-prompt hit it begins with the shared blocks."""
        key = self._prefix_key(seq.request)
        table: list[int] = []
        self.tables[seq.request.id] = table
        if key is not None and key in self.prefixes:
            table.extend(self.blocks.share(b) for b in self.prefixes[key])
            self.prefix_hits += 1
            return seq.request.prefix_len
        return 0

    def publish_prefix(self, seq) -> None:
        key = self._prefix_key(seq.request)
        if key is not None and key not in self.prefixes:
            table = self.tables[seq.request.id]
            self.prefixes[key] = [self.blocks.share(b) for b in table[:self._blocks_for(len(key))]]

    def evict_prefixes(self) -> int:
        """Drop the prefix table's references; returns how many blocks that set free."""
        before = self.blocks.free_count
        for blocks in self.prefixes.values():
            for b in blocks:
                self._drop(b)
        self.prefixes.clear()
        return self.blocks.free_count - before

    def _drop(self, block: int) -> None:
        self.blocks.release(block)
        if self.blocks.refs[block] == 0:
            self.filled[block] = 0

    def prepare(self, seq, end: int) -> bool:
        """Make positions kv_len..end-1 writable: copy a shared partly filled block, add blocks.
        Returns False, changing nothing, when the pool is short."""
        table, bs = self.tables[seq.request.id], self.block_size
        at = seq.kv_len // bs
        cow = seq.kv_len % bs != 0 and at < len(table) and self.blocks.is_shared(table[at])
        grow = max(0, self._blocks_for(end) - len(table))
        if cow + grow > self.blocks.free_count:
            return False
        if cow:
            old = table[at]
            new, _ = self.blocks.copy_on_write(old)
            self.k[:, new] = self.k[:, old]
            self.v[:, new] = self.v[:, old]
            self.filled[new] = seq.kv_len - at * bs  # only this sequence's own positions count
            table[at] = new
            self.cow_copies += 1
        table.extend(self.blocks.allocate() for _ in range(grow))
        return True

    def release(self, seq) -> None:
        for b in self.tables.pop(seq.request.id):
            self._drop(b)

    def swap_out(self, seq) -> tuple[np.ndarray, np.ndarray]:
        """Copy a sequence's keys and values out of the pool and free its blocks (preemption)."""
        idx = np.asarray(self.tables[seq.request.id])
        n = len(idx) * self.block_size
        shape = (self.k.shape[0], n, *self.k.shape[3:])
        saved = (self.k[:, idx].reshape(shape)[:, :seq.kv_len].copy(),
                 self.v[:, idx].reshape(shape)[:, :seq.kv_len].copy())
        self.release(seq)
        return saved

    def can_swap_in(self, seq) -> bool:
        return self._blocks_for(seq.kv_len + 1) <= self.blocks.free_count - self.watermark

    def swap_in(self, seq, saved: tuple[np.ndarray, np.ndarray]) -> None:
        table = [self.blocks.allocate() for _ in range(self._blocks_for(seq.kv_len))]
        self.tables[seq.request.id] = table
        for i, b in enumerate(table):
            lo, hi = i * self.block_size, min((i + 1) * self.block_size, seq.kv_len)
            self.k[:, b, :hi - lo] = saved[0][:, lo:hi]
            self.v[:, b, :hi - lo] = saved[1][:, lo:hi]
            self.filled[b] = hi - lo

    def write(self, seq, layer: int, start: int, k: np.ndarray, v: np.ndarray) -> None:
        table, bs = self.tables[seq.request.id], self.block_size
        i, n = 0, len(k)
        while i < n:
            pos = start + i
            b, off = table[pos // bs], pos % bs
            m = min(bs - off, n - i)
            self.k[layer, b, off:off + m] = k[i:i + m]
            self.v[layer, b, off:off + m] = v[i:i + m]
            if layer == 0:
                self.filled[b] = max(self.filled[b], off + m)
            i += m

    def read(self, seq, layer: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """Gather the sequence's blocks into one C-ordered (length, kv_heads, head_dim) copy."""
        table = self.tables[seq.request.id]
        idx = table[:self._blocks_for(length)]
        flat = (len(idx) * self.block_size, *self.k.shape[3:])
        return (self.k[layer, idx].reshape(flat)[:length], self.v[layer, idx].reshape(flat)[:length])

    def sample(self, running, waiting) -> Occupancy:
        bs = self.block_size
        used = int(self.filled.sum())
        reservation = 0
        for seq in running:
            table = self.tables[seq.request.id]
            last = table[-1]
            if not self.blocks.is_shared(last):
                room = min(bs, _final_kv_len(seq) - (len(table) - 1) * bs)
                reservation += max(0, room - int(self.filled[last]))
        internal = self.blocks.used_count * bs - used - reservation
        return Occupancy(used, reservation, internal, 0)  # any free block serves any request

    def check(self, running) -> None:
        owners = [self.tables[s.request.id] for s in running] + list(self.prefixes.values())
        if len(owners) != len(self.tables) + len(self.prefixes):
            raise RidgeError("a block table belongs to no running sequence")
        self.blocks.check(owners)

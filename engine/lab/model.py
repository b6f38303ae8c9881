"""A small decoder-only transformer in numpy whose token choices never depend on how it was batched.

Two servers that batch differently must still emit the same greedy tokens, but float sums inside a
BLAS library round differently depending on the kernel it picks (matrix-vector at batch 1, blocked
matrix-matrix above). So every dense layer here multiplies integers stored in float32: each row of
activations is scaled by its own largest magnitude onto the grid -127..127, weights are integers in
-31..31, and with at most 4096 terms every partial sum stays below 2**24, where float32 is exact in
any order. The weight read is still an ordinary float32 BLAS call, so decode stays bound by memory
bandwidth exactly as a real model's does. Attention runs per sequence, one position at a time,
through one function over the keys and values laid out in one C-ordered array, so it rounds
identically as well, whichever server ran it and whether the position was in a prompt or a decode.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from engine.errors import RidgeError

WEIGHT_LIMIT = 31  # weights are integers in [-31, 31]
ACT_LIMIT = 127  # activations are rounded onto [-127, 127] per row
EXACT_LIMIT = 2**24  # float32 represents every integer up to here


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Shape of the toy model; weights are drawn from `seed`, so the same config is the same model."""

    vocab: int = 2048
    d_model: int = 1024
    n_layers: int = 4
    n_heads: int = 16
    n_kv_heads: int = 4
    d_ff: int = 4096
    max_positions: int = 1024
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("vocab", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff", "max_positions"):
            if getattr(self, name) < 1:
                raise RidgeError(f"model {name} must be at least 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads or self.n_heads % self.n_kv_heads:
            raise RidgeError("model d_model must divide by n_heads, and n_heads by n_kv_heads")
        if self.head_dim % 2:
            raise RidgeError(f"model head_dim must be even for rotary positions, got {self.head_dim}")
        widest = max(self.d_model, self.d_ff)
        if widest * ACT_LIMIT * WEIGHT_LIMIT >= EXACT_LIMIT:
            raise RidgeError(f"model width {widest} is too wide for exact float32 sums (max 4261)")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def qkv_width(self) -> int:
        """Columns of the fused query/key/value projection: all query heads plus two per KV head."""
        return (self.n_heads + 2 * self.n_kv_heads) * self.head_dim

    @property
    def matmul_params(self) -> int:
        """Weights read by every decode step: the layers plus the output projection."""
        d = self.d_model
        per_layer = d * self.qkv_width + d * d + 2 * d * self.d_ff
        return self.n_layers * per_layer + d * self.vocab

    @property
    def weight_bytes(self) -> int:
        """float32 bytes one decode step streams from memory for the weights."""
        return 4 * self.matmul_params

    @property
    def kv_bytes_per_token(self) -> int:
        """Keys and values of one token across all layers, float32: 2 · layers · kv_heads · head_dim · 4."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * 4

    def decode_flops(self, batch: int) -> float:
        """FLOPs of one decode step by the usual convention: 2 · matmul params · batch."""
        return 2.0 * self.matmul_params * batch


class KVStore(Protocol):
    """Where a server keeps keys and values; the model only writes rows and reads a prefix back."""

    def write(self, seq: object, layer: int, start: int, k: np.ndarray, v: np.ndarray) -> None: ...

    def read(self, seq: object, layer: int, length: int) -> tuple[np.ndarray, np.ndarray]: ...


def _rows_to_grid(x: np.ndarray) -> np.ndarray:
    """Scale each row by its own largest magnitude and round onto the integer grid [-127, 127].

    The row maximum is exact in any order, so the result depends on nothing but the row itself.
    """
    peak = np.max(np.abs(x), axis=-1, keepdims=True)
    return np.rint(x * (ACT_LIMIT / np.maximum(peak, np.float32(1e-30))))


class ToyModel:
    """Seeded random weights, grouped-query attention, rotary positions, ReLU MLP, greedy sampling."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = c = config
        rng = np.random.default_rng(config.seed)

        def grid(rows: int, cols: int) -> np.ndarray:
            ints = rng.integers(-WEIGHT_LIMIT, WEIGHT_LIMIT + 1, size=(rows, cols), dtype=np.int8)
            return ints.astype(np.float32)

        self.layers = [
            (grid(c.d_model, c.qkv_width), grid(c.d_model, c.d_model),
             grid(c.d_model, c.d_ff), grid(c.d_ff, c.d_model))
            for _ in range(c.n_layers)
        ]
        self.unembed = grid(c.d_model, c.vocab)
        self.embedding = rng.standard_normal((c.vocab, c.d_model), dtype=np.float32)
        # Output scale that keeps each projection near unit size: 1 / (weight std · typical |x| · √K).
        weight_std = math.sqrt(((2 * WEIGHT_LIMIT + 1) ** 2 - 1) / 12)
        self._scale = {k: np.float32(1.0 / (weight_std * 40.0 * math.sqrt(k))) for k in {c.d_model, c.d_ff}}
        half = c.head_dim // 2
        freqs = 1.0 / (10000.0 ** (np.arange(half) / half))
        angles = np.outer(np.arange(c.max_positions), freqs)
        self._cos = np.cos(angles).astype(np.float32)
        self._sin = np.sin(angles).astype(np.float32)

    # -- pieces ---------------------------------------------------------------------------------
    def _dense(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Exact integer product of gridded rows and integer weights, scaled back to unit size."""
        return (_rows_to_grid(x) @ w) * self._scale[w.shape[0]]

    def _embed(self, tokens: np.ndarray) -> np.ndarray:
        return self.embedding[tokens]

    def _rotate(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Rotary position encoding on (rows, heads, head_dim), elementwise so it is exact per row."""
        half = self.config.head_dim // 2
        cos = self._cos[positions][:, None, :]
        sin = self._sin[positions][:, None, :]
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)

    def _split_qkv(self, h: np.ndarray, w: np.ndarray, positions: np.ndarray):
        c = self.config
        qkv = self._dense(h, w)
        nq, nk = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
        q = qkv[:, :nq].reshape(-1, c.n_heads, c.head_dim)
        k = qkv[:, nq:nq + nk].reshape(-1, c.n_kv_heads, c.head_dim)
        v = np.ascontiguousarray(qkv[:, nq + nk:]).reshape(-1, c.n_kv_heads, c.head_dim)
        return self._rotate(q, positions), self._rotate(k, positions), v

    def _attend(self, q: np.ndarray, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Grouped-query attention of one query (heads, head_dim) over C-ordered keys and values
        (length, kv_heads, head_dim), which hold exactly the positions it may see.

        Prefill and decode both come through here one position at a time, so a position's result
        is the same whether it was computed in a prompt chunk, in a decode step, or in any server.
        """
        c = self.config
        group = c.n_heads // c.n_kv_heads
        qg = q.reshape(c.n_kv_heads, group, c.head_dim)
        scores = np.matmul(qg, keys.transpose(1, 2, 0)) * np.float32(1.0 / math.sqrt(c.head_dim))
        scores -= scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        return np.matmul(weights, values.transpose(1, 0, 2)).reshape(c.d_model)

    def _mlp(self, h: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
        return self._dense(np.maximum(self._dense(h, w_up), 0), w_down)

    def _next_tokens(self, h: np.ndarray) -> np.ndarray:
        """Greedy choice; logits are exact integers, and ties go to the lowest token id."""
        return np.argmax(_rows_to_grid(h) @ self.unembed, axis=-1)

    # -- a forward pass ---------------------------------------------------------------------
    def forward(self, chunks: Sequence[tuple[Sequence[int], int, object]], store: KVStore) -> list[int]:
        """One pass over several sequences at once; each chunk is (tokens, start, seq): a prompt
        (or its part past a shared prefix) to prefill, or the one latest token of a decode.

        Every weight matrix is read once for all the rows of all the chunks; attention runs per
        sequence over its own history. Keys and values of the new positions are written to
        `store`; the greedy next token of each chunk is returned.
        """
        if not chunks:
            return []
        rows, positions, ends = [], [], []
        for tokens, start, _ in chunks:
            n = len(tokens)
            if n == 0 or start < 0 or start + n > self.config.max_positions:
                raise RidgeError(f"a chunk of {n} tokens at {start} is empty or past the model's positions")
            rows.extend(tokens)
            positions.extend(range(start, start + n))
            ends.append(len(rows) - 1)
        positions_arr = np.asarray(positions, dtype=np.int64)
        h = self._embed(np.asarray(rows, dtype=np.int64))
        for layer, (w_qkv, w_o, w_up, w_down) in enumerate(self.layers):
            q, k, v = self._split_qkv(h, w_qkv, positions_arr)
            mixed = np.empty_like(h)
            row = 0
            for tokens, start, seq in chunks:
                n = len(tokens)
                store.write(seq, layer, start, k[row:row + n], v[row:row + n])
                keys, values = store.read(seq, layer, start + n)
                for i in range(n):
                    mixed[row + i] = self._attend(q[row + i], keys[:start + i + 1], values[:start + i + 1])
                row += n
            h = h + self._dense(mixed, w_o)
            h = h + self._mlp(h, w_up, w_down)
        return self._next_tokens(h[ends]).tolist()

    def prefill(self, tokens: Sequence[int], start: int, seq: object, store: KVStore) -> int:
        """Prefill one chunk of prompt at positions start.. and return the token that follows it."""
        return self.forward([(tokens, start, seq)], store)[0]

    def decode(self, tokens: Sequence[int], positions: Sequence[int], seqs: Sequence[object],
               store: KVStore) -> list[int]:
        """One decode step for a batch: each sequence's latest token at its position."""
        return self.forward([([int(t)], int(p), s) for t, p, s in zip(tokens, positions, seqs)], store)

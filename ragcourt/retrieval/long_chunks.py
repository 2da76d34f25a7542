"""Chunks longer than the embedder's window: truncated, windowed or pooled.

A chunk is *over the window* when its length in the embedder's own tokens (its word pieces,
document prefix and special tokens included: :meth:`TextEncoder.token_counts`) exceeds the
model's window. ``embedders.<name>.long_chunks`` picks what happens to it:

* ``windows`` (default): one vector per overlapping window (``window_overlap`` tokens shared),
  all indexed under the chunk's row; retrieval scores a chunk by its best window,
  ``score(c) = max_w cos(q, w)``, and de-duplicates before the top k.
* ``pool``: one vector per chunk, the mean of its window vectors re-normalised to unit length.
* ``truncate``: one vector of the chunk as the model reads it, i.e. its first window only (the
  behaviour of a plain sentence-transformers ``encode``; kept for comparison).

A chunk within the window is embedded whole, once, under every strategy, so a corpus with no
long chunk costs the same whatever the setting.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, get_args

import numpy as np

from ragcourt.core.errors import RagcourtError
from ragcourt.retrieval.params import LongChunks

LONG_CHUNKS: tuple[str, ...] = get_args(LongChunks)


@dataclass(frozen=True)
class LongChunkStats:
    """What the embed stage did with one (chunking, embedder): window and chunks over it."""

    chunking: str
    embedder: str
    model: str
    strategy: str
    window: int  # tokens the model reads per text, in its own tokenizer
    overlap: int  # tokens shared by consecutive windows
    n_chunks: int
    n_over_window: int  # chunks longer than the window (truncated under 'truncate')
    max_tokens: int  # the longest chunk, in the model's tokens
    n_vectors: int  # rows of the index
    max_vectors_per_chunk: int

    @property
    def share_over_window(self) -> float:
        """n_over_window / n_chunks (0 for no chunks)."""
        return self.n_over_window / self.n_chunks if self.n_chunks else 0.0

    @property
    def handling(self) -> str:
        """How long chunks were represented: 'windowed', 'pooled', 'truncated' or 'whole'."""
        if not self.n_over_window:
            return "whole"
        return {"windows": "windowed", "pool": "pooled"}.get(self.strategy, "truncated")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "share_over_window": round(self.share_over_window, 6)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LongChunkStats:
        """The stats :meth:`to_json` wrote (its derived share left out)."""
        return cls(**{f.name: data[f.name] for f in fields(cls)})


def read_stats(path: Path) -> LongChunkStats:
    """A stats file written by the embed stage; a malformed one is one error line."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("share_over_window", None)
        return LongChunkStats(**data)
    except (OSError, ValueError, TypeError) as err:
        raise RagcourtError(f"{path}: not a long-chunk stats file ({err})") from None


@dataclass(frozen=True)
class ChunkVectors:
    """Vectors of a chunk list: ``owners[i]`` is the chunk (row in the list) of vector ``i``."""

    vectors: np.ndarray  # (n_vectors, dim) float32, unit rows
    owners: np.ndarray  # (n_vectors,) int64, non-decreasing
    window: int
    overlap: int
    token_counts: list[int]

    @property
    def n_over_window(self) -> int:
        return sum(n > self.window for n in self.token_counts)


def embed_chunks(
    model: str,
    texts: list[str],
    strategy: LongChunks,
    overlap: int,
    batch_size: int = 32,
    show_progress: bool = False,
) -> ChunkVectors:
    """Vectors of ``texts`` (document role) under ``strategy`` (module docstring)."""
    from ragcourt.retrieval.embedders import load_encoder

    if strategy not in LONG_CHUNKS:
        raise RagcourtError(f"long_chunks '{strategy}' is not one of {', '.join(LONG_CHUNKS)}")
    enc = load_encoder(model)
    counts = enc.token_counts(texts, "document")
    over = [n > enc.window for n in counts]
    if strategy == "truncate" or not any(over):
        vecs = enc.encode(texts, batch_size, show_progress, "document")
        return ChunkVectors(
            vecs, np.arange(len(texts), dtype=np.int64), enc.window, overlap, counts
        )
    pieces: list[str] = []
    owner: list[int] = []
    for i, (text, long) in enumerate(zip(texts, over, strict=True)):
        parts = enc.windows(text, overlap, "document") if long else [text]
        pieces += parts
        owner += [i] * len(parts)
    vecs = enc.encode(pieces, batch_size, show_progress, "document")
    cv = ChunkVectors(vecs, np.asarray(owner, dtype=np.int64), enc.window, overlap, counts)
    return pool_windows(cv) if strategy == "pool" else cv


def pool_windows(cv: ChunkVectors) -> ChunkVectors:
    """One vector per chunk: ``v(c) = Σ_w v_w / ‖Σ_w v_w‖`` over the chunk's windows."""
    n = len(cv.token_counts)
    pooled = np.zeros((n, cv.vectors.shape[1]), dtype=np.float64)
    np.add.at(pooled, cv.owners, cv.vectors)
    pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    vecs = np.ascontiguousarray(pooled, dtype=np.float32)
    return ChunkVectors(vecs, np.arange(n, dtype=np.int64), cv.window, cv.overlap, cv.token_counts)


def best_per_chunk(labels: np.ndarray, scores: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    """Per query row, the first ``k`` distinct labels of a best-first (label, score) list:
    each chunk once, at its best window's score (labels < 0, FAISS's 'no hit', skipped)."""
    out: list[list[tuple[int, float]]] = []
    for row_l, row_s in zip(labels.tolist(), scores.tolist(), strict=True):
        seen: dict[int, float] = {}
        for lab, sc in zip(row_l, row_s, strict=True):
            if lab >= 0 and lab not in seen:
                seen[lab] = float(sc)
                if len(seen) == k:
                    break
        out.append(list(seen.items()))
    return out

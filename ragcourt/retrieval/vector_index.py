"""The dense index of one (chunking, embedder): FAISS's own ``index_factory``, inner product.

``embedders.<e>.index`` is ``auto`` or any FAISS factory string (``Flat``, ``HNSW32``,
``IVF4096,PQ32``, ...), built with the inner-product metric (vectors are unit length, so inner
product is cosine) and wrapped in an ``IndexIDMap`` whose labels are chunk ordinals, so the
windows of a long chunk share their chunk's label whatever the index. ``auto`` is ``Flat``
(exact) up to ``index_flat_max`` vectors and ``HNSW32`` above (:func:`resolve_factory`; chosen
over IVF by the measurements in docs/results/scale.md: higher recall@10 at more queries/s and
no k-means training).

Builds are deterministic: a trained index (IVF, PQ, ...) learns from at most
:data:`TRAIN_SAMPLE` stored vectors drawn with ``index_seed`` (FAISS's k-means seeds are fixed);
vectors are added in stored order; an index with an HNSW graph is built on one thread (FAISS's
parallel HNSW insertion depends on thread timing). Search breadth is a setting:
``ef_search`` (HNSW efSearch) and ``nprobe`` (IVF), applied when the index is opened
(:func:`configure_search`).

:class:`IndexStats` is what the embed stage records (table ``index_stats``): the factory string,
build time, index bytes, and recall@10 of the index against exact search,
``recall@10 = mean_q |A_q ∩ E_q| / |E_q|`` over a seeded sample of stored vectors used as
queries, ``A_q`` / ``E_q`` the first 10 distinct chunks of the approximate / exact search.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ragcourt.core.errors import ConfigError
from ragcourt.core.schemas import frame_schema
from ragcourt.retrieval.long_chunks import best_per_chunk
from ragcourt.retrieval.params import EmbedderSpec

if TYPE_CHECKING:
    import faiss

TRAIN_SAMPLE = 262_144  # most stored vectors a trained index learns from (seeded draw)
RECALL_K = 10
FLAT = "Flat"
AUTO = "auto"
AUTO_APPROXIMATE = "HNSW32"  # what ``auto`` builds above index_flat_max (docs/results/scale.md)


def resolve_factory(spec: EmbedderSpec, n_vectors: int) -> str:
    """The factory string built for ``n_vectors`` vectors: ``spec.index``, or for ``auto``
    ``Flat`` up to ``spec.index_flat_max`` vectors and :data:`AUTO_APPROXIMATE` above."""
    if spec.index != AUTO:
        return spec.index.strip()
    return FLAT if n_vectors <= spec.index_flat_max else AUTO_APPROXIMATE


def _faiss_message(err: BaseException) -> str:
    """FAISS's reason on one line (its C++ message without the file/line preamble)."""
    text = " ".join(str(err).split())
    m = re.search(r"Error: '[^']*' failed(?:: (.*))?|(could not parse.*|.*not supported.*)", text)
    if m is not None:
        return next((g for g in m.groups() if g), text)[:200]
    return text[:200]


def new_index(factory: str, dim: int, key: str) -> faiss.Index:
    """An empty inner-product index of ``factory`` for ``dim``-d vectors, labelled by an
    ``IndexIDMap``; a string FAISS refuses is a one-line ConfigError naming ``key``."""
    import faiss

    if factory == FLAT:  # the exact index the pipeline has always written (same bytes)
        return faiss.IndexIDMap(faiss.IndexFlatIP(dim))
    if re.match(r"\s*IDMap", factory):
        raise ConfigError(f"{key}: '{factory}': leave out IDMap (chunk labels are added)")
    try:
        inner = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    except (RuntimeError, ValueError) as err:
        raise ConfigError(
            f"{key}: '{factory}' is not a FAISS index_factory string for {dim}-d vectors "
            f"({_faiss_message(err)})"
        ) from None
    return faiss.IndexIDMap(inner)  # the Python wrapper keeps ``inner`` alive


def check_factory(spec: EmbedderSpec, dim: int, key: str) -> None:
    """Fail early (one line naming ``key``) on an ``index`` string FAISS cannot build."""
    if spec.index != AUTO:
        new_index(spec.index.strip(), dim, key)


def inner_index(index: Any) -> Any:
    """The index an ``IndexIDMap`` wraps (downcast), or ``index`` itself."""
    import faiss

    return faiss.downcast_index(index.index) if hasattr(index, "id_map") else index


def has_hnsw(index: Any) -> bool:
    import faiss

    inner = inner_index(index)
    return hasattr(inner, "hnsw") or (
        isinstance(inner, faiss.IndexPreTransform)
        and hasattr(faiss.downcast_index(inner.index), "hnsw")
    )


def configure_search(index: Any, spec: EmbedderSpec) -> None:
    """Set HNSW ``efSearch`` and IVF ``nprobe`` from ``spec`` where the index has them."""
    import faiss

    space = faiss.ParameterSpace()
    inner = inner_index(index)
    if faiss.try_extract_index_ivf(inner) is not None:
        faiss.extract_index_ivf(inner).nprobe = spec.nprobe
    if has_hnsw(index):
        space.set_index_parameter(inner, "efSearch", spec.ef_search)


@contextlib.contextmanager
def one_thread_if(flag: bool) -> Iterator[None]:
    """Run the block on one OpenMP thread when ``flag`` (deterministic HNSW insertion)."""
    import faiss

    if not flag:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


@dataclass(frozen=True)
class IndexStats:
    """One row of table ``index_stats``: what the embed stage built for a (chunking, embedder)."""

    chunking: str
    embedder: str
    requested: str  # embedders.<e>.index as written ('auto' or a factory string)
    factory: str  # the factory string built
    metric: str
    n_vectors: int
    n_chunks: int
    dim: int
    build_s: float  # train + add, seconds
    index_bytes: int  # the written index file
    recall_at_10: float  # vs exact search (1.0 for Flat: exact by construction)
    recall_queries: int  # stored vectors used as queries (0 for Flat: not measured)
    ef_search: int
    nprobe: int
    seed: int

    def frame(self) -> pl.DataFrame:
        row = asdict(self)
        return pl.DataFrame({k: [v] for k, v in row.items()}, schema=frame_schema("index_stats"))


def exact_top(
    queries: np.ndarray, batches: Iterator[tuple[np.ndarray, np.ndarray]], depth: int
) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner-product top ``depth`` (scores, labels) per query over streamed
    ``(vectors, labels)`` batches; best first, ties by stored order."""
    m = len(queries)
    best_s = np.full((m, 0), -np.inf, dtype=np.float32)
    best_l = np.full((m, 0), -1, dtype=np.int64)
    for vecs, labels in batches:
        s = queries @ vecs.T
        lab = np.broadcast_to(labels, s.shape)
        all_s = np.concatenate([best_s, s], axis=1)
        all_l = np.concatenate([best_l, lab], axis=1)
        order = np.argsort(-all_s, axis=1, kind="stable")[:, :depth]
        best_s = np.take_along_axis(all_s, order, axis=1)
        best_l = np.take_along_axis(all_l, order, axis=1)
    return best_s, best_l


def recall_at(
    index: Any,
    queries: np.ndarray,
    exact: tuple[np.ndarray, np.ndarray],
    depth: int,
    k: int = RECALL_K,
) -> float:
    """``mean_q |A_q ∩ E_q| / |E_q|``: the first ``k`` distinct chunk labels of ``index``'s
    search (``depth`` vectors deep) against those of the exact ranking ``exact``."""
    if not len(queries):
        return 1.0
    scores, labels = index.search(np.ascontiguousarray(queries, dtype=np.float32), depth)
    approx = best_per_chunk(labels, scores, k)
    truth = best_per_chunk(exact[1], exact[0], k)
    shares = []
    for a, e in zip(approx, truth, strict=True):
        want = {lab for lab, _ in e}
        got = {lab for lab, _ in a}
        shares.append(len(want & got) / len(want) if want else 1.0)
    return float(np.mean(shares))

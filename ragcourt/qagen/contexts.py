"""Where QA generation draws its contexts from (spec §2), and few-shot example questions.

Contexts are chunks of ``qagen.reference_chunking`` in a seeded order (round-robin over
documents in a seeded order when ``stratify_by_document``); an item's ``context`` is the
document slice ``documents.text[char_start:char_end]`` of its chunk. Few-shot examples are
user questions read from ``qagen.few_shot_file``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.user_json import loads_user_json
from ragcourt.qagen.params import QAGenParams


def qagen_contexts(
    chunks: pl.DataFrame, documents: pl.DataFrame, q: QAGenParams, n: int | None = None
) -> pl.DataFrame:
    """:func:`sample_contexts` with the ``qagen`` params: ``n`` contexts (``max_attempts`` by
    default; the first ``n`` of a larger ``n`` are the same), ``seed``,
    ``stratify_by_document``, ``min_context_tokens``."""
    return sample_contexts(
        chunks,
        documents,
        n=q.max_attempts if n is None else n,
        seed=q.seed,
        stratify=q.stratify_by_document,
        min_tokens=q.min_context_tokens,
    )


def sample_contexts(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    *,
    n: int,
    seed: int,
    stratify: bool,
    min_tokens: int = 1,
) -> pl.DataFrame:
    """Up to ``n`` distinct chunks in a seeded order, with ``context`` = the document slice.

    Without ``stratify``: a seeded permutation of all eligible chunks. With it: documents in a
    seeded order, each document's chunks in a seeded order, then round-robin (one chunk per
    document per turn), so the first ``n_docs`` contexts cover every document. Chunks with
    fewer than ``min_tokens`` tokens are not eligible. The result does not depend on the
    input row order. Raises RagcourtError if a chunk's text is not its document slice.
    """
    eligible = chunks.filter(pl.col("n_tokens") >= min_tokens).sort("chunk_id")
    if eligible.is_empty():
        return _contexts_frame([])
    rng = np.random.default_rng(seed)
    if stratify:
        per_doc = eligible.partition_by("doc_id", as_dict=True, maintain_order=True)
        doc_ids = sorted(k[0] for k in per_doc)
        order_docs = [doc_ids[i] for i in rng.permutation(len(doc_ids))]
        queues: list[list[int]] = []
        positions = {cid: i for i, cid in enumerate(eligible["chunk_id"].to_list())}
        for d in order_docs:
            ids = per_doc[(d,)]["chunk_id"].to_list()
            queues.append([positions[ids[j]] for j in rng.permutation(len(ids))])
        order: list[int] = []
        for turn in range(max(len(q) for q in queues)):
            order.extend(q[turn] for q in queues if turn < len(q))
    else:
        order = rng.permutation(eligible.height).tolist()
    picked = eligible[order[:n]]
    texts = dict(zip(documents["doc_id"].to_list(), documents["text"].to_list(), strict=True))
    rows = []
    for r in picked.iter_rows(named=True):
        text = texts.get(r["doc_id"])
        if text is None:
            raise RagcourtError(f"chunk '{r['chunk_id']}': doc_id '{r['doc_id']}' not in documents")
        span = text[r["char_start"] : r["char_end"]]
        if span != r["text"]:
            raise RagcourtError(
                f"chunk '{r['chunk_id']}': text differs from its document slice "
                f"[{r['char_start']}:{r['char_end']}] (re-run the chunk stage)"
            )
        rows.append((r["chunk_id"], r["doc_id"], r["char_start"], r["char_end"], span))
    return _contexts_frame(rows)


def _contexts_frame(rows: list[tuple[str, str, int, int, str]]) -> pl.DataFrame:
    schema = {
        "source_chunk_id": pl.String,
        "doc_id": pl.String,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "context": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def load_few_shot(path: Path | str) -> list[str]:
    """Example user questions: .txt (one per line, '#' comments), .json (list of strings or
    of {"question": ...}), or .jsonl ({"question": ...} per line)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: qagen.few_shot_file not found")
    text = p.read_text(encoding="utf-8")
    items: list[Any]
    if p.suffix == ".json":
        try:
            items = loads_user_json(text)
        except ValueError as err:  # JSONDecodeError, or nested too deeply
            raise ConfigError(f"{p}: invalid JSON in qagen.few_shot_file ({err})") from None
    elif p.suffix == ".jsonl":
        items = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(loads_user_json(line))
            except ValueError as err:
                raise ConfigError(
                    f"{p}: line {n}: invalid JSON in qagen.few_shot_file ({err})"
                ) from None
    else:
        items = [ln.strip() for ln in text.splitlines()]
        items = [ln for ln in items if ln and not ln.startswith("#")]
    if not isinstance(items, list):
        raise ConfigError(f"{p}: qagen.few_shot_file must hold a list of questions")
    questions: list[str] = []
    for i, it in enumerate(items, start=1):
        q = it.get("question") if isinstance(it, dict) else it
        if not isinstance(q, str) or not q.strip():
            raise ConfigError(f"{p}: item {i}: expected a non-empty question string")
        questions.append(" ".join(q.split()))
    if not questions:
        raise ConfigError(f"{p}: qagen.few_shot_file holds no questions")
    return questions

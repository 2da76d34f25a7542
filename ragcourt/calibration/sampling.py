"""Stratified, seeded samples of answer items and passage items for human labelling.

Pure functions over the pipeline's frames (``qa``, ``answers``, ``verdicts``, ``correctness``,
``relevance`` as declared in :mod:`ragcourt.core.schemas`); nothing here reads or writes files.

**Answer items are sampled by question.** A sampled question contributes every system's answer
to it (answer rows with an ``error`` have nothing to label and are left out), so every system
is labelled on the same questions: the sample is balanced by system, and each pair of systems
can be compared on paired human labels (the paired PPI in :mod:`ragcourt.calibration.ppi`).
Questions are stratified by the judges' verdicts across systems (:func:`question_strata`):

* ``split``: the final DAFE verdicts differ between systems (the ranking hinges on them);
* ``uncertain``: the verdicts agree, but some answer's verdict needed the arbitrator, was
  degraded, or disagrees with its correctness score (``correctness >= threshold``);
* ``all_incorrect`` / ``all_correct``: unanimous and uncontested;
* ``unjudged``: no system has a final verdict.

**Passage items** are the (question, chunk) pairs the relevance judge graded, stratified by the
grade (``grade_2``, ``grade_1``, ``grade_0``); error rows (no grade) are not sampled.

**Allocation** (:func:`allocate`) assigns units one at a time, so the sample of a larger
budget always contains the smaller one's. First every stratum gets up to ``min_per_stratum``
units (2 by default), one per stratum in turn in the order above: every kind of verdict
pattern, the contested ones first, is labelled even on a small budget. The rest is

* ``proportional`` (default): D'Hondt, the next unit to the stratum with the largest
  N_h / (n_h + 1): close to proportional, so the weights below stay near 1 and PPI intervals
  stay as narrow as with a simple random sample (``benchmarks/ppi.py``);
* ``equal``: one unit per stratum in turn (equal allocation capped by the stratum size):
  small contested strata are over-sampled, which helps the agreement statistics, but the
  large strata where a lenient judge makes most of its errors get few labels, and PPI
  intervals then under-cover with few labels (``python -m benchmarks ppi --designs ... equal``).

Within a stratum, units are
taken in the order of ``sha256(seed, key)``: a seeded random order that does not depend on the
other rows, so the sample of a larger budget contains the smaller one's and a re-run on
unchanged data gives the same sample. Items are shown in the order of ``sha256(seed, item_id)``.

Over-sampling is undone at estimation time: a labelled question of stratum h gets weight
N_h / m_h (N_h questions in the stratum, m_h of them labelled; post-stratification), see
:func:`ragcourt.calibration.ppi.poststratified_weights`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

ANSWER_STRATA: tuple[str, ...] = ("split", "uncertain", "all_incorrect", "all_correct", "unjudged")
PASSAGE_STRATA: tuple[str, ...] = ("grade_2", "grade_1", "grade_0")

SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "item_id": pl.String(),  # 'a-<16 hex>' (answer) | 'p-<16 hex>' (passage); hides the system
    "kind": pl.String(),  # answer | passage
    "position": pl.Int64(),  # display order, 0-based
    "system": pl.String(),  # null for passage items
    "question_id": pl.String(),
    "chunk_id": pl.String(),  # null for answer items
    "question": pl.String(),
    "references": pl.List(pl.String()),  # empty for passage items
    "answer": pl.String(),  # null for passage items
    "abstained": pl.Boolean(),  # null for passage items
    "passage": pl.String(),  # null for answer items
    "content_sha": pl.String(),  # what the person saw; a label on other content is stale
    "stratum": pl.String(),
    "stratum_size": pl.Int64(),  # questions (answer items) or passages in the stratum
    "stratum_sampled": pl.Int64(),  # of them in this sample
}


class SampleParams(BaseModel):
    """How many items to sample, and the seed. ``None`` takes every item of that kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_answer_items: int | None = Field(default=120, ge=1)  # whole questions x all systems
    n_passage_items: int | None = Field(default=60, ge=0)
    seed: int = 0
    # correctness >= this counts as "correct" when a verdict is checked against it (strata)
    correctness_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    allocation: Literal["proportional", "equal"] = "proportional"  # after the floor
    min_per_stratum: int = Field(default=2, ge=0)  # the floor: units per stratum first


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def answer_item_id(system: str, question_id: str) -> str:
    """Stable id of the answer item (system, question); does not show the system name."""
    return "a-" + _sha("answer", system, question_id)[:16]


def passage_item_id(question_id: str, chunk_id: str) -> str:
    """Stable id of the passage item (question, chunk)."""
    return "p-" + _sha("passage", question_id, chunk_id)[:16]


def answer_content_sha(question: str, references: Sequence[str], answer: str) -> str:
    """Digest of what a person sees for an answer item (question, references, answer)."""
    return _sha("answer", question, *references, "\x1e", answer)[:16]


def passage_content_sha(question: str, passage: str) -> str:
    """Digest of what a person sees for a passage item (question, passage)."""
    return _sha("passage", question, passage)[:16]


def seeded_rank(seed: int, key: str) -> str:
    """The sort key of ``key`` in the seeded random order (hex digest of seed and key)."""
    return _sha(str(seed), key)


def allocate(
    sizes: Mapping[str, int],
    budget: int,
    order: Iterable[str],
    scheme: Literal["proportional", "equal"] = "proportional",
    min_per_stratum: int = 2,
) -> dict[str, int]:
    """Units per stratum for ``budget`` units over strata of ``sizes`` (module doc): first up
    to ``min_per_stratum`` per stratum in turn in ``order`` (strata absent from ``order`` come
    after, sorted), then ``scheme``. One unit at a time, so a larger budget never takes a unit
    away; the total is ``min(budget, sum(sizes))`` and no stratum exceeds its size."""
    names = [s for s in order if s in sizes] + sorted(set(sizes) - set(order))
    out = dict.fromkeys(names, 0)
    left = min(max(0, budget), sum(sizes.values()))
    for _ in range(max(0, min_per_stratum)):
        for s in names:
            if left and out[s] < sizes[s]:
                out[s] += 1
                left -= 1
    while left:
        if scheme == "equal":
            for s in names:
                if left and out[s] < sizes[s]:
                    out[s] += 1
                    left -= 1
        else:
            open_ = [s for s in names if out[s] < sizes[s]]
            best = max(open_, key=lambda s: (sizes[s] / (out[s] + 1), -names.index(s)))
            out[best] += 1
            left -= 1
    return out


def question_strata(
    verdicts: pl.DataFrame, correctness: pl.DataFrame | None, threshold: float = 0.5
) -> pl.DataFrame:
    """``question_id, stratum`` for every question in ``verdicts`` (see the module doc)."""
    v = verdicts.select("system", "question_id", "final_verdict", "resolution")
    if correctness is not None:
        c = correctness.filter(pl.col("error").is_null()).select(
            "system", "question_id", "correctness"
        )
        v = v.join(c, on=["system", "question_id"], how="left")
    else:
        v = v.with_columns(pl.lit(None, dtype=pl.Float64).alias("correctness"))
    contested = (
        pl.col("resolution").is_in(["arbitration", "degraded"])
        | (
            pl.col("final_verdict").is_not_null()
            & pl.col("correctness").is_not_null()
            & ((pl.col("correctness") >= threshold) != pl.col("final_verdict"))
        )
    ).fill_null(False)
    per_q = (
        v.with_columns(contested.alias("contested"))
        .group_by("question_id")
        .agg(
            pl.col("final_verdict").drop_nulls().any().alias("any_true"),
            (~pl.col("final_verdict").drop_nulls()).any().alias("any_false"),
            pl.col("contested").any().alias("contested"),
        )
    )
    return per_q.select(
        "question_id",
        pl.when(pl.col("any_true") & pl.col("any_false"))
        .then(pl.lit("split"))
        .when(~pl.col("any_true") & ~pl.col("any_false"))
        .then(pl.lit("unjudged"))
        .when(pl.col("contested"))
        .then(pl.lit("uncertain"))
        .when(pl.col("any_true"))
        .then(pl.lit("all_correct"))
        .otherwise(pl.lit("all_incorrect"))
        .alias("stratum"),
    ).sort("question_id")


def answer_population(
    qa: pl.DataFrame,
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame | None,
    correctness_threshold: float = 0.5,
) -> pl.DataFrame:
    """Every labellable answer item (answer without error, question in ``qa``) with its
    question's stratum; columns of :data:`SAMPLE_SCHEMA` less the sample counts/position."""
    strata = question_strata(verdicts, correctness, correctness_threshold)
    rows = (
        answers.filter(pl.col("error").is_null() & pl.col("answer").is_not_null())
        .select("system", "question_id", "answer", "abstained")
        .join(
            qa.select("question_id", "question", pl.col("reference_answers").alias("references")),
            on="question_id",
            how="inner",
        )
        .join(strata, on="question_id", how="left")
        .with_columns(pl.col("stratum").fill_null("unjudged"))
    )
    recs: list[dict[str, Any]] = []
    for r in rows.iter_rows(named=True):
        refs = [str(x) for x in (r["references"] or [])]
        recs.append(
            {
                "item_id": answer_item_id(r["system"], r["question_id"]),
                "kind": "answer",
                "system": r["system"],
                "question_id": r["question_id"],
                "chunk_id": None,
                "question": r["question"],
                "references": refs,
                "answer": r["answer"],
                "abstained": bool(r["abstained"]) if r["abstained"] is not None else None,
                "passage": None,
                "content_sha": answer_content_sha(r["question"], refs, r["answer"]),
                "stratum": r["stratum"],
            }
        )
    return _frame(recs, drop=("position", "stratum_size", "stratum_sampled"))


def passage_population(
    qa: pl.DataFrame, answers: pl.DataFrame, relevance: pl.DataFrame
) -> pl.DataFrame:
    """Every graded (question, chunk) pair whose passage text some system retrieved, with its
    grade stratum; error rows of ``relevance`` are left out."""
    texts = (
        answers.select("question_id", "retrieved")
        .explode("retrieved")
        .filter(pl.col("retrieved").is_not_null())
        .select(
            "question_id",
            pl.col("retrieved").struct.field("chunk_id").alias("chunk_id"),
            pl.col("retrieved").struct.field("text").alias("passage"),
        )
        .unique(subset=["question_id", "chunk_id"], keep="first", maintain_order=True)
    )
    rows = (
        relevance.filter(pl.col("relevance").is_not_null())
        .select("question_id", "chunk_id", "relevance")
        .join(texts, on=["question_id", "chunk_id"], how="inner")
        .join(qa.select("question_id", "question"), on="question_id", how="inner")
        .filter(pl.col("passage").is_not_null())
    )
    recs = [
        {
            "item_id": passage_item_id(r["question_id"], r["chunk_id"]),
            "kind": "passage",
            "system": None,
            "question_id": r["question_id"],
            "chunk_id": r["chunk_id"],
            "question": r["question"],
            "references": [],
            "answer": None,
            "abstained": None,
            "passage": r["passage"],
            "content_sha": passage_content_sha(r["question"], r["passage"]),
            "stratum": f"grade_{int(r['relevance'])}",
        }
        for r in rows.iter_rows(named=True)
    ]
    return _frame(recs, drop=("position", "stratum_size", "stratum_sampled"))


def _frame(recs: list[dict[str, Any]], drop: Sequence[str] = ()) -> pl.DataFrame:
    schema = {k: v for k, v in SAMPLE_SCHEMA.items() if k not in drop}
    return pl.DataFrame(recs, schema=schema)


def _take(
    pop: pl.DataFrame, unit: str, budget: int | None, order: Sequence[str], p: SampleParams
) -> pl.DataFrame:
    """The units (``unit`` column values) of ``pop`` chosen per stratum, with the counts."""
    units = pop.select(unit, "stratum").unique(subset=[unit], keep="first")
    sizes = {
        str(r["stratum"]): int(r["len"])
        for r in units.group_by("stratum").len().iter_rows(named=True)
    }
    total = sum(sizes.values()) if budget is None else budget
    alloc = allocate(sizes, total, order, p.allocation, p.min_per_stratum)
    chosen: list[str] = []
    for stratum, k in alloc.items():
        members = units.filter(pl.col("stratum") == stratum)[unit].to_list()
        members.sort(key=lambda u: seeded_rank(p.seed, str(u)))
        chosen.extend(members[:k])
    counts = pl.DataFrame(
        {
            "stratum": list(alloc),
            "stratum_size": [sizes[s] for s in alloc],
            "stratum_sampled": list(alloc.values()),
        },
        schema={"stratum": pl.String, "stratum_size": pl.Int64, "stratum_sampled": pl.Int64},
    )
    return pop.filter(pl.col(unit).is_in(chosen)).join(counts, on="stratum", how="left")


def sample_items(
    qa: pl.DataFrame,
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame | None,
    relevance: pl.DataFrame | None,
    params: SampleParams | None = None,
) -> pl.DataFrame:
    """The labelling sample (:data:`SAMPLE_SCHEMA`), in display order.

    ``n_answer_items`` is rounded down to whole questions (``n // n_systems``, at least one
    question): each sampled question brings every system's answer. ``relevance`` may be None
    (no passage items). The same inputs and params always give the same frame.
    """
    p = params or SampleParams()
    parts: list[pl.DataFrame] = []
    apop = answer_population(qa, answers, verdicts, correctness, p.correctness_threshold)
    if apop.height:
        n_sys = apop["system"].n_unique()
        n_q = None if p.n_answer_items is None else max(1, p.n_answer_items // n_sys)
        parts.append(_take(apop, "question_id", n_q, ANSWER_STRATA, p))
    if relevance is not None and p.n_passage_items != 0:
        ppop = passage_population(qa, answers, relevance)
        if ppop.height:
            parts.append(_take(ppop, "item_id", p.n_passage_items, PASSAGE_STRATA, p))
    if not parts:
        return _frame([])
    out = pl.concat([x.select([c for c in SAMPLE_SCHEMA if c != "position"]) for x in parts])
    ranks = [seeded_rank(p.seed, "order\x1f" + i) for i in out["item_id"].to_list()]
    out = (
        out.with_columns(pl.Series("_rank", ranks, dtype=pl.String))
        .sort("_rank")
        .drop("_rank")
        .with_row_index("position")
        .with_columns(pl.col("position").cast(pl.Int64))
    )
    return out.select(list(SAMPLE_SCHEMA))

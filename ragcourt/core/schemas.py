"""Parquet table schemas, all in one place.

Each table is a mapping column -> polars dtype. ``check`` verifies a frame has every column
with the declared dtype (extra columns are allowed) and raises SchemaError naming the file
and column. ``ARRAY_F32`` marks a fixed-size float32 array column of any width.
``frame_schema`` gives a table's dtypes typed for ``pl.DataFrame(schema=...)``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ragcourt.core.errors import ConfigError, SchemaError

ARRAY_F32 = "Array[Float32]"  # sentinel: fixed-size float32 array, width checked elsewhere

PolarsDtype = pl.DataType | type[pl.DataType]

RETRIEVED = pl.Struct(
    {
        "chunk_id": pl.String,
        "rank": pl.Int32,
        "score": pl.Float64,
        "doc_id": pl.String,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "text": pl.String,
    }
)

_PPI_ESTIMATE: dict[str, PolarsDtype | str] = {  # judge-only, human-only and PPI estimates
    "n_labeled": pl.Int64,  # labelled items (questions for pairs) used, with a judge value
    "n_unlabeled": pl.Int64,  # all items with a judge value (the labelled ones included)
    "lam": pl.Float64,  # λ: 1 = plain PPI; power-tuned (0 = judge ignored) if power_tuning
    "judge_mean": pl.Float64,  # label-free estimate (what the pipeline reports)
    "judge_lo": pl.Float64,
    "judge_hi": pl.Float64,
    "human_mean": pl.Float64,  # labels only (post-stratified)
    "human_lo": pl.Float64,
    "human_hi": pl.Float64,
    "ppi_mean": pl.Float64,  # prediction-powered: judge on all items, corrected by labels
    "ppi_lo": pl.Float64,
    "ppi_hi": pl.Float64,
    "width_ratio": pl.Float64,  # PPI interval width / human-only interval width
    "note": pl.String,  # why an estimate is missing, strata without labels, ...
}

# which form scored each QA filter: probability (P(yes)) | generated (JSON); null: not run
QA_FILTER_FORMS: dict[str, PolarsDtype | str] = {
    f"{name}_form": pl.String for name in ("answerability", "faithfulness", "relevance")
}

# qagen.method and the answer-first record (null for the agents method and a bring-your-own
# file): the span's document offsets, its type, its sentence, the reader's round-trip phrase
# and token F1 against the span, the closed-book reader's phrase
QA_ANSWER_FIRST: dict[str, PolarsDtype | str] = {
    "method": pl.String,  # 'agents' | 'answer_first'
    "answer_start": pl.Int64,
    "answer_end": pl.Int64,
    "answer_type": pl.String,
    "long_reference": pl.String,
    "reader_answer": pl.String,
    "roundtrip_f1": pl.Float64,
    "closed_book_answer": pl.String,
}

# provenance and filter record shared by ``qa`` and ``qa_rejected`` (same names, same dtypes)
QA_PROVENANCE: dict[str, PolarsDtype | str] = {
    "source_chunk_id": pl.String,
    "reference_chunking": pl.String,
    "attempt_index": pl.Int32,
    "answerability_score": pl.Float64,
    "answerability_reason": pl.String,
    "faithfulness_score": pl.Float64,
    "faithfulness_reason": pl.String,
    "relevance_score": pl.Float64,
    "relevance_reason": pl.String,
    **QA_FILTER_FORMS,
    "question_model": pl.String,
    "answer_model": pl.String,
    "filter_model": pl.String,
    "prompt_version": pl.String,
    "filter_prompt_version": pl.String,
    **QA_ANSWER_FIRST,
}

TABLES: dict[str, dict[str, PolarsDtype | str]] = {
    "documents": {
        "doc_id": pl.String,
        "path": pl.String,
        "title": pl.String,
        "format": pl.String,
        "text": pl.String,
        "n_chars": pl.Int64,
        "duplicate_of": pl.String,  # null unless an exact duplicate of another doc_id
        "language": pl.String,  # ISO 639-1 code detected at ingest ("und": no letters)
        "language_confidence": pl.Float64,  # the detector's probability of that language
    },
    "rejected_documents": {
        "path": pl.String,
        "reason": pl.String,
    },
    "chunks": {
        "chunk_id": pl.String,
        "chunking": pl.String,
        "doc_id": pl.String,
        "chunk_index": pl.Int32,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "n_tokens": pl.Int32,
        "text": pl.String,
    },
    "embeddings": {
        "chunk_id": pl.String,
        "embedding": ARRAY_F32,
    },
    "index_stats": {  # the dense index the embed stage built (ragcourt.retrieval.vector_index)
        "chunking": pl.String,
        "embedder": pl.String,
        "requested": pl.String,  # embedders.<e>.index as written ('auto' or a factory string)
        "factory": pl.String,  # the FAISS index_factory string built
        "metric": pl.String,
        "n_vectors": pl.Int64,
        "n_chunks": pl.Int64,
        "dim": pl.Int64,
        "build_s": pl.Float64,  # train + add, seconds
        "index_bytes": pl.Int64,
        "recall_at_10": pl.Float64,  # vs exact search on a seeded sample (1.0 for Flat)
        "recall_queries": pl.Int64,  # stored vectors used as queries (0: Flat, not measured)
        "ef_search": pl.Int64,
        "nprobe": pl.Int64,
        "seed": pl.Int64,
    },
    "retrieval_run": {
        "query_id": pl.String,
        "chunk_id": pl.String,
        "rank": pl.Int32,
        "score": pl.Float64,
        "retriever": pl.String,
    },
    "qa": {
        "question_id": pl.String,
        "question": pl.String,
        "reference_answers": pl.List(pl.String),
        "doc_id": pl.String,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "context": pl.String,
        # provenance and filter record (qagen; a bring-your-own file gets nulls, origin 'byo')
        "candidate_id": pl.String,
        "origin": pl.String,  # 'generated' | 'byo'
        **QA_PROVENANCE,
    },
    "qa_rejected": {
        "candidate_id": pl.String,
        "failed_filter": pl.String,  # first failing check, e.g. 'faithfulness', 'answer_error'
        "reason": pl.String,
        "raw_output": pl.String,  # model text of a failed generation/parse, else null
        "duplicate_of": pl.String,  # question_id kept instead (duplicate filters), else null
        "question": pl.String,
        "answer": pl.String,
        "doc_id": pl.String,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "context": pl.String,
        **QA_PROVENANCE,
    },
    "retrieval_per_query": {
        "chunking": pl.String,
        "embedder": pl.String,  # null for BM25 (embedder-independent)
        "retriever": pl.String,
        "query_id": pl.String,
        "measure": pl.String,  # ir-measures name, e.g. 'R@5', 'RR@10', 'nDCG@5'
        "value": pl.Float64,
    },
    "retrieval_summary": {
        "chunking": pl.String,
        "chunk_size": pl.Int64,
        "chunk_overlap": pl.Int64,
        "embedder": pl.String,
        "retriever": pl.String,
        "measure": pl.String,
        "metric": pl.String,  # measure name without the cutoff, e.g. 'R'
        "k": pl.Int64,
        "value": pl.Float64,  # mean over queries
        "std": pl.Float64,
        "n_queries": pl.Int64,  # questions in the mean (those with >= 1 relevant chunk)
        "n_unevaluable": pl.Int64,  # QA questions with no relevant chunk here: not in the mean
    },
    "answers": {
        "system": pl.String,
        "question_id": pl.String,
        "answer": pl.String,
        "abstained": pl.Boolean,
        "retrieved": pl.List(RETRIEVED),
        "query_variants": pl.List(pl.String),
        "latency_s": pl.Float64,
        "prompt_tokens": pl.Int64,
        "completion_tokens": pl.Int64,
        "model": pl.String,  # the generator model string the answer came from
        "error": pl.String,  # null, or why this (system, question) has no answer
        # true: the answer call was replayed from the reply cache (latency_s is the replay's,
        # not a measurement; latency statistics leave the row out); null: not known
        "cached": pl.Boolean,
    },
    # Judging (ragcourt.judging, stage judge). DAFE roles: primary1, primary2, arbitrator;
    # resolution: agreement | arbitration | degraded (one primary failed, the other two
    # agreed) | error. A row with ``error`` set has a null final verdict: never counted.
    "verdicts": {
        "system": pl.String,
        "question_id": pl.String,
        "abstained": pl.Boolean,
        **{
            f"{role}_{col}": dtype
            for role in ("primary1", "primary2", "arbitrator")
            for col, dtype in (
                ("judge", pl.String),
                ("verdict", pl.Boolean),
                ("score", pl.Float64),
                ("justification", pl.String),
                ("error", pl.String),
                ("form", pl.String),  # LLM judges: probability | generated; else null
            )
        },
        "agree": pl.Boolean,  # null when a primary failed
        "arbitrator_called": pl.Boolean,
        "final_verdict": pl.Boolean,
        "resolution": pl.String,
        "error": pl.String,
    },
    "correctness": {  # RAGalyst 0-1 rubric; the tournament reads exactly these columns
        "system": pl.String,
        "question_id": pl.String,
        "correctness": pl.Float64,
        "rationale": pl.String,
        "error": pl.String,
        "form": pl.String,  # probability | generated (LLM grader); null: similarity, no LLM
        "grading_method": pl.String,  # ragcourt.llm.grading_methods; null: no LLM
    },
    "relevance": {  # RAGElo pointwise grade, one row per (question_id, chunk_id)
        "question_id": pl.String,
        "chunk_id": pl.String,
        "doc_id": pl.String,
        "n_systems": pl.Int32,  # systems that retrieved this passage for this question
        "relevance": pl.Int8,  # 0 not / 1 somewhat / 2 very relevant; null on error
        "relevance_expected": pl.Float64,  # sum_g P(g)*g (probability form); = grade otherwise
        "form": pl.String,  # probability | generated
        "grading_method": pl.String,  # logits | label_probe | ... (ragcourt.llm.grading_methods)
        "reason": pl.String,
        "error": pl.String,
        "model": pl.String,
        "prompt_version": pl.String,
    },
    "passage_utility": {  # UDCG u = R·(1 − P(NO-RESPONSE)) per passage in some top k
        "question_id": pl.String,
        "chunk_id": pl.String,
        "relevance": pl.Int8,
        "relevant": pl.Boolean,
        "p_no_response": pl.Float64,
        "p_method": pl.String,  # grading method of P (ragcourt.llm.grading_methods)
        "utility": pl.Float64,
        "error": pl.String,
    },
    "udcg": {  # per (system, question); lists are in rank order over the top k
        "system": pl.String,
        "question_id": pl.String,
        "n_passages": pl.Int32,
        "chunk_ids": pl.List(pl.String),
        "relevant": pl.List(pl.Boolean),
        "p_no_response": pl.List(pl.Float64),
        "p_methods": pl.List(pl.String),  # grading method of each P (llm.grading_methods)
        "utilities": pl.List(pl.Float64),
        "udcg": pl.Float64,
        "error": pl.String,
    },
    "judge_per_question": {  # every per-(system, question) measure; k = judge.udcg.k
        "system": pl.String,
        "question_id": pl.String,
        "abstained": pl.Boolean,
        "final_verdict": pl.Boolean,
        "correctness": pl.Float64,
        "outcome": pl.Int8,  # 2 correct, 1 abstained, 0 wrong (UDCG's ideal context order)
        "udcg": pl.Float64,
        "udcg_theta": pl.Float64,  # out-of-fold; null when not fitted
        "rr1_at5": pl.Float64,  # RAGElo relevance >= 1 (somewhat or very)
        "rr2_at5": pl.Float64,  # RAGElo relevance >= 2 (very)
        "relevance_unjudged": pl.Int32,
        "ndcg_at_k": pl.Float64,  # span-rule qrels (spec §1), ir-measures
        "rr_at_k": pl.Float64,
        "recall_at_k": pl.Float64,
        "precision_at_k": pl.Float64,
    },
    "system_summary": {
        "system": pl.String,
        "n_questions": pl.Int64,
        "n_verdicts": pl.Int64,
        "verdict_errors": pl.Int64,
        "arbitrator_calls": pl.Int64,
        "accuracy": pl.Float64,  # mean final DAFE verdict over non-error rows
        "correctness_mean": pl.Float64,
        "correctness_errors": pl.Int64,
        "abstention_rate": pl.Float64,
        "mrr1_at5": pl.Float64,
        "mrr2_at5": pl.Float64,
        "relevance_unjudged": pl.Int64,
        "udcg_mean": pl.Float64,
        "udcg_errors": pl.Int64,
        "ndcg_at_k": pl.Float64,
        "rr_at_k": pl.Float64,
        "recall_at_k": pl.Float64,
        "precision_at_k": pl.Float64,
    },
    "metric_correlation": {  # retrieval metric vs end-to-end target over (system, question)
        "metric": pl.String,  # column of judge_per_question
        "label": pl.String,  # e.g. "nDCG@5, span rule"
        "target": pl.String,  # correctness | final_verdict | outcome
        "n": pl.Int64,
        "spearman": pl.Float64,
        "spearman_se": pl.Float64,  # sqrt((1 + rho²/2) / (n − 3))
        "spearman_p": pl.Float64,
        "kendall_tau_b": pl.Float64,
        "kendall_se": pl.Float64,  # sqrt(0.437 / (n − 4))
        "kendall_p": pl.Float64,
    },
    # DICE tournament (ragcourt.tournament, stage tournament). Orders: "ab" = system_a shown
    # as A, "ba" = system_b shown as A (so p_ba_a is the probability given to system_b's slot).
    "pairwise": {
        "system_a": pl.String,  # canonical orientation: system_a < system_b
        "system_b": pl.String,
        "question_id": pl.String,
        "judge": pl.String,
        "p_ab_a": pl.Float64,
        "p_ab_b": pl.Float64,
        "p_ab_tie": pl.Float64,
        "p_ba_a": pl.Float64,
        "p_ba_b": pl.Float64,
        "p_ba_tie": pl.Float64,
        "p_a": pl.Float64,  # combined over both orders, for system_a / system_b / tie
        "p_b": pl.Float64,
        "p_tie": pl.Float64,
        "margin": pl.Float64,  # ΔP = P_max - P_second of the combined probabilities (the
        # hard/soft threshold it is compared with is summary.json margin_threshold)
        "scheme": pl.String,  # hard | soft (null on error)
        "score_a": pl.Float64,
        "score_b": pl.Float64,
        "rationale_ab": pl.String,
        "rationale_ba": pl.String,
        "error": pl.String,  # null, or why this judgement failed (excluded from scores)
        "in_swiss": pl.Boolean,
        "in_round_robin": pl.Boolean,
    },
    "matches": {
        "tournament": pl.String,  # swiss | round_robin
        "round": pl.Int64,
        "system_a": pl.String,
        "system_b": pl.String,  # null: a bye for system_a
        "n_questions": pl.Int64,  # valid judgements in the match
        "n_errors": pl.Int64,
        "score_a": pl.Float64,
        "score_b": pl.Float64,
        "elo_a_before": pl.Float64,
        "elo_b_before": pl.Float64,
        "expected_a": pl.Float64,
        "k": pl.Float64,  # effective (upset-weighted) K
        "elo_a_after": pl.Float64,
        "elo_b_after": pl.Float64,
    },
    "leaderboard": {
        "rank": pl.Int64,
        "system": pl.String,
        "elo": pl.Float64,  # Swiss Elo, bootstrap CI over questions
        "elo_lo": pl.Float64,
        "elo_hi": pl.Float64,
        "bt": pl.Float64,  # Bradley-Terry on all judged pairs, Elo scale
        "bt_lo": pl.Float64,
        "bt_hi": pl.Float64,
        "wins": pl.Int64,  # Swiss match outcomes
        "ties": pl.Int64,
        "losses": pl.Int64,
        "matches": pl.Int64,  # wins + ties + losses: Swiss matches with a valid judgement
        "failed_matches": pl.Int64,  # Swiss matches where every judgement failed (not scored)
        "elo_rr": pl.Float64,  # round-robin Elo (null when round_robin is off)
    },
    # calibrate: human labels vs the judges (ragcourt/calibration)
    "calibration_agreement": {
        "judge": pl.String,  # judge name (dafe, correctness, relevance, a DAFE judge's name)
        "role": pl.String,  # primary1 | primary2 | arbitrator | final | correctness | relevance
        "target": pl.String,  # answer_correct (binary human label) | passage_grade (0/1/2)
        "n": pl.Int64,  # labelled items the judge scored ("can't tell" and conflicts excluded)
        "accuracy": pl.Float64,
        "accuracy_lo": pl.Float64,
        "accuracy_hi": pl.Float64,
        "kappa": pl.Float64,
        "kappa_lo": pl.Float64,
        "kappa_hi": pl.Float64,
        "spearman": pl.Float64,  # graded score vs human label; null for a label-only judge
        "spearman_lo": pl.Float64,
        "spearman_hi": pl.Float64,
        "low_agreement": pl.Boolean,  # kappa < the warning threshold (default 0.4)
    },
    "calibration_ppi_systems": {
        "system": pl.String,
        "predictor": pl.String,  # dafe | correctness | <judge name> (a DAFE primary)
        "role": pl.String,  # final | correctness | primary1 | primary2
        **_PPI_ESTIMATE,
    },
    "calibration_ppi_pairs": {
        "system_a": pl.String,  # system_a < system_b
        "system_b": pl.String,
        "target": pl.String,  # accuracy_diff (acc_a − acc_b) | win_rate (DICE, of system_a)
        "predictor": pl.String,  # dafe | correctness | <judge name> | tournament
        "null_value": pl.Float64,  # no difference: 0 (accuracy_diff) or 0.5 (win_rate)
        **_PPI_ESTIMATE,
        "ppi_excludes_null": pl.Boolean,  # the PPI interval excludes null_value
        "judge_excludes_null": pl.Boolean,
    },
}

# one round of the live race (stage race): the tournament's pairwise rows of that round's pairs
TABLES["race_pairwise"] = {
    **{k: v for k, v in TABLES["pairwise"].items() if not k.startswith("in_")},
    "race_round": pl.Int32,
}


HEADINGS = pl.List(pl.Struct({"start": pl.Int64, "level": pl.Int32, "title": pl.String}))
SOURCE_MAP = pl.List(
    pl.Struct(
        {
            "text_start": pl.Int64,
            "text_end": pl.Int64,
            "source_start": pl.Int64,
            "source_end": pl.Int64,
            "kind": pl.String,  # copied | placed | generated
        }
    )
)

#: columns a table may have: dtype-checked when present, absent from tables written before
#: they existed or built by hand (tests, plug-ins); the ingest and chunk stages always write
#: them (null where a format has none). See ragcourt.corpus.markup_map.
OPTIONAL_COLUMNS: dict[str, dict[str, PolarsDtype]] = {
    "documents": {
        "headings": HEADINGS,  # rendered reST/Markdown: heading lines (text offset, depth, text)
        "source_map": SOURCE_MAP,  # text spans -> source file spans (null: HTML, PDF)
    },
    "chunks": {
        "section": pl.String,  # headings enclosing the chunk's start, "json › Basic Usage"
        "source_start": pl.Int64,  # the chunk's span in the source file (null: no map)
        "source_end": pl.Int64,
    },
}


def _dtype_ok(actual: pl.DataType, expected: PolarsDtype | str) -> bool:
    if expected == ARRAY_F32:
        return isinstance(actual, pl.Array) and actual.inner == pl.Float32
    return actual == expected


#: the table schemas of a project's own stages, by project root (see :func:`register_table`)
_PROJECT_TABLES: dict[Path, dict[str, dict[str, PolarsDtype | str]]] = {}


def register_table(root: Path, name: str, columns: dict[str, PolarsDtype | str]) -> None:
    """Add the schema of a table a project's own stage writes (its ``StageDef.tables``) for
    the project at ``root``; a name already used by another schema is a ConfigError."""
    own = _PROJECT_TABLES.setdefault(root.resolve(), {})
    known = TABLES.get(name) or own.get(name)
    if known is not None and known != columns:
        raise ConfigError(f"table schema '{name}' is already defined differently")
    own[name] = dict(columns)


def _columns(table: str) -> dict[str, PolarsDtype | str]:
    """A built-in table's schema, or one of the working directory's project (SchemaError)."""
    found = TABLES.get(table) or _PROJECT_TABLES.get(Path.cwd().resolve(), {}).get(table)
    if found is None:
        raise SchemaError(f"unknown table schema '{table}'")
    return found


def check(df: pl.DataFrame, table: str, source: Path | str) -> pl.DataFrame:
    """Raise SchemaError if ``df`` lacks a column of ``table`` or has a wrong dtype (an
    optional column is checked when present)."""
    optional = OPTIONAL_COLUMNS.get(table, {})
    for col, expected in {**_columns(table), **optional}.items():
        if col not in df.columns:
            if col in optional:
                continue
            raise SchemaError(f"{source}: missing column '{col}' (table '{table}')")
        actual = df.schema[col]
        if not _dtype_ok(actual, expected):
            raise SchemaError(
                f"{source}: column '{col}' has dtype {actual}, expected {expected} "
                f"(table '{table}')"
            )
    return df


def frame_schema(table: str) -> dict[str, PolarsDtype]:
    """``TABLES[table]`` as a polars schema (the same dtype objects, in order); SchemaError for
    a table with an ``ARRAY_F32`` column, whose width is not declared."""
    out: dict[str, PolarsDtype] = {}
    for col, dtype in _columns(table).items():
        if isinstance(dtype, str):
            raise SchemaError(f"table '{table}': column '{col}' has no fixed dtype ({dtype})")
        out[col] = dtype
    return out


def empty(table: str) -> pl.DataFrame:
    """An empty frame with ``table``'s declared columns (array columns become Float32 lists)."""
    cols: dict[str, PolarsDtype] = {
        c: pl.Array(pl.Float32, 1) if isinstance(t, str) else t for c, t in _columns(table).items()
    }
    return pl.DataFrame(schema=cols)


def check_one_row_per_answer(table: pl.DataFrame, where: str, what: str) -> None:
    """SchemaError ``<where>: duplicate <what> for system 's', question 'q'`` naming the first
    (system, question_id) of ``table`` that has more than one row."""
    dup = table.filter(pl.struct("system", "question_id").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise SchemaError(
            f"{where}: duplicate {what} for system '{row['system']}', question "
            f"'{row['question_id']}'"
        )

"""The tables the qagen stage writes (:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import Columns, PolarsDtype

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


TABLES: dict[str, Columns] = {
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
}

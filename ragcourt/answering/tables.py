"""The tables the answer stage writes (:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import RETRIEVED, Columns

TABLES: dict[str, Columns] = {
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
}

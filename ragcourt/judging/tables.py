"""The tables the judge, judge_retrieval and judge_summary stages write
(:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import Columns

TABLES: dict[str, Columns] = {
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
}

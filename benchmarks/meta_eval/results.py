"""What the meta-evaluation writes: one judge configuration's result, the known-order run, and
the gold run (pydantic models, dumped as the ``--out`` JSON)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ragcourt.calibration import gold_squad as gs


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GapPoint(_Model):
    """Elo gap better − worse on ``questions`` questions, its bootstrap interval, verdict."""

    questions: int
    better: str
    worse: str
    elo_gap: float
    lo: float | None
    hi: float | None
    verdict: str
    separated: bool


class Calls(_Model):
    requests: int  # gateway requests (cache hits included)
    model_calls: int  # executed by a model (cache misses)
    model_time_s: float


class ConfigResult(_Model):
    name: str
    tournament_judge: str
    correctness_mode: str | None
    judge_model: str
    questions: int
    elo: dict[str, float]
    pairs: dict[str, bool]  # "a>b" -> Elo order matches
    pairwise_accuracy: float
    kendall_tau_b: float | None
    curve: list[GapPoint]
    # questions (as a string: a JSON key) -> Elo of the curve's tournament on that many questions
    curve_elo: dict[str, dict[str, float]] = {}
    calls: Calls
    wall_s: float


class MetaEval(_Model):
    corpus: str
    documents: int
    generation_model: str
    qa_items: int
    qagen_attempts: int  # 0: the QA set is a hand-written file (qa_source)
    qa_source: str | None = None  # None: synthetic (qagen); else the --gold-quotes file
    profile: str | None = None  # the params profile written into the temp project
    prepare_wall_s: dict[str, float]
    prepare_calls: Calls
    configs: list[ConfigResult]


class GoldAgreement(_Model):
    """ragcourt's Elo (one judge configuration, ``questions`` generated questions) vs the
    true score. ``significant_*``: over the pairs whose human-F1 order is significant (paired
    bootstrap over the human questions, :func:`benchmarks.gold_squad.truth_pairs`; F1 only)."""

    config: str
    questions: int
    truth: str  # "f1" | "em"
    controls: bool  # the known-quality controls (oracle, random, shuffled) included
    systems: int
    kendall_tau_b: float | None
    pairs_agree: int
    pairs: int  # pairs the truth orders (truth ties excluded)
    pairwise_agreement: float | None
    significant_pairs: int | None = None
    significant_agree: int | None = None
    significant_tau_b: float | None = None


class GoldQAGen(_Model):
    model: str
    requested: int
    max_attempts: int
    accepted: int
    attempts: int
    stop_reason: str
    rejections: dict[str, int]


class GoldMetaEval(_Model):
    squad_file: str
    squad_sha256: str
    seed: int
    articles: list[str]
    paragraphs: int  # in the corpus
    document_chars: list[int]
    dropped_questions: int  # human questions whose answer could not be located
    human_questions: int
    generation_model: str  # llm.model: the generators of the systems but one
    strong_model: str
    judge_model: str
    qagen: GoldQAGen
    systems: list[dict[str, Any]]  # name, retriever, chunking, top_k, fusion, generator
    true_scores: list[gs.SystemScore]
    truth_pairs: list[gs.TruthPair] = []
    configs: list[ConfigResult]
    agreement: list[GoldAgreement]
    question_stats: dict[str, gs.QuestionStats]
    wall_s: dict[str, float]
    calls: dict[str, Calls]

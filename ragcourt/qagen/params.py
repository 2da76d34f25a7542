"""The ``qagen`` section of ``params.yaml``: QA generation and its filters."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
)

from ragcourt.core.params import (
    NonEmptyStr,
    Strict,
)
from ragcourt.llm.params import LLMView
from ragcourt.retrieval.params import RetrievalView


class QAGenThresholds(Strict):
    """A QA filter passes when its score >= the threshold: P(yes) in the probability form of
    filter prompt v2, the label's 1/0 in its generated form, the JSON score with v1 (where
    answerability is 0/1 and the others a 0-1 share). Not tuned: calibrate on a train split."""

    # answerability: the trained judge's kappa-best threshold on its training folds (``ragcourt
    # judges show``); faithfulness / relevance: P(yes) >= 0.5, the even odds of filter prompt v2
    answerability: float = Field(default=0.62, ge=0, le=1)
    faithfulness: float = Field(default=0.5, ge=0, le=1)
    relevance: float = Field(default=0.5, ge=0, le=1)


class QAGenFilterKinds(Strict):
    """The QA-filter kind (:data:`ragcourt.qagen.filter_registry.QA_FILTERS`) playing each
    filter role; the roles are these fields, in the order QA generation runs them. Null: the
    kind registered as the role's default (``ragcourt kinds qa_filter`` marks it)."""

    answerability: NonEmptyStr | None = None
    faithfulness: NonEmptyStr | None = None
    relevance: NonEmptyStr | None = None


AnswerTypeExtractor = Literal["auto", "spacy", "rules"]
InPlaceLanguage = Literal["zh"]  # languages with a rule that asks in place (qagen.in_place_zh)


def _in_place_by_default() -> list[InPlaceLanguage]:
    return ["zh"]


class AnswerFirstParams(Strict):
    """``qagen.method: answer_first``: answer spans are chosen in each sampled chunk (spaCy
    entities, numbers, dates, noun phrases), a writer asks for each span and a reader answers
    from the chunk alone; a pair is kept when the reader's answer matches the span (SQuAD token
    F1 >= ``roundtrip_f1``). Prompts: the ``answer_first_*`` templates of
    ``qagen.prompt_version``. ``extractor``: ``spacy`` (the English pipeline of the
    ``spacy-en`` extra), ``rules`` (regexes on spaCy's blank English tokenizer), ``auto`` (the
    pipeline when installed, else the rules)."""

    extractor: AnswerTypeExtractor = "auto"
    spans_per_chunk: StrictInt = Field(default=3, gt=0, le=50)  # candidates per sampled chunk
    # false: a chunk's spans come from its best span tier only (answer_spans.span_tier), so a
    # chunk of lone names gives fewer candidates and more chunks are read; true: lower tiers
    # fill up to spans_per_chunk
    fill_lower_tiers: StrictBool = False
    # a span named in >= this share of its document's chunks is the document's topic: it
    # joins the noun phrases' tier (answer_spans.demote_frequent); 1 turns it off
    frequent_span_share: float = Field(default=0.25, gt=0, le=1)
    # the writer sees the document's title (file stem, ``_``/``-`` as spaces) to name the
    # subject (the speaker, the year, the place) that the chunk leaves implicit
    document_titles: StrictBool = True
    max_answer_words: StrictInt = Field(default=5, gt=0, le=30)
    roundtrip_f1: float = Field(default=0.6, ge=0, le=1)  # reader answer vs span: keep at >=
    max_copied_words: StrictInt = Field(default=7, gt=0)  # longest word run shared with chunk
    closed_book_check: StrictBool = False  # reject when the reader without the chunk finds it
    gate: StrictBool = True  # the rule filters of the QA quality gate (no model call)
    judges: StrictBool = False  # the qagen.filter_kinds filters (answerability, ...) after it
    reader_max_tokens: StrictInt = Field(default=24, gt=0)
    # questions written per span (try 0 greedy, the others sampled at resample_temperature, seed
    # llm.seed + try); the tries passing the lexical checks (standalone, answer not in it, no
    # long copy of the chunk) go on
    writer_tries: StrictInt = Field(default=3, ge=1, le=10)
    resample_temperature: float = Field(default=0.7, ge=0, le=2)
    # true: every distinct passing try is read back (one batch) and the first that round-trips
    # is kept; false: only the first passing try is read back
    read_back_every_try: StrictBool = True
    # who reads each question back: ``reader`` (the trained reading model: answerable at its
    # threshold and its span matches; no LLM call), ``llm`` (qagen.answer_model answers with a
    # phrase) or ``both`` (the reader, then the LLM for the pairs the reader accepts)
    round_trip: Literal["reader", "llm", "both"] = "llm"
    # the reader's pass mark for P(answerable); null: its fitted threshold (ragcourt judges show)
    reader_threshold: float | None = Field(default=None, ge=0, le=1)
    # languages whose questions are built in place by rule from the span's sentence, with no
    # writer call (zh: Chinese asks in place, ragcourt.qagen.in_place_zh); the questions keep
    # the sentence's words, so the copy check (max_copied_words) does not apply to them
    ask_in_place: list[InPlaceLanguage] = Field(default_factory=_in_place_by_default)
    # true: a Chinese question asked in place that the trained standalone probe passes is tried
    # first, the others held in reserve (ragcourt.qagen.standalone_probe: Qwen2.5-Coder-1.5B
    # reads each question; the order: ragcourt.qagen.answer_first.IN_PLACE_ORDER)
    standalone_probe: StrictBool = True
    # true: a Chinese question asked in place opens by citing its document's title and news
    # dateline (据《title》（１月１９日）报道，……; ragcourt.qagen.source_frame_zh)
    in_place_frame: StrictBool = True


class QAGenParams(Strict):
    reference_chunking: NonEmptyStr = "c256"
    n_items: StrictInt = Field(default=12, gt=0, le=1_000_000)
    max_attempts: StrictInt = Field(default=36, gt=0, le=10_000_000)
    stratify_by_document: StrictBool = True
    seed: StrictInt = 13
    # the answer-first writer and round-trip reader (null: llm.model)
    question_model: str | None = "local/qwen2.5-coder-1.5b"
    answer_model: str | None = "local/qwen2.5-coder-1.5b"
    filter_model: str | None = None
    few_shot_file: str | None = None
    thresholds: QAGenThresholds = Field(default_factory=QAGenThresholds)
    near_duplicate_threshold: float = Field(default=0.9, gt=0, le=1)
    near_duplicate_embedder: str | None = None  # key of `embedders`; None: the first one
    prompt_version: str = "v4-titled"  # writer prompts (configs/prompts/qagen.yaml)
    filter_prompt_version: str = "v2"  # QA filter prompts (configs/prompts/qagen_filters.yaml)
    filter_reason: StrictBool = False  # v2 filters: generated form with a reason, not P(yes)
    filter_kinds: QAGenFilterKinds = Field(default_factory=QAGenFilterKinds)
    # each QA-filter kind's own settings, by kind (validated against the model the kind
    # registered, ragcourt.core.registry; `ragcourt kinds qa_filter` lists them)
    filter_settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    qa_file: str | None = None  # bring-your-own QA set: validated and used instead
    batch_size: StrictInt = Field(default=8, gt=0)  # candidates per generation round (concurrency)
    min_context_tokens: StrictInt = Field(default=40, ge=1)  # shorter chunks are not sampled
    few_shot_k: StrictInt = Field(default=3, ge=0)  # example questions shown per candidate
    question_max_tokens: StrictInt = Field(default=64, gt=0)
    answer_max_tokens: StrictInt = Field(default=128, gt=0)
    judge_max_tokens: StrictInt = Field(default=160, gt=0)
    short_circuit: StrictBool = True  # a judge runs only on candidates the earlier judges passed
    # agents: the agents write a question per chunk, then an answer; answer_first: a span first,
    # a question for it, kept on a round trip (qagen.answer_first)
    method: Literal["agents", "answer_first"] = "answer_first"
    answer_first: AnswerFirstParams = Field(default_factory=AnswerFirstParams)


class TrainedWeightsRef(Protocol):
    """What QA generation reads of the ``judge`` section: the trained judges' weights folder."""

    trained_weights: str | None


class QAGenView(RetrievalView, LLMView, Protocol):
    """The params QA generation reads: retrieval's and llm's views, ``qagen`` and
    ``judge.trained_weights``."""

    qagen: QAGenParams

    @property
    def judge(self) -> TrainedWeightsRef: ...

"""The one params model: ``params.yaml`` parsed and validated by pydantic.

Every stage calls :func:`load_params`; a wrong key, wrong type or missing file raises
:class:`~ragcourt.core.errors.ParamsError` with a one-line message naming the file and key.
The defaults here are the values ``params.yaml`` ships (a unit test holds the two equal), so
a key left out of a user's file means what the demo runs. Role-specific model fields set to
``null`` fall back to ``llm.model``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from ragcourt.core.catalog import (
    DEFAULT_CORPUS_DIR,
    DEFAULT_LABELS_DIR,
    DEFAULT_METRICS_DIR,
    DEFAULT_MODELS_FILE,
    DEFAULT_PARAMS_FILE,
    DEFAULT_SYSTEMS_FILE,
)
from ragcourt.core.errors import ParamsError
from ragcourt.core.names import case_collision, check_safe_name
from ragcourt.core.user_yaml import read_user_yaml

DEFAULT_PARAMS_PATH = Path(DEFAULT_PARAMS_FILE)

#: ``json_schema_extra`` of a setting that changes how a stage runs, never what it writes
#: (concurrency, timeouts, retries, the reply cache): DVC does not track it
#: (:func:`tracked_keys`), so changing it re-runs nothing
RUNTIME: dict[str, Any] = {"runtime": True}


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# A string that must say something (a model, a path, a name): empty or blank is an error.
NonEmptyStr = Annotated[str, AfterValidator(_not_blank)]

MAX_TIMEOUT_S = 3600.0
"""Upper bound of every timeout and retry delay (params and systems.yaml): one hour."""
# A timeout: finite, > 0 and at most MAX_TIMEOUT_S (`.inf` or 1e9 would wait forever).
TimeoutS = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]
# A delay before a retry: finite, >= 0 and at most MAX_TIMEOUT_S.
DelayS = Annotated[float, Field(ge=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]
_EXTENSION_RE = re.compile(r"\.[a-z0-9][a-z0-9_+-]*")


class Strict(BaseModel):
    """Base: unknown keys are errors, values are validated on assignment, floats are finite.
    Integer and boolean fields are ``StrictInt``/``StrictBool``: ``"3"`` or ``true`` for a count
    is refused rather than coerced."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


class CorpusParams(Strict):
    """``extensions`` are normalised: lower-cased, a missing leading dot added (``txt`` ->
    ``.txt``). The ``max_*``, ``html_max_depth``, ``file_timeout_s`` and ``parse_memory_mb``
    keys are each file's budget: a file past one is a rejected row naming the key (docs:
    troubleshooting, Limits)."""

    dir: NonEmptyStr = DEFAULT_CORPUS_DIR
    extensions: list[str] = Field(
        default_factory=lambda: [".txt", ".md", ".rst", ".html", ".htm", ".pdf"], min_length=1
    )
    max_file_bytes: StrictInt = Field(default=50_000_000, ge=1_000, le=10_000_000_000)
    max_file_chars: StrictInt = Field(default=10_000_000, ge=1_000, le=1_000_000_000)
    max_pdf_pages: StrictInt = Field(default=5_000, ge=1, le=1_000_000)
    html_max_depth: StrictInt = Field(default=512, ge=16, le=10_000)
    file_timeout_s: TimeoutS = 120.0
    parse_memory_mb: StrictInt = Field(default=2_048, ge=64, le=1_000_000)

    @field_validator("extensions")
    @classmethod
    def _normalise_extensions(cls, value: list[str]) -> list[str]:
        out = []
        for ext in value:
            norm = ext.strip().lower()
            norm = norm if norm.startswith(".") else f".{norm}"
            if not _EXTENSION_RE.fullmatch(norm):
                raise ValueError(f"extension {ext!r} is not a file extension (write e.g. '.txt')")
            out.append(norm)
        return out


class ChunkSpec(Strict):
    """Token-based chunking: ``size`` tokens per chunk with ``overlap`` tokens shared."""

    size: StrictInt = Field(gt=0)
    overlap: StrictInt = Field(ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkSpec:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


LongChunks = Literal["windows", "pool", "truncate"]


class EmbedderSpec(Strict):
    """An embedder: ``model`` is a key of configs/models.yaml ``embedders``. A chunk longer than
    the model's window (in its own tokens) is embedded per ``long_chunks``: ``windows`` (every
    overlapping window indexed, a chunk scored by its best), ``pool`` (mean of the windows) or
    ``truncate`` (first window only); ``window_overlap`` tokens are shared by two windows."""

    model: NonEmptyStr
    batch_size: StrictInt = Field(default=32, gt=0, le=100_000)
    long_chunks: LongChunks = "windows"
    window_overlap: StrictInt = Field(default=32, ge=0, le=4096)
    # the vector index: 'auto' (exact Flat up to index_flat_max vectors, HNSW32 above) or any
    # FAISS index_factory string ('Flat', 'HNSW32', 'IVF4096,PQ32', ...), inner-product
    # metric, checked by FAISS before the embed stage embeds anything
    index: NonEmptyStr = "auto"
    index_flat_max: StrictInt = Field(default=100_000, ge=0)
    # search-time breadth of an approximate index: HNSW efSearch, IVF nprobe
    ef_search: StrictInt = Field(default=128, gt=0, le=100_000)
    nprobe: StrictInt = Field(default=32, gt=0, le=1_000_000)
    # trained indexes (IVF, PQ) learn from a seeded sample; recall@10 against exact search is
    # measured on index_recall_queries stored vectors drawn with the same seed
    index_seed: StrictInt = Field(default=0, ge=0)
    index_recall_queries: StrictInt = Field(default=200, ge=0, le=100_000)
    # chunks read, embedded and written per step of the embed stage (bounded memory)
    stream_chunks: StrictInt = Field(default=4096, gt=0, le=10_000_000)

    def identity(self) -> dict[str, object]:
        """The fields a system's config hash holds: every field, less the index and streaming
        fields left at their defaults (the built index is a hashed input file already), so a
        system hashed before those fields existed keeps its hash."""
        out = self.model_dump()
        for name in _INDEX_FIELDS:
            if out[name] == type(self).model_fields[name].default:
                del out[name]
        return out


_INDEX_FIELDS = (
    "index", "index_flat_max", "ef_search", "nprobe", "index_seed", "index_recall_queries",
    "stream_chunks",
)  # fmt: skip


class RelevanceRule(Strict):
    """Span-overlap rule (spec §1): a chunk is relevant to a ground-truth span when the overlap
    covers >= ``min_span_coverage`` of the span OR >= ``min_chunk_coverage`` of the chunk."""

    min_span_coverage: float = Field(default=0.5, gt=0, le=1)
    min_chunk_coverage: float = Field(default=0.5, gt=0, le=1)


class BM25Params(Strict):
    method: Literal["robertson", "lucene", "bm25l", "bm25+", "atire"] = "lucene"
    k1: float = Field(default=1.5, ge=0, le=100)
    b: float = Field(default=0.75, ge=0, le=1)
    stopwords: str | None = "en"  # bm25s stopword list ("en") or null
    stemmer: str | None = "english"  # PyStemmer language, or null for no stemming
    # auto: per document / query language (English: the regex tokenizer with the stopwords and
    # stemmer above; Chinese: jieba; Japanese/Korean: character bigrams); regex | jieba | bigram:
    # that tokenizer for every text (ragcourt.retrieval.bm25_tokens)
    tokenizer: Literal["auto", "regex", "jieba", "bigram"] = "auto"


class RetrievalParams(Strict):
    # kinds of the retriever registry (ragcourt.retrieval.retrieve.RETRIEVERS), checked there
    retrievers: list[NonEmptyStr] = Field(
        default_factory=lambda: ["dense", "bm25", "hybrid"], min_length=1
    )
    rrf_k: StrictInt = Field(default=60, gt=0)
    depth: StrictInt = Field(default=10, gt=0)
    ks: list[Annotated[StrictInt, Field(ge=1, le=100_000)]] = Field(
        default_factory=lambda: [1, 3, 5, 10], min_length=1
    )
    relevance: RelevanceRule = Field(default_factory=RelevanceRule)
    bm25: BM25Params = Field(default_factory=BM25Params)
    # each retriever kind's own settings, by kind (validated against the model the kind
    # registered, ragcourt.core.registry; `ragcourt kinds retriever` lists them)
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)


_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SamplingValue = StrictBool | StrictInt | float | str


def _env_name(value: str | None) -> str | None:
    if value is not None and not _ENV_NAME_RE.fullmatch(value):
        raise ValueError(f"'{value}' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
    return value


def _http_base(value: str | None) -> str | None:
    if value is not None and not re.match(r"https?://[^\s/]+", value):
        raise ValueError("must be an http(s) URL, e.g. http://127.0.0.1:8000/v1")
    return value


class EndpointParams(Strict):
    """Where the hosted models whose string starts with this entry's key are served.

    ``api_base``: the API URL (else the provider's ``<PROVIDER>_BASE_URL`` /
    ``<PROVIDER>_API_BASE`` environment variable, else the provider's default host);
    ``api_key_env``: the environment variable holding the key (its value is never stored);
    ``extra_body``: server-specific sampling fields sent on every call (a llama.cpp server:
    ``{repeat_penalty: 1.0}``, whose default is 1.1).
    """

    api_base: Annotated[str | None, AfterValidator(_http_base)] = None
    api_key_env: Annotated[str | None, AfterValidator(_env_name)] = None
    extra_body: dict[str, SamplingValue] = Field(default_factory=dict)


class LLMParams(Strict):
    """Gateway settings shared by every stage that calls a model.

    ``endpoints`` maps model-string prefixes (longest match) to where they are served, so the
    judge can run on one server and the answerer on another (``openai/judge-`` and
    ``openai/answer-`` entries). ``top_p`` joins ``temperature`` and ``seed`` as sampling
    params sent explicitly on every hosted call (the run records them).
    """

    model: NonEmptyStr = "local/smollm2-135m"
    models_file: NonEmptyStr = DEFAULT_MODELS_FILE
    cache_dir: NonEmptyStr = Field(default=".ragcourt/cache", json_schema_extra=RUNTIME)
    cache: StrictBool = Field(default=True, json_schema_extra=RUNTIME)
    concurrency: StrictInt = Field(default=8, gt=0, le=10_000, json_schema_extra=RUNTIME)
    concurrency_per_model: dict[str, Annotated[StrictInt, Field(ge=1, le=10_000)]] = Field(
        default_factory=lambda: {"local/": 1}, json_schema_extra=RUNTIME
    )
    timeout_s: TimeoutS = Field(default=120.0, json_schema_extra=RUNTIME)
    # a hosted reply body past this many decoded bytes is refused while it streams (one line)
    reply_max_bytes: StrictInt = Field(
        default=10_000_000, ge=10_000, le=1_000_000_000, json_schema_extra=RUNTIME
    )
    max_retries: StrictInt = Field(default=3, ge=0, le=100, json_schema_extra=RUNTIME)
    parse_retries: StrictInt = Field(default=2, ge=0, le=100)
    # delay before retry n: base * 2**(n-1)
    retry_backoff_s: DelayS = Field(default=1.0, json_schema_extra=RUNTIME)
    retry_backoff_max_s: DelayS = Field(default=30.0, json_schema_extra=RUNTIME)
    next_token_top_logprobs: StrictInt = Field(default=20, ge=1, le=20)  # hosted next_token_probs
    # local models: reuse the KV state of the prompt prefix shared with the previous call (same
    # replies; off only to measure or to rule it out)
    prefix_reuse: StrictBool = Field(default=True, json_schema_extra=RUNTIME)
    temperature: float = Field(default=0.0, ge=0, le=10)
    top_p: float = Field(default=1.0, gt=0, le=1)
    seed: StrictInt = 0
    metrics_dir: NonEmptyStr = DEFAULT_METRICS_DIR
    endpoints: dict[NonEmptyStr, EndpointParams] = Field(default_factory=dict)

    def resolve(self, role_model: str | None) -> str:
        """The model for a role: the role's own string, else the global ``model``."""
        return role_model or self.model

    def endpoint(self, model: str) -> tuple[str, EndpointParams] | None:
        """(key, entry) of ``endpoints`` whose key is the longest prefix of ``model``."""
        keys = [k for k in self.endpoints if model.startswith(k)]
        if not keys:
            return None
        key = max(keys, key=len)
        return key, self.endpoints[key]


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


class JudgeSpec(Strict):
    """A judge instance: ``kind`` names a registered judge type (``token_f1``,
    ``containment``, ``embedding_similarity``, ``llm`` or a user-registered one); the other
    keys configure it (``model`` null -> ``llm.model``; ``embedder`` a key of ``embedders``);
    ``settings``: the kind's own settings, validated against the model it registered
    (``ragcourt kinds answer_judge``)."""

    kind: str
    model: str | None = None
    embedder: str | None = None
    threshold: float | None = None
    prompt_version: str = "v1"
    settings: dict[str, Any] = Field(default_factory=dict)


def _default_judges() -> dict[str, JudgeSpec]:
    return {
        "token_f1": JudgeSpec(kind="token_f1", threshold=0.5),
        "ref_similarity": JudgeSpec(kind="embedding_similarity", embedder="minilm", threshold=0.7),
        "trained": JudgeSpec(kind="trained"),
        "llm": JudgeSpec(
            kind="llm", model="local/qwen2.5-coder-1.5b", prompt_version="v2", threshold=0.5
        ),
    }


class UDCGParams(Strict):
    """UDCG (spec §5): ``model`` gives P(NO-RESPONSE) (null -> ``llm.model``); a passage is
    relevant (R = +1) when its RAGElo grade >= ``relevance_threshold``; UDCGθ is fitted
    when ``fit_theta`` and at least ``theta_min_pairs`` ranked context pairs exist."""

    model: str | None = None
    gamma: float = Field(default=1.0 / 3.0, ge=0, le=1)
    k: StrictInt = Field(default=5, gt=0)
    relevance_threshold: StrictInt = Field(default=1, ge=1, le=2)
    fit_theta: StrictBool = True
    theta_min_pairs: StrictInt = Field(default=50, ge=1)


class JudgeParams(Strict):
    """DAFE judging (spec §4) plus correctness, relevance and UDCG (spec §5).
    ``prompt_version`` selects the correctness / relevance / UDCG prompts."""

    judges: dict[str, JudgeSpec] = Field(default_factory=_default_judges)
    primaries: list[str] = Field(default_factory=lambda: ["token_f1", "trained"])
    arbitrator: str = "llm"
    correctness_model: str | None = None
    # a kind of the correctness grader registry (ragcourt.judging.graders, checked against
    # it by ragcourt.judging.builders.check_judge_params; null: the kind registered as the
    # default, marked by `ragcourt kinds correctness_grader`): trained: no LLM, the trained
    # correctness judge's score, max over references; rubric: JSON rationale + score
    # (RAGalyst); expected: one next-token call, the score is the probability-weighted mean of
    # the rubric levels (G-Eval style, needs logprobs); similarity: no LLM, the score of an
    # embedding_similarity answer judge (its settings' ``judge``): max cosine to a reference)
    correctness_mode: NonEmptyStr | None = None
    # the correctness grader kind's own settings, validated against the model it registered
    # (`ragcourt kinds correctness_grader`)
    correctness_settings: dict[str, Any] = Field(default_factory=dict)
    relevance_model: str | None = None
    # a kind of the relevance grader registry (ragcourt.judging.relevance_graders, checked by
    # ragcourt.judging.builders.check_judge_params; null: the registered default):
    # trained: P(relevant) of the trained judge (no LLM; also UDCG's P(NO-RESPONSE)); llm:
    # RAGElo 0/1/2 by relevance_model
    relevance_grader: NonEmptyStr | None = None
    # the relevance grader kind's own settings (`ragcourt kinds relevance_grader`)
    relevance_settings: dict[str, Any] = Field(default_factory=dict)
    # weights folder of the trained judges (judge kind / correctness_mode / relevance_grader
    # ``trained``, QA filter ``trained_answerability``); null: the weights shipped in the package
    trained_weights: str | None = None
    prompt_version: str = "v5"
    # one-token judges (prompt v2: LLM verdict, expected correctness, relevance): false reads
    # the label's next-token probabilities (form "probability"); true generates a written
    # reason and the label (form "generated"), as models without logprobs always do
    reason: StrictBool = False
    udcg: UDCGParams = Field(default_factory=UDCGParams)

    @model_validator(mode="after")
    def _judges_known(self) -> JudgeParams:
        if len(self.primaries) != 2:
            raise ValueError("primaries must name exactly two judges")
        if len(set(self.primaries)) != 2 or self.arbitrator in self.primaries:
            raise ValueError("primaries and arbitrator must be three different judges")
        for name in [*self.primaries, self.arbitrator]:
            if name not in self.judges:
                raise ValueError(f"judge '{name}' is not defined under judge.judges")
        return self

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and "correctness_judge" in data:
            raise ValueError(
                "correctness_judge moved to judge.correctness_settings.judge (the settings of "
                "the correctness grader kind that reads it)"
            )
        return data


class TournamentParams(Strict):
    """DICE tournament (spec §6). ``judge``: a kind of the pairwise judge registry
    (:data:`ragcourt.tournament.pairwise.PAIRWISE_JUDGES`; null: the kind registered as its
    default); ``judge_settings``: that kind's own settings, validated against the model it
    registered (``ragcourt kinds`` lists them and marks the default)."""

    judge: NonEmptyStr | None = None
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    # None: max_rounds(N) when round_robin (every pair is judged anyway), else ceil(log2 N) + 1
    rounds: StrictInt | None = Field(default=None, gt=0, le=10_000)
    until_stable: StrictInt = Field(
        default=0, ge=0
    )  # >0: stop once ranking unchanged this many rounds
    margin: float = Field(default=0.1, ge=0, le=1)
    k_factor: float = Field(default=32.0, gt=0, le=10_000)
    upset_weighting: StrictBool = True
    initial_elo: float = Field(default=1500.0, ge=-1_000_000, le=1_000_000)
    bootstrap: StrictInt = Field(default=200, ge=0, le=1_000_000)
    seed: StrictInt = 0
    round_robin: StrictBool = True
    prompt_version: str = "v2"  # v2: question, evidence and answers fenced
    evidence_passages: StrictInt = Field(default=3, ge=0)  # retrieved passages shown per system
    evidence_chars: StrictInt = Field(default=600, gt=0)  # characters kept per passage
    analysis_max_tokens: StrictInt = Field(default=256, gt=0)
    # false: no stage-I analysis; the label is read right after the answers (one call per order;
    # needs a prompt version with a `direct` template, v3+). true: the DICE two-stage form.
    analysis: StrictBool = True


ControlKind = Literal["oracle", "random", "none", "shuffled"]
CONTROL_KINDS: tuple[ControlKind, ...] = ("oracle", "random", "none", "shuffled")
DEFAULT_CONTROL_KINDS: tuple[ControlKind, ...] = ("oracle", "random", "shuffled")


class ControlsParams(Strict):
    """Control systems added beside the configured ones (spec §3): ``oracle`` (the
    chunks holding the ground-truth span), ``random`` (k random chunks), ``none`` (closed book)
    and ``shuffled`` (the base system's answer to another question). They are answer-stage
    systems, so the switch lives here and not under ``tournament``: the answer stage depends
    on this section only, and judging, the tournament and the report read the ``control``
    column of the answers. ``base``: the built-in system whose chunking / top-k / generator
    they copy (null: the first built-in system). ``seed`` seeds ``random`` and ``shuffled``;
    ``bootstrap`` is the replicates of the DAFE discrimination check (judge summary)."""

    kinds: list[ControlKind] = Field(default_factory=lambda: list(DEFAULT_CONTROL_KINDS))
    base: str | None = None
    seed: StrictInt = 0
    bootstrap: StrictInt = Field(default=1000, ge=0, le=1_000_000)

    @field_validator("kinds")
    @classmethod
    def _unique(cls, value: list[ControlKind]) -> list[ControlKind]:
        dup = sorted({k for k in value if value.count(k) > 1})
        if dup:
            raise ValueError(f"control kind(s) {dup} listed twice")
        return value


class CalibrationParams(Strict):
    """Human labels vs the judges (``calibrate`` stage, PPI; spec §7): label files are read
    from ``labels_dir``; intervals are (1 − alpha); PPI needs ``min_labels`` labelled items."""

    labels_dir: NonEmptyStr = DEFAULT_LABELS_DIR
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    min_labels: StrictInt = Field(default=10, ge=2)
    kappa_warning: float = Field(default=0.4, ge=-1.0, le=1.0)  # warn below this kappa
    bootstrap_resamples: StrictInt = Field(default=1000, ge=100, le=100_000)
    seed: StrictInt = 0
    power_tuning: StrictBool = False  # PPI++ λ from the data (under-covers with few labels)
    # an answer with correctness >= this counts as correct (agreement of the correctness judge)
    correctness_threshold: float = Field(default=0.5, ge=0.0, le=1.0)


class FailureParams(Strict):
    """When a stage's failed rows (call errors, unparsable replies) make it fail loudly, after
    writing its outputs (:mod:`ragcourt.core.failures`): more than ``max_error_rate`` of a
    table's rows failed, or (``fail_on_system``) every row of one system failed."""

    max_error_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    fail_on_system: StrictBool = True


class LimitsParams(Strict):
    """Size bounds on what external systems hand the answer stage (docs: troubleshooting,
    Limits). An HTTP reply body over ``http_reply_max_bytes`` is cut off while it streams and
    the question becomes an error row; an answer over ``answer_max_chars`` or a passage over
    ``context_max_chars`` makes that question an error row; identical passages are kept once
    and at most ``contexts_max`` are kept per answer (the first ones, the rest dropped and
    logged). A systems file may declare at most ``max_systems`` systems: a grid's product of
    factor levels is checked before it is expanded."""

    http_reply_max_bytes: StrictInt = Field(default=1_000_000, ge=1_000, le=1_000_000_000)
    answer_max_chars: StrictInt = Field(default=50_000, ge=1, le=100_000_000)
    context_max_chars: StrictInt = Field(default=50_000, ge=1, le=100_000_000)
    contexts_max: StrictInt = Field(default=50, ge=1, le=10_000)
    # systems one systems file may declare, grids expanded (their product is checked first)
    max_systems: StrictInt = Field(default=1_000, ge=1, le=1_000_000)


class GateParams(Strict):
    """The release gate (``ragcourt gate``; spec §6, "Gate"): each candidate against
    ``baseline`` (null: the command's ``--baseline`` is required). ``margin``: Elo points a
    candidate may trail by (Elo view); ``accuracy_margin``: the same in DAFE accuracy (0-1).
    ``require_validity``: a run without pairs of controls fails the gate (exit 3)."""

    baseline: str | None = None
    view: Literal["elo", "dafe"] = "elo"
    margin: float = Field(default=0.0, ge=0, le=10_000)
    accuracy_margin: float = Field(default=0.0, ge=0, le=1)
    require_validity: StrictBool = False


class RaceParams(Strict):
    """The adaptive race (``ragcourt race``; spec §6, "Race"): rounds of ``round_questions``
    fresh questions, at most ``rounds`` of them (the planned looks of the Bonferroni rule);
    each survivor plays the ``opponents`` best-rated other survivors; a configuration is
    dropped when its win rate against another is below 1/2 at level
    ``alpha`` / (rounds · (N − 1)) (Hoeffding). ``max_calls``: stop before a round that
    would pass this many answer + judge calls (null: no call budget)."""

    round_questions: StrictInt = Field(default=10, gt=0, le=1_000_000)
    rounds: StrictInt = Field(default=5, gt=0, le=10_000)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    opponents: StrictInt = Field(default=2, ge=1, le=1_000)
    max_calls: StrictInt | None = Field(default=None, gt=0)
    seed: StrictInt = 0


class ScaleParams(Strict):
    """Sharded stages (docs/guide/scale-out.md): ``embed`` splits each chunks table into blocks
    of ``shard_chunks`` chunks; ``answer`` and ``judge`` split each system's
    questions into blocks of ``shard_questions``, ``judge_retrieval`` the questions into blocks
    of that size; each block is one task with its own Parquet file, merged in block order into
    the tables an unsharded call writes. 0: not sharded (one call, as before).
    ``shard_retries``: times a failed shard task (or one whose worker died) is run again under
    Prefect."""

    shard_questions: StrictInt = Field(default=0, ge=0, le=100_000_000)
    # embed: chunks per shard, rounded up to a multiple of embedders.<e>.stream_chunks (so a
    # shard's batches are the unsharded run's and its vectors the same bytes); 0: not sharded
    shard_chunks: StrictInt = Field(default=0, ge=0, le=1_000_000_000, json_schema_extra=RUNTIME)
    shard_retries: StrictInt = Field(default=2, ge=0, le=100, json_schema_extra=RUNTIME)


class Params(Strict):
    """Root of params.yaml."""

    corpus: CorpusParams = Field(default_factory=CorpusParams)
    chunk_tokenizer: NonEmptyStr = "cl100k_base"
    chunkings: dict[str, ChunkSpec] = Field(
        default_factory=lambda: {
            "c256": ChunkSpec(size=256, overlap=32),
            "c512": ChunkSpec(size=512, overlap=64),
        }
    )
    embedders: dict[str, EmbedderSpec] = Field(
        default_factory=lambda: {"minilm": EmbedderSpec(model="all-minilm-l6-v2")}
    )
    retrieval: RetrievalParams = Field(default_factory=RetrievalParams)
    llm: LLMParams = Field(default_factory=LLMParams)
    qagen: QAGenParams = Field(default_factory=QAGenParams)
    systems_file: NonEmptyStr = DEFAULT_SYSTEMS_FILE
    judge: JudgeParams = Field(default_factory=JudgeParams)
    tournament: TournamentParams = Field(default_factory=TournamentParams)
    calibration: CalibrationParams = Field(default_factory=CalibrationParams)
    failure: FailureParams = Field(default_factory=FailureParams)
    controls: ControlsParams = Field(default_factory=ControlsParams)
    limits: LimitsParams = Field(default_factory=LimitsParams)
    gate: GateParams = Field(default_factory=GateParams)
    race: RaceParams = Field(default_factory=RaceParams)
    scale: ScaleParams = Field(default_factory=ScaleParams)
    #: settings of a project's own stages, by stage name (``stages/<name>/`` declares their
    #: model in ``StageDef.settings``; validated when the stage runs)
    stage_params: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("chunkings", "embedders")
    @classmethod
    def _safe_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Keys name files (data/chunks/<key>.parquet) and DVC foreach arguments: safe names."""
        for key in value:
            check_safe_name(key, "key")
        pair = case_collision(value)
        if pair is not None:
            raise ValueError(f"keys {pair[0]!r} and {pair[1]!r} differ only in case")
        return value

    @model_validator(mode="after")
    def _cross_refs(self) -> Params:
        if not self.chunkings:
            raise ValueError("chunkings: at least one chunking is required")
        if not self.embedders:
            raise ValueError("embedders: at least one embedder is required")
        if self.qagen.qa_file is None and self.qagen.reference_chunking not in self.chunkings:
            raise ValueError(
                f"qagen.reference_chunking '{self.qagen.reference_chunking}' "
                f"is not one of chunkings {sorted(self.chunkings)}"
            )
        return self


def _loc_part(part: Any) -> str:
    """One part of a key path, printable on one line (an empty key shows as ``<empty>``)."""
    text = str(part)
    if not text:
        return "<empty>"
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _format_validation_error(path: Path, err: ValidationError) -> str:
    """``<file>: key '<dotted.key>': <message>`` on one line."""
    first = err.errors()[0]
    loc = ".".join(_loc_part(p) for p in first["loc"]) or "<root>"
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown key"
    msg = " ".join(msg.split())
    more = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{path}: key '{loc}': {msg}{more}"


def parse_params(data: Any, source: Path | str = DEFAULT_PARAMS_PATH) -> Params:
    """Validate an already-loaded mapping; raise ParamsError naming ``source`` and the key."""
    source = Path(source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParamsError(f"{source}: top level must be a mapping, got {type(data).__name__}")
    try:
        return Params.model_validate(data)
    except ValidationError as err:
        raise ParamsError(_format_validation_error(source, err)) from None


def load_params(path: Path | str = DEFAULT_PARAMS_PATH) -> Params:
    """Read and validate params.yaml; one-line ParamsError on any problem."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: params file not found")
    # anchors / aliases refused: a few hundred bytes of aliases can expand into gigabytes
    return parse_params(read_user_yaml(path, ParamsError), path)


def _section(path: str) -> type[BaseModel] | None:
    """The params model at dotted ``path`` of :class:`Params` (None: not a model section,
    e.g. a dict entry like ``chunkings.c256``, a leaf, or an unknown key)."""
    model: type[BaseModel] = Params
    for part in path.split("."):
        field = model.model_fields.get(part)
        annotation = None if field is None else field.annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def _is_runtime(model: type[BaseModel], name: str) -> bool:
    extra = model.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and extra.get("runtime") is True


def _has_runtime(model: type[BaseModel]) -> bool:
    """Whether ``model`` or a params section inside it holds a :data:`RUNTIME` setting."""
    for name, field in model.model_fields.items():
        inner = field.annotation
        if _is_runtime(model, name) or (
            isinstance(inner, type) and issubclass(inner, BaseModel) and _has_runtime(inner)
        ):
            return True
    return False


def tracked_keys(
    keys: Iterable[str], present: Callable[[str], bool] | None = None
) -> tuple[str, ...]:
    """The dotted params keys DVC (and the Prefect cache key) track for declared ``keys``: a
    section holding a :data:`RUNTIME` setting becomes its other settings' keys (a section
    inside it likewise), a runtime setting named by itself is left out, and every other key
    is kept as declared. With ``present`` (is this key
    written in the params file?), a section whose other settings are not all written stays
    one key, so a setting added to the file later is still tracked."""
    out: list[str] = []
    for key in keys:
        parent, _, name = key.rpartition(".")
        owner = _section(parent) if parent else Params
        if owner is not None and name in owner.model_fields and _is_runtime(owner, name):
            continue  # a runtime setting named by itself
        model = _section(key)
        if model is None or not _has_runtime(model):
            out.append(key)
            continue
        inner = [f"{key}.{n}" for n in model.model_fields if not _is_runtime(model, n)]
        if present is not None and not all(present(k) for k in inner):
            out.append(key)
            continue
        out.extend(tracked_keys(inner, present))
    return tuple(dict.fromkeys(out))

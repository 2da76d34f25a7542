"""The artifact catalog: every file the pipeline reads or writes, named once.

Each :class:`Artifact` has a name, a path template relative to the project root (placeholders
``{chunking}``, ``{embedder}``, ``{system}``), the table schema it holds (a key of
:data:`ragcourt.core.schemas.TABLES`, or None for JSON/PNG/FAISS/HTML) and the stage that
produces it: the one place that says what a stage writes (its declaration in ``stages/`` does
not repeat it). Stages, the plan (DVC and Prefect) and the report resolve paths only through
:func:`path` / :func:`spec`; nothing else in the code spells a ``data/...`` path.

Configuration inputs (prompts, the model registry, the systems file, the corpus folder) are
params or fixed config files; their paths come from the params
(:class:`~ragcourt.orchestration.params.Params`) and :func:`prompts_file`.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from ragcourt.core.errors import ConfigError

SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the checkout: ragcourt/, configs/
PROMPTS_DIR = "configs/prompts"
DEFAULT_PARAMS_FILE = "params.yaml"  # what DVC reads; every --params default
DEFAULT_MODELS_FILE = "configs/models.yaml"  # params llm.models_file default
DEFAULT_SYSTEMS_FILE = "configs/systems.yaml"  # params systems_file default
DEFAULT_PROFILES_DIR = "configs/profiles"  # params overlays, `ragcourt profile apply NAME`
DEFAULT_EXTERNAL_DIR = "data/external"  # answers files registered by `ragcourt answers import`
DEFAULT_LABELS_DIR = "data/labels"  # params calibration.labels_dir default (human labels)
DEFAULT_CORPUS_DIR = "data/corpus"  # params corpus.dir default
DEFAULT_METRICS_DIR = "data/metrics"  # params llm.metrics_dir default (llm_<stage>.json)
DEMO_QA_DIR = "data/demo_qa"  # a hand-written QA file for the demo corpus
CORPUS_NOTE = "data/CORPUS.md"  # where the demo corpus comes from
#: each stage's code digest, written by the ``code`` step of dvc.yaml (``python -m stages
#: code``); every DVC stage tracks its own key there as a param (its code dependency)
CODE_DIGESTS = "data/code/stages.yaml"
#: the inputs a new project gets (``ragcourt init``): the demo corpus, its note, a QA file and
#: the human labels folder
PROJECT_INPUTS = (CORPUS_NOTE, DEFAULT_CORPUS_DIR, DEMO_QA_DIR, DEFAULT_LABELS_DIR)


@dataclass(frozen=True)
class Artifact:
    """One catalogued file: ``template.format(**parts)`` is its path under the project root."""

    name: str
    template: str
    stage: str
    schema: str | None = None
    description: str = ""
    on_demand: bool = False  # written by an explicit command, not by the pipeline stage
    metric: bool = False  # a summary DVC keeps in git, uncached (``dvc metrics``)
    #: DVC keeps it between runs (``persist``): a stage's shard folder, so a killed run resumes
    persist: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        """The placeholders of the template, in order (``("chunking", "embedder")``)."""
        return tuple(f for _, f, _, _ in string.Formatter().parse(self.template) if f)

    def path(self, **parts: str) -> Path:
        """The artifact's path for these partition values (all placeholders, no others)."""
        return Path(self.path_str(**parts))

    def path_str(self, **parts: str) -> str:
        want = set(self.fields)
        if set(parts) != want:
            raise ConfigError(
                f"artifact '{self.name}' needs {sorted(want) or 'no'} partition values, "
                f"got {sorted(parts) or 'none'}"
            )
        return self.template.format(**parts)


def _a(
    name: str,
    template: str,
    stage: str,
    schema: str | None = None,
    desc: str = "",
    on_demand: bool = False,
    metric: bool = False,
    persist: bool = False,
) -> Artifact:
    return Artifact(name, template, stage, schema, desc, on_demand, metric, persist)


ARTIFACTS: dict[str, Artifact] = {
    a.name: a
    for a in (
        # ingest
        _a("documents", "data/documents.parquet", "ingest", "documents", "parsed documents"),
        _a(
            "rejected_documents",
            "data/rejected_documents.parquet",
            "ingest",
            "rejected_documents",
            "corpus files that could not be ingested, with the reason",
        ),
        # chunk / embed
        _a("chunks", "data/chunks/{chunking}.parquet", "chunk", "chunks", "token chunks"),
        _a(
            "bm25_index",
            "data/bm25/{chunking}",
            "bm25",
            None,
            "the chunking's BM25 index (bm25s save, memory-mapped when opened)",
        ),
        _a(
            "embeddings",
            "data/embeddings/{chunking}__{embedder}.parquet",
            "embed",
            "embeddings",
            "chunk vectors",
        ),
        _a(
            "embed_shards",
            "data/embed_shards/{chunking}__{embedder}",
            "embed",
            None,
            "one file per block of scale.shard_chunks chunks (00000.parquet, ...) when it is > 0",
            persist=True,
        ),
        _a("index", "data/index/{chunking}__{embedder}.faiss", "embed", None, "FAISS index"),
        _a(
            "embed_stats",
            "data/index/{chunking}__{embedder}.json",
            "embed",
            None,
            "the embedder's window, chunks over it and how they were embedded",
        ),
        _a(
            "index_stats",
            "data/index/{chunking}__{embedder}.stats.parquet",
            "embed",
            "index_stats",
            "the dense index built: factory string, build time, bytes, recall@10 vs exact",
        ),
        # llm_routes
        _a(
            "llm_routes",
            "data/llm/routes.json",
            "llm_routes",
            None,
            "where each hosted model is served, and the sampling params sent (no secrets)",
        ),
        # qagen
        _a("qa", "data/qa/qa.parquet", "qagen", "qa", "accepted QA items"),
        _a("qa_rejected", "data/qa/qa_rejected.parquet", "qagen", "qa_rejected"),
        _a(
            "qa_summary",
            "data/qa/summary.json",
            "qagen",
            None,
            "QA generation summary",
            metric=True,
        ),
        # retrieval_eval
        _a(
            "retrieval_per_query",
            "data/retrieval/per_query.parquet",
            "retrieval_eval",
            "retrieval_per_query",
        ),
        _a(
            "retrieval_summary",
            "data/retrieval/summary.parquet",
            "retrieval_eval",
            "retrieval_summary",
        ),
        _a("retrieval_metrics", "data/retrieval/metrics.json", "retrieval_eval", metric=True),
        _a("retrieval_plot", "data/retrieval/recall_vs_chunk_size.png", "retrieval_eval"),
        # answer
        _a("answer_partition", "data/answers/systems/{system}.parquet", "answer", "answers"),
        _a("answers", "data/answers/answers.parquet", "answer", "answers"),
        _a("answers_summary", "data/answers/summary.json", "answer"),
        _a(
            "answer_shards",
            "data/answers/shards",
            "answer",
            None,
            "one file per (system, question block) when scale.shard_questions > 0",
        ),
        # judge
        _a("verdicts", "data/judge/verdicts.parquet", "judge", "verdicts"),
        _a("correctness", "data/judge/correctness.parquet", "judge", "correctness"),
        _a(
            "judge_shards",
            "data/judge/shards/judge",
            "judge",
            None,
            "<table>/<system>/<block>.parquet when scale.shard_questions > 0",
            persist=True,
        ),
        # judge_retrieval
        _a("relevance", "data/judge/relevance.parquet", "judge_retrieval", "relevance"),
        _a(
            "passage_utility",
            "data/judge/passage_utility.parquet",
            "judge_retrieval",
            "passage_utility",
        ),
        _a("udcg", "data/judge/udcg.parquet", "judge_retrieval", "udcg"),
        _a(
            "judge_retrieval_shards",
            "data/judge/shards/judge_retrieval",
            "judge_retrieval",
            None,
            "<table>/<block>.parquet when scale.shard_questions > 0",
            persist=True,
        ),
        # judge_summary
        _a(
            "per_question", "data/judge/per_question.parquet", "judge_summary", "judge_per_question"
        ),
        _a(
            "system_summary", "data/judge/system_summary.parquet", "judge_summary", "system_summary"
        ),
        _a(
            "metric_correlation",
            "data/judge/metric_correlation.parquet",
            "judge_summary",
            "metric_correlation",
        ),
        _a("judge_summary", "data/judge/summary.json", "judge_summary", metric=True),
        # tournament
        _a("pairwise", "data/tournament/pairwise.parquet", "tournament", "pairwise"),
        _a("matches", "data/tournament/matches.parquet", "tournament", "matches"),
        _a("leaderboard", "data/tournament/leaderboard.parquet", "tournament", "leaderboard"),
        _a("leaderboard_plot", "data/tournament/leaderboard.png", "tournament"),
        _a("tournament_summary", "data/tournament/summary.json", "tournament", metric=True),
        _a(
            "single_system_table",
            "data/tournament/single/{stem}.parquet",
            "tournament",
            desc="one system against reference tiers (python -m stages tournament --single)",
            on_demand=True,
        ),
        _a(
            "single_system_summary",
            "data/tournament/single/{stem}.json",
            "tournament",
            on_demand=True,
        ),
        _a(
            "race_replay",
            "data/race/replay.json",
            "tournament",
            desc="an adaptive race replayed on the run's judgements (ragcourt race --replay)",
            on_demand=True,
        ),
        # race (the live race: only the survivors answer and are judged)
        _a("race_summary", "data/race/summary.json", "race"),
        _a(
            "race_rounds",
            "data/race/rounds",
            "race",
            None,
            "<round>/answers/<system>.parquet, verdicts, correctness and pairwise per round",
            persist=True,
        ),
        # calibrate (human labels; see ragcourt/calibration)
        _a(
            "calibration_agreement",
            "data/calibration/agreement.parquet",
            "calibrate",
            "calibration_agreement",
            "each judge's agreement with the human labels",
        ),
        _a(
            "calibration_ppi_systems",
            "data/calibration/ppi_systems.parquet",
            "calibrate",
            "calibration_ppi_systems",
            "per-system accuracy: judge-only, human-only and PPI estimates",
        ),
        _a(
            "calibration_ppi_pairs",
            "data/calibration/ppi_pairs.parquet",
            "calibrate",
            "calibration_ppi_pairs",
            "pairwise differences and win rates, PPI-corrected",
        ),
        _a("calibration_summary", "data/calibration/summary.json", "calibrate", metric=True),
        # report
        _a("report_html", "data/report/report.html", "report"),
        _a("report_md", "data/report/report.md", "report"),
        _a(
            "report_headline",
            "data/report/headline.json",
            "report",
            None,
            "headline figures: best system, gap to the runner-up, discrimination verdict",
            metric=True,
        ),
        _a("report_figures", "data/report/figures", "report", None, "the report's named plots"),
    )
}


#: the artifacts of a project's own stages, by project root (registered when the project's
#: ``stages/`` is loaded); lookups see the built-in ones and those of the working directory
_PROJECT_ARTIFACTS: dict[Path, dict[str, Artifact]] = {}


def register(root: Path, *artifacts: Artifact) -> None:
    """Add the artifacts a project's own stage declares (its ``StageDef.artifacts``) for the
    project at ``root``; a name already catalogued as another artifact is a ConfigError."""
    own = _PROJECT_ARTIFACTS.setdefault(root.resolve(), {})
    for a in artifacts:
        known = ARTIFACTS.get(a.name) or own.get(a.name)
        if known is not None and known != a:
            raise ConfigError(f"artifact '{a.name}' is already catalogued as {known.template}")
        own[a.name] = a


def known(root: Path | None = None) -> dict[str, Artifact]:
    """The built-in artifacts and those of the project at ``root`` (default: the working
    directory)."""
    return ARTIFACTS | _PROJECT_ARTIFACTS.get((root or Path.cwd()).resolve(), {})


def spec(name: str) -> Artifact:
    """The catalogued artifact ``name`` (a ConfigError naming the known ones otherwise)."""
    found = ARTIFACTS.get(name)  # built-in: no working-directory lookup on the common path
    if found is None:
        found = known().get(name)
    if found is None:
        raise ConfigError(f"unknown artifact '{name}' (known: {', '.join(known())})")
    return found


def path(name: str, **parts: str) -> Path:
    """Path of artifact ``name`` for these partition values, e.g.
    ``path("chunks", chunking="c256")`` -> ``data/chunks/c256.parquet``."""
    return spec(name).path(**parts)


def produced_by(stage: str, metric: bool | None = None) -> list[Artifact]:
    """The artifacts ``stage`` writes on every run, in catalog order (only its metrics, or
    only its other outputs, when ``metric`` is given)."""
    return [
        a
        for a in known().values()
        if a.stage == stage and not a.on_demand and (metric is None or a.metric == metric)
    ]


def prompts_file(stage: str) -> Path:
    """The prompt file of a stage family (``qagen``, ``answer``, ``judge``, ``tournament``)."""
    return Path(PROMPTS_DIR) / f"{stage}.yaml"


def llm_metrics(metrics_dir: str | Path, stage: str) -> Path:
    """The per-stage LLM accounting file (``<llm.metrics_dir>/llm_<stage>.json``)."""
    return Path(metrics_dir) / f"llm_{stage}.json"

"""The stage graph, declared once: every stage both engines run, in order.

:data:`STAGES` declares each stage (:class:`~ragcourt.orchestration.stage_def.StageDef`): the
library function (``module:function``), its partition (one call per chunking, per
(chunking, embedder), per system), its inputs, the catalog artifacts it writes, the params keys
and model-registry sections it depends on. :mod:`ragcourt.orchestration.plan` expands it into
Prefect calls, :mod:`ragcourt.orchestration.dvc_yaml` renders ``dvc.yaml`` from it, and
``python -m ragcourt.stages <name>`` runs one stage. Adding a stage = one :class:`StageDef`
here (plus its catalog entries and library module), then ``ragcourt dvc generate``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.stage_def import (
    EMBEDDERS,
    LLMS,
    Dep,
    EntryOption,
    StageDef,
    art,
    arts,
)

STAGES: dict[str, StageDef] = {
    s.name: s
    for s in (
        StageDef(
            "ingest",
            "ragcourt.corpus.ingest:run",
            "Corpus folder -> documents; unreadable files are rejected rows with a reason.",
            deps=(Dep(param="corpus.dir"),),
            outs=("documents", "rejected_documents"),
            params=("corpus",),
        ),
        StageDef(
            "chunk",
            "ragcourt.corpus.chunking:run",
            "Token chunks with char offsets, one stage per chunking config. Each ChunkSpec\n"
            "field is tracked as its own dotted key: DVC's run-cache key drops every dict key\n"
            'literally named "size", so tracking the dict would let a size change restore\n'
            "stale chunks.",
            deps=arts("documents"),
            outs=("chunks",),
            params=("chunk_tokenizer", "chunkings.{chunking}.size", "chunkings.{chunking}.overlap"),
            partition=("chunking",),
        ),
        StageDef(
            "embed",
            "ragcourt.retrieval.indexing:run",
            "Chunk vectors + a FAISS index per (chunking, embedder); chunks over the\n"
            "embedder's window are windowed, pooled or truncated (embedders.<e>.long_chunks).",
            deps=(art("chunks", chunking="$chunking"),),
            outs=("embeddings", "index", "embed_stats"),
            params=("embedders.{embedder}",),
            models=(EMBEDDERS,),
            partition=("chunking", "embedder"),
        ),
        StageDef(
            "llm_routes",
            "ragcourt.orchestration.llm_routes:run",
            "Where each hosted model is served (API base from params or the environment) and\n"
            "the sampling params sent: runs every time, rewrites an identical file unless a\n"
            "route changed, so the model-calling stages re-run exactly when one did.",
            deps=(Dep(param="systems_file"),),
            outs=("llm_routes",),
            params=("llm", "qagen", "judge", "tournament.model", "systems_file"),
            volatile="ragcourt.orchestration.llm_routes:current_record",
        ),
        StageDef(
            "qagen",
            "ragcourt.qagen.stage:run",
            "Synthetic QA with answerability / faithfulness / relevance / duplicate filters (or\n"
            "the user's qagen.qa_file, validated). A set qagen.qa_file / few_shot_file is a\n"
            "file dependency: editing it re-runs qagen (regenerate after setting or clearing one).",
            deps=(
                art("llm_routes"),
                Dep(prompts="qagen"),
                art("documents"),
                art("chunks", chunking="@qagen.reference_chunking", unless="qagen.qa_file"),
                Dep(param="qagen.qa_file", optional=True),
                Dep(param="qagen.few_shot_file", optional=True),
            ),
            outs=("qa", "qa_rejected"),
            metrics=("qa_summary",),
            params=("qagen", "llm", "embedders", "judge.trained_weights"),
            models=(EMBEDDERS, LLMS),  # near-duplicate removal embeds questions
            llm_metrics=True,
        ),
        StageDef(
            "retrieval_eval",
            "ragcourt.retrieval.evaluation:run",
            "Recall/MRR/nDCG/Precision/Hits@k of every (chunking, embedder, retriever) on the QA\n"
            "set, relevance by span overlap; BM25 once per chunking.",
            deps=(
                art("qa"),
                art("documents"),  # document languages pick the BM25 tokenizers
                art("chunks", chunking="*"),
                art("embeddings", chunking="*", embedder="*"),
                art("index", chunking="*", embedder="*"),
            ),
            outs=("retrieval_per_query", "retrieval_summary", "retrieval_plot"),
            metrics=("retrieval_metrics",),
            params=("chunkings", "embedders", "retrieval"),
            models=(EMBEDDERS,),
        ),
        StageDef(
            "answer",
            "ragcourt.answering.stage:run",
            "Every candidate system answers every question. DVC keeps data/answers between\n"
            "runs (persist), so each system's partition is reused when its config hash and the\n"
            "QA hash match: adding one system answers only that system.",
            deps=(
                art("llm_routes"),
                Dep(param="systems_file"),
                Dep(prompts="answer"),
                art("qa"),
                art("documents"),  # document languages pick the BM25 tokenizers
                art("chunks", chunking="$chunking"),
                art("embeddings", chunking="$chunking", embedder="$embedder"),
                art("index", chunking="$chunking", embedder="$embedder"),
            ),
            outs=("answer_partition", "answers", "answers_summary"),
            params=("systems_file", "llm", "retrieval", "controls", "limits"),
            models=(EMBEDDERS, LLMS),
            partition=("system",),
            llm_metrics=True,
            options=(
                EntryOption("systems", "only (re)compute these systems' partitions", nargs="+"),
            ),
        ),
        StageDef(
            "judge",
            "ragcourt.judging.answers_stage:run",
            "DAFE verdicts (two primaries, the arbitrator only on disagreement) and correctness.\n"
            "Answers with an error are carried as error rows. Re-runs hit the LLM cache.",
            deps=(Dep(prompts="judge"), *arts("answers", "qa", "llm_routes")),
            outs=("verdicts", "correctness"),
            params=(
                "judge.judges",
                "judge.primaries",
                "judge.arbitrator",
                "judge.correctness_mode",
                "judge.correctness_judge",
                "judge.correctness_model",
                "judge.trained_weights",
                "judge.prompt_version",
                "llm",
                "embedders",
            ),
            models=(EMBEDDERS, LLMS),
            llm_metrics=True,
        ),
        StageDef(
            "judge_retrieval",
            "ragcourt.judging.retrieval_stage:run",
            "0/1/2 relevance of every retrieved passage (once per question x chunk across\n"
            "systems; trained judge or RAGElo), P(NO-RESPONSE | question, passage) and UDCG per\n"
            "(system, question).",
            deps=(Dep(prompts="judge"), *arts("answers", "qa", "llm_routes")),
            outs=("relevance", "passage_utility", "udcg"),
            params=(
                "judge.relevance_grader",
                "judge.relevance_model",
                "judge.trained_weights",
                "judge.prompt_version",
                "judge.udcg",
                "llm",
            ),
            models=(EMBEDDERS, LLMS),  # the trained relevance judge embeds
            llm_metrics=True,
        ),
        StageDef(
            "judge_summary",
            "ragcourt.judging.summary:run",
            "Per-(system, question) measures side by side, per-system summary, Spearman of each\n"
            "retrieval metric with end-to-end correctness, optional UDCG-theta fit.",
            deps=(
                *arts("answers", "qa"),
                art("chunks", chunking="*"),
                *arts("verdicts", "correctness", "relevance", "udcg"),
            ),
            outs=("per_question", "system_summary", "metric_correlation"),
            metrics=("judge_summary",),
            params=(
                "judge",
                "chunkings",
                "retrieval.relevance",
                "controls.bootstrap",
                "controls.seed",
            ),
        ),
        StageDef(
            "tournament",
            "ragcourt.tournament.stage:run",
            "DICE Swiss tournament + round-robin, Elo and Bradley-Terry with bootstrap CIs. The\n"
            "correctness table is read only by the correctness_margin judge.",
            deps=(Dep(prompts="tournament"), *arts("answers", "qa", "correctness", "llm_routes")),
            outs=("pairwise", "matches", "leaderboard", "leaderboard_plot"),
            metrics=("tournament_summary",),
            params=("tournament", "llm"),
            models=(LLMS,),
            llm_metrics=True,
            options=(
                EntryOption(
                    "single", "evaluate one system against reference tiers", metavar="SYSTEM"
                ),
                EntryOption(
                    "reference_leaderboard",
                    "leaderboard.parquet of an earlier tournament (with --single)",
                    metavar="PATH",
                    requires="single",
                ),
            ),
        ),
        StageDef(
            "calibrate",
            "ragcourt.calibration.stage:run_stage",
            "Human labels (calibration.labels_dir) vs the judges: agreement with CIs, and\n"
            "prediction-powered (PPI) system accuracies next to judge-only and human-only ones.\n"
            "Without label files it writes empty tables and says nothing was calibrated.",
            deps=(
                Dep(param="calibration.labels_dir"),
                *arts("qa", "answers", "verdicts", "correctness", "relevance", "pairwise"),
            ),
            outs=("calibration_agreement", "calibration_ppi_systems", "calibration_ppi_pairs"),
            metrics=("calibration_summary",),
            params=("calibration",),
        ),
        StageDef(
            "report",
            "ragcourt.reporting.stage:run",
            "Self-contained HTML report (plots inlined, the headline plots also as PNG) +\n"
            "Markdown twin, and the headline figures as a metric. A missing artifact becomes a\n"
            "note in its section, never a failure.",
            deps=(
                *arts(
                    "documents",
                    "qa",
                    "qa_rejected",
                    "qa_summary",
                    "retrieval_summary",
                    "answers",
                    "verdicts",
                    "correctness",
                    "judge_summary",
                    "system_summary",
                    "metric_correlation",
                    "pairwise",
                    "leaderboard",
                    "tournament_summary",
                    "calibration_summary",
                    "calibration_agreement",
                    "calibration_ppi_systems",
                ),
                art("embed_stats", chunking="*", embedder="*"),
                Dep(param="llm.metrics_dir"),
            ),
            outs=("report_html", "report_md", "report_figures"),
            metrics=("report_headline",),
            params=(
                "chunkings",
                "embedders",
                "llm.model",
                "llm.metrics_dir",
                "tournament.initial_elo",
            ),
        ),
    )
}
STAGE_ORDER: tuple[str, ...] = tuple(STAGES)


def selected_stages(until: str | None = None, only: Sequence[str] | None = None) -> list[str]:
    """Stage names chosen by ``until`` (inclusive) or ``only`` (default: all)."""
    if until is not None and only is not None:
        raise ConfigError("give either 'until' or 'only', not both")
    names = list(only) if only is not None else list(STAGE_ORDER)
    if until is not None:
        if until not in STAGE_ORDER:
            raise ConfigError(f"unknown stage '{until}' (stages: {', '.join(STAGE_ORDER)})")
        names = list(STAGE_ORDER[: STAGE_ORDER.index(until) + 1])
    unknown = [n for n in names if n not in STAGE_ORDER]
    if unknown:
        raise ConfigError(f"unknown stage(s) {unknown} (stages: {', '.join(STAGE_ORDER)})")
    return names

"""Answer stage (SPEC 3): every candidate system answers every QA question.

Per system and question: retrieve (optionally with RAG-Fusion), number the top-k passages into
the prompt of ``configs/prompts/answer.yaml``, generate through the LLM gateway. The rules a
reviewer should know live with the code that applies them:

* shared retrieval, once per group of systems: :mod:`ragcourt.answering.retrieval_groups`;
* the answer request, abstention and per-row accounting: :mod:`ragcourt.answering.generation`;
* partitions and their freshness hashes: :mod:`ragcourt.answering.partitions`. A partition
  whose hashes match and which has no error rows is reused as is (no retrieval, no model
  call); otherwise the system is re-run (the gateway's disk cache still makes unchanged calls
  free, so failed pairs are retried cheaply).
* external systems (answers file, Python callable, HTTP endpoint):
  :mod:`ragcourt.answering.external`, through their answer route. Same partitions and
  freshness rule, except that a Python or HTTP system whose partition has error rows is asked
  again only the failed questions, and an answers-file partition with error rows (questions
  the file does not answer) is kept as long as the file and the QA set are unchanged
  (re-reading it would give the same rows).
* control systems: control retrievers ``oracle`` / ``random`` / ``none``
  (:mod:`ragcourt.answering.control_retrieval`) rank without an index; ``shuffled`` systems
  (:mod:`ragcourt.answering.shuffled`) are written last, from their base's partition.
  ``answers.parquet`` has a ``control`` column: the control kind, null for a real system.
  A control that cannot answer a question gives an error row with the reason; the failure
  policy (``failure.max_error_rate``, ``failure.fail_on_system``) counts real systems only,
  so a control's error rows are logged as a WARNING and never fail the stage.

Shards (``scale.shard_questions`` > 0): a built-in system's questions are answered in blocks,
one file each (:mod:`ragcourt.answering.partitions`); ``run(params, [name], block=b)`` answers
one block (a Prefect task, :func:`shards` lists them), ``run(params)`` answers the blocks not
done in-process and merges each system's blocks into its partition (rows as unsharded). A
block's question vectors are those of one call over every question (what an unsharded run
computes; :func:`ragcourt.retrieval.embedders.reusing`). A RAG-Fusion system's query variants
are embedded one at a time (:func:`ragcourt.answering.rag_fusion.fused_search`), so their
vectors do not depend on the block either.

``data/answers/answers.parquet`` is the concatenation of the partitions of the configured
systems in config order (partitions of systems no longer configured stay on disk, left out of
every table: ``ragcourt answers prune`` deletes them), and
``data/answers/summary.json`` is :class:`~ragcourt.answering.summaries.AnswersSummary`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ragcourt.answering.candidate_system import AnswerJob, CandidateSystem
from ragcourt.answering.control_retrieval import control_group
from ragcourt.answering.generation import ANSWER_SCHEMA, answer_batch
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.partitions import (
    config_hash,
    partition_path,
    partition_state,
    partitions_dir,
    qa_hash,
    read_partition,
    shard_path,
    upgrade_partition,
    write_partition,
)
from ragcourt.answering.protocols import Chatter, Retriever, RetrieverFactory
from ragcourt.answering.retrieval_groups import (
    GroupRetrieval,
    default_retriever_factory,
    retrieve_group,
)
from ragcourt.answering.retriever_kinds import is_control
from ragcourt.answering.summaries import summarise
from ragcourt.answering.systems import (
    System,
    builtin_systems,
    group_by_retrieval,
    load_systems,
    self_answering,
)
from ragcourt.core import catalog
from ragcourt.core.control_kinds import CONTROL_COLUMN
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import read_table, write_json, write_with
from ragcourt.core.shards import Shard, blocks, merge, prune
from ragcourt.retrieval.embedders import reusing

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

log = logging.getLogger("ragcourt.answer")

QA_PATH = catalog.path("qa")
ANSWERS_PATH = catalog.path("answers")
SUMMARY_PATH = catalog.path("answers_summary")


def mark_control(df: pl.DataFrame, system: CandidateSystem) -> pl.DataFrame:
    """The answers columns plus ``control`` = the system's control kind (null: real system)."""
    control = pl.lit(system.control, dtype=pl.String).alias(CONTROL_COLUMN)
    return df.select(list(ANSWER_SCHEMA)).with_columns(control)


@dataclass(frozen=True)
class _Answering:
    """What every built-in system's answering shares in one stage run."""

    params: AnsweringView
    gateway: Chatter
    retriever_factory: RetrieverFactory | None
    prompts_dir: Path | None


def _reusable(system: CandidateSystem, state: str) -> bool:
    """A fresh partition is reused; so is an answers-file partition with error rows."""
    return state == "fresh" or (state == "errors" and system.kind == "answers_file")


def answer_systems(
    systems: Sequence[CandidateSystem],
    qa: pl.DataFrame,
    params: AnsweringView,
    gateway: Chatter,
    retriever_factory: RetrieverFactory | None = None,
    prompts_dir: Path | None = None,
    *,
    reuse_fresh: bool = True,
) -> dict[str, str]:
    """Write the partition of every system that is not fresh; retrieval runs once per group of
    built-in systems sharing a retrieval key, other kinds answer by themselves, in their
    ``answer_order`` (a shuffled control after its base).
    Returns ``{system: "kept" | "answered"}``."""
    q_hash = qa_hash(qa)
    hashes = {s.name: config_hash(s, params, prompts_dir) for s in systems}
    states = {s.name: partition_state(s.name, hashes[s.name], q_hash) for s in systems}
    status = {
        s.name: "kept" if reuse_fresh and _reusable(s, states[s.name]) else "answered"
        for s in systems
    }
    for name in (n for n, st in status.items() if st == "kept"):
        log.info("%s: partition is fresh, kept (no retrieval, no model calls)", name)
    pending = [s for s in systems if status[s.name] == "answered"]
    how = _Answering(params, gateway, retriever_factory, prompts_dir)
    sharded = shardable(pending) if params.scale.shard_questions > 0 else []
    for block in range(len(blocks(qa.height, params.scale.shard_questions)) if sharded else 0):
        _answer_block(how, sharded, qa, block)
    _merge_blocks(sharded, qa, params, hashes, q_hash)

    def write(s: System, df: pl.DataFrame) -> None:
        write_partition(df, s.name, hashes[s.name], q_hash)

    whole = [s for s in builtin_systems(pending) if s not in sharded]
    _answer_builtin(how, whole, qa, write)
    for s in self_answering(pending):
        retry_failed = reuse_fresh and states[s.name] == "errors"
        _answer_by_itself(s, qa, params, prompts_dir, q_hash, retry_failed)
    return status


def _answer_by_itself(
    system: CandidateSystem,
    qa: pl.DataFrame,
    params: AnsweringView,
    prompts_dir: Path | None,
    q_hash: str,
    retry_failed: bool,
) -> None:
    """A system that answers by itself; with ``retry_failed`` an external system is asked only
    the questions its partition failed. The config hash is taken after answering (a shuffled
    control's reads its base's partition, written earlier in this run)."""
    previous = read_partition(system.name) if retry_failed and system.is_external else None
    if system.is_external:
        log.info(
            "%s: external system (%s)%s",
            system.name,
            system.kind,
            ", retrying its failed questions" if previous is not None else "",
        )
    df = mark_control(system.answer(AnswerJob(qa, params, previous)), system)
    write_partition(df, system.name, config_hash(system, params, prompts_dir), q_hash)
    _log_written(system.name, df)


def answer_rows(
    systems: Sequence[CandidateSystem],
    qa: pl.DataFrame,
    params: AnsweringView,
    gateway: Chatter,
    prompts_dir: Path | None = None,
    pool: pl.DataFrame | None = None,
) -> dict[str, pl.DataFrame]:
    """Each of ``systems``' answers to ``qa``, returned and not written to the stage's
    partitions (the race answers its rounds this way): built-in systems retrieve once per
    group sharing a retrieval key and generate in one gateway batch; the others answer by
    themselves (``pool``: the whole QA set ``qa`` is part of). Rows carry the answers table's
    columns plus ``control``."""
    out: dict[str, pl.DataFrame] = {}

    def keep(s: System, df: pl.DataFrame) -> None:
        out[s.name] = df

    _answer_builtin(
        _Answering(params, gateway, None, prompts_dir), builtin_systems(systems), qa, keep
    )
    for s in self_answering(systems):
        out[s.name] = mark_control(s.answer(AnswerJob(qa, params, None, pool)), s)
        _log_written(s.name, out[s.name])
    return {s.name: out[s.name] for s in systems}


def _log_written(name: str, df: pl.DataFrame) -> None:
    n_err = df["error"].drop_nulls().len()
    log.info(
        "%s: %d answers (%d abstained), %d error rows",
        name,
        df.height - n_err,
        int(df["abstained"].sum() or 0),
        n_err,
    )


def shardable(systems: Sequence[CandidateSystem]) -> list[System]:
    """The systems answered in question blocks: every built-in one (RAG-Fusion included)."""
    return builtin_systems(systems)


@functools.lru_cache(maxsize=4)  # a worker answering several shards of one QA set encodes once
def _query_vectors(model: str, batch_size: int, texts: tuple[str, ...]) -> np.ndarray:
    from ragcourt.retrieval.embedders import encode

    return encode(model, list(texts), batch_size=batch_size, role="query")


def question_vectors(
    systems: Sequence[System], qa: pl.DataFrame, params: AnsweringView
) -> dict[tuple[str, str | None, str], np.ndarray]:
    """The query vectors of every question of ``qa`` for the embedders of ``systems``, each from
    one call over all questions with the dense retriever's batch size (the last few QA sets'
    vectors are kept per process)."""
    texts = tuple(qa["question"].to_list())
    out: dict[tuple[str, str | None, str], np.ndarray] = {}
    for embedder in sorted({e for s in systems if (e := s.retrieval.embedder) is not None}):
        spec = params.embedders[embedder]
        vecs = _query_vectors(spec.model, spec.batch_size, texts)
        out |= {(spec.model, "query", t): v for t, v in zip(texts, vecs, strict=True)}
    return out


def _answer_block(how: _Answering, systems: Sequence[System], qa: pl.DataFrame, block: int) -> None:
    """Answer question block ``block`` (:func:`ragcourt.core.shards.blocks` of
    ``scale.shard_questions``) for each of ``systems`` whose shard of it is not fresh."""
    params, prompts_dir = how.params, how.prompts_dir
    bounds = blocks(qa.height, params.scale.shard_questions)
    if block < 0 or block >= len(bounds):
        raise ConfigError(f"answer: no question block {block} (there are {len(bounds)})")
    lo, hi = bounds[block]
    part = qa.slice(lo, hi - lo)
    b_hash = qa_hash(part)
    hashes = {s.name: config_hash(s, params, prompts_dir) for s in systems}
    todo = [
        s
        for s in systems
        if partition_state(s.name, hashes[s.name], b_hash, shard_path(s.name, block)) != "fresh"
    ]

    def write(s: System, df: pl.DataFrame) -> None:
        write_partition(df, s.name, hashes[s.name], b_hash, shard_path(s.name, block))

    if not todo:
        return
    with reusing(question_vectors(todo, qa, params)):
        _answer_builtin(how, todo, part, write)


def _merge_blocks(
    systems: Sequence[System],
    qa: pl.DataFrame,
    params: AnsweringView,
    hashes: dict[str, str],
    q_hash: str,
) -> None:
    """Each system's partition from its block files in block order (blocks of another shard
    size removed)."""
    n_blocks = len(blocks(qa.height, params.scale.shard_questions))
    for s in systems:
        files = [shard_path(s.name, b) for b in range(n_blocks)]
        if files:
            write_partition(merge(files, "answers"), s.name, hashes[s.name], q_hash)
            prune(files[0].parent, files)


def shards(params: AnsweringView, systems: Sequence[str] | None = None) -> list[Shard]:
    """The shard tasks of the Prefect call answering ``systems`` (one system): one per question
    block of a built-in system whose partition is not fresh; none when unsharded, for the
    combine call (no ``systems``) or for a system answering by itself."""
    size = params.scale.shard_questions
    if size <= 0 or not systems or len(systems) != 1:
        return []
    chosen = shardable(select_systems(load_systems(params), systems))
    if not chosen:
        return []
    qa = read_table(QA_PATH, "qa", columns=["question_id", "question"])
    system = chosen[0]
    state = partition_state(system.name, config_hash(system, params), qa_hash(qa))
    if state == "fresh":
        return []
    return [
        Shard(
            (("systems", (system.name,)), ("block", b)),
            (shard_path(system.name, b).as_posix(),),
            f"{system.name}#{b}",
        )
        for b in range(len(blocks(qa.height, size)))
    ]


def _answer_builtin(
    how: _Answering,
    systems: Sequence[System],
    qa: pl.DataFrame,
    write: Callable[[System, pl.DataFrame], None],
) -> None:
    """Answer ``qa`` for every one of ``systems`` (retrieval once per group sharing a
    retrieval key, every answer in one gateway batch); ``write(system, rows)`` each."""
    if not systems:
        return
    params, gateway, prompts_dir = how.params, how.gateway, how.prompts_dir
    factory = how.retriever_factory or default_retriever_factory()
    retrievers: dict[tuple[str, str, str | None], Retriever] = {}
    jobs: list[tuple[System, GroupRetrieval]] = []
    for key, members in group_by_retrieval(systems).items():
        rkey = (key.retriever, key.chunking, key.embedder)
        if is_control(key.retriever):
            group = control_group(key, qa, params)
        else:
            if rkey not in retrievers:
                retrievers[rkey] = factory(key.retriever, key.chunking, key.embedder, params)
            group = retrieve_group(key, qa, params, retrievers[rkey], gateway, prompts_dir)
        log.info(
            "retrieval %s: %d questions, shared by %s",
            key.label,
            qa.height,
            [s.name for s in members],
        )
        jobs += [(s, group) for s in members]
    # every system's answers in one gateway batch: independent calls run concurrently
    for (s, _), df in zip(jobs, answer_batch(jobs, qa, params, gateway, prompts_dir), strict=True):
        write(s, mark_control(df, s))
        _log_written(s.name, df)


def unlisted_partitions(systems: Sequence[CandidateSystem]) -> list[Path]:
    """The partition files of systems that ``systems`` does not list (sorted)."""
    folder = partitions_dir()
    if not folder.is_dir():
        return []
    keep = {partition_path(s.name).name for s in systems}
    return sorted(
        p
        for p in folder.glob("*.parquet")
        if p.name not in keep and not p.is_symlink() and p.is_file()  # a partition file only
    )


def prune_partitions(systems: Sequence[CandidateSystem]) -> list[Path]:
    """Delete the partitions of systems ``systems`` does not list (``ragcourt answers prune``;
    the answer stage never does: an external system's answers may be costly or impossible to
    get again); returns the deleted paths."""
    removed: list[Path] = []
    for path in unlisted_partitions(systems):
        try:
            path.unlink(missing_ok=True)
        except OSError as err:
            log.warning("could not remove %s: %s", path, err.strerror or err)
            continue
        removed.append(path)
        log.info("removed the partition of a system not in the systems file: %s", path)
    return removed


def combine(systems: Sequence[CandidateSystem]) -> pl.DataFrame:
    """Concatenate the partitions of ``systems`` (config order) into answers.parquet + summary;
    partitions of systems not listed are kept on disk but left out (see
    :func:`prune_partitions`)."""
    unlisted = unlisted_partitions(systems)
    if unlisted:
        log.info(
            "kept %d partition(s) of systems not in the systems file, left out of the answers "
            "table (`ragcourt answers prune` deletes them): %s",
            len(unlisted),
            ", ".join(p.stem for p in unlisted),
        )
    frames = [mark_control(read_table(partition_path(s.name), "answers"), s) for s in systems]
    empty = pl.DataFrame(schema={**ANSWER_SCHEMA, CONTROL_COLUMN: pl.String})
    answers = pl.concat(frames, how="vertical") if frames else empty
    write_with(ANSWERS_PATH, lambda tmp: answers.write_parquet(tmp, compression="zstd"))
    write_json(summarise(answers).model_dump(mode="json"), SUMMARY_PATH)
    return answers


def check_questions(qa: pl.DataFrame, source: Path) -> pl.DataFrame:
    """Question ids must be non-null and unique, question texts non-empty (error names the row)."""
    bad_id = qa.filter(pl.col("question_id").is_null() | (pl.col("question_id") == ""))
    if bad_id.height:
        raise RagcourtError(f"{source}: a row has an empty question_id")
    dup = qa.filter(pl.col("question_id").is_duplicated())
    if dup.height:
        raise RagcourtError(f"{source}: duplicate question_id '{dup['question_id'][0]}'")
    empty = qa.filter(pl.col("question").is_null() | (pl.col("question").str.strip_chars() == ""))
    if empty.height:
        raise RagcourtError(
            f"{source}: question_id '{empty['question_id'][0]}': column 'question' is empty"
        )
    return qa


def select_systems(
    systems: Sequence[CandidateSystem], names: Sequence[str] | None
) -> list[CandidateSystem]:
    if names is None:
        return list(systems)
    known = {s.name: s for s in systems}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown system(s) {unknown} (configured: {sorted(known)})")
    return [known[n] for n in names]


def run(
    params: AnsweringView,
    systems: Sequence[str] | None = None,
    *,
    block: int | None = None,
    gateway: Chatter | None = None,
    retriever_factory: RetrieverFactory | None = None,
    prompts_dir: Path | None = None,
) -> None:
    """The whole stage in the cwd. ``systems`` limits which partitions are (re)computed; the
    combined table is written when every configured system has an up-to-date partition. With
    ``block``: only that question block of ``systems`` (built-in ones) is answered into its
    shard file (a shard task; the call without ``block`` merges the blocks)."""
    configured = load_systems(params, prompts_dir=prompts_dir)
    chosen = select_systems(configured, systems)
    catalog.path("answer_shards").mkdir(parents=True, exist_ok=True)  # an output, even empty
    for s in configured:
        if upgrade_partition(s.name):
            log.info("%s: partition given the answers table's new columns (rows kept)", s.name)
    qa = check_questions(read_table(QA_PATH, "qa"), QA_PATH)
    own_gateway: Gateway | None = None
    if gateway is None:
        from ragcourt.llm import Gateway

        gateway = own_gateway = Gateway(params.llm, stage="answer")
    if block is not None:
        how = _Answering(params, gateway, retriever_factory, prompts_dir)
        _answer_block(how, shardable(chosen), qa, block)
        if own_gateway is not None:
            own_gateway.write_metrics()
        return
    answer_systems(chosen, qa, params, gateway, retriever_factory, prompts_dir)
    q_hash = qa_hash(qa)
    unready = [
        s.name
        for s in configured
        if partition_state(s.name, config_hash(s, params, prompts_dir), q_hash)
        in ("missing", "stale")
    ]
    if unready:
        log.info("combined table not written: partitions missing or stale for %s", unready)
    else:
        combine(configured)
    if own_gateway is not None:
        own_gateway.write_metrics()
    enforce_failures(chosen, params)


def enforce_failures(systems: Sequence[CandidateSystem], params: AnsweringView) -> None:
    """The failure policy over the partitions of ``systems`` (:mod:`ragcourt.core.failures`):
    it applies to real systems only; a control system's error rows (an oracle without a
    ground-truth span, a shuffled control with one question) are logged, never fail the stage."""
    done = [df for s in systems if (df := read_partition(s.name)) is not None]
    if not done:
        return
    controls = {s.name: s.control for s in systems if s.control is not None}
    answers = pl.concat(done, how="vertical")
    enforce("answer", [assess("answers", answers, controls=controls)], params.failure)

"""The stage graph as the Prefect flow runs it: one :class:`StageCall` per stage and partition.

``build_plan(params, systems)`` lists, in dependency order, every call of a ``stages.<name>.run``
function with its partition keyword arguments (per chunking, per (chunking, embedder), per
system), the artifacts it reads and writes (the contract paths of COMMON.md, the same files
dvc.yaml declares), the params keys it depends on and the sections of the model registry
(``configs/models.yaml``) it resolves models from. The flow turns each call into a task; the
cache policy hashes the declared inputs and params; nothing here imports a stage module.

:func:`code_files` is the one list of source files a stage's results depend on: the stage
module and every ``stages.*`` module it imports, transitively (read with ``ast``, not
imported). The Prefect cache key hashes exactly these files, and tests/test_flows_plan.py
checks that dvc.yaml lists each of them (and the model registry sections) as a dependency of
the DVC stage running that module, so editing shared code re-runs the same work in both engines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stages.errors import ConfigError
from stages.params import Params

STAGE_ORDER: tuple[str, ...] = (
    "ingest",
    "chunk",
    "embed",
    "qagen",
    "retrieval_eval",
    "answer",
    "judge",
    "tournament",
    "report",
)

DOCS = "data/documents.parquet"
PROMPTS_DIR = "configs/prompts"


LLMS, EMBEDDERS = "llms", "embedders"  # sections of the model registry (llm.models_file)
STAGES_ROOT = Path(__file__).resolve().parent.parent  # the folder holding the stages package


def stages_imports(path: Path) -> set[str]:
    """``stages.*`` modules imported anywhere in the file (absolute imports only; ``from
    stages.x import name`` also yields ``stages.x.name``, which may be a submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stages"))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("stages")
        ):
            module = str(node.module)
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def module_file(name: str, root: Path) -> Path | None:
    """``root/a/b.py`` or ``root/a/b/__init__.py`` for module ``a.b``; None when neither."""
    base = root.joinpath(*name.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def code_files(module: str, root: Path = STAGES_ROOT) -> list[str]:
    """Sorted paths (relative to ``root``) of ``stages/<module>.py``, the ``stages`` package's
    ``__init__.py`` (every stage runs it: offline environment) and every ``stages.*`` module
    they import, transitively. Not memoised: ``ast.parse`` callers serialise it themselves
    (CPython 3.11's parser is not thread-safe)."""
    todo, seen = ["stages", f"stages.{module}"], set[str]()
    files: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = module_file(name, root)
        if f is None:  # ``from stages.x import func``: the name is not a module
            continue
        files.add(f.relative_to(root).as_posix())
        todo.extend(stages_imports(f) - seen)
    if f"stages/{module}.py" not in files and f"stages/{module}/__init__.py" not in files:
        raise ConfigError(f"no stage module 'stages.{module}' under {root}")
    return sorted(files)


def chunks_path(chunking: str) -> str:
    return f"data/chunks/{chunking}.parquet"


def embedding_paths(chunking: str, embedder: str) -> tuple[str, str]:
    pair = f"{chunking}__{embedder}"
    return f"data/embeddings/{pair}.parquet", f"data/index/{pair}.faiss"


def metrics_path(params: Params, stage: str) -> str:
    return f"{params.llm.metrics_dir}/llm_{stage}.json"


@dataclass(frozen=True)
class StageCall:
    """One call ``stages.<stage>.run(params, **kwargs)`` and what it reads and writes.

    ``inputs``/``outputs`` are paths relative to the workdir (files or folders); ``params_keys``
    are dotted keys of params.yaml (``chunkings.c256``) whose values the call depends on;
    ``after`` names the calls whose outputs it needs (by :attr:`id`); ``models_keys`` are the
    sections of the model registry it resolves models from (``llms``, ``embedders``; the
    registry file itself is then one of ``inputs``).
    """

    stage: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    params_keys: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    tag: str = ""  # partition label used in the id (defaults to the kwargs' values)
    models_keys: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        label = self.tag or ",".join(_label(v) for _, v in self.kwargs)
        return f"{self.stage}[{label}]" if label else self.stage

    @property
    def file_stem(self) -> str:
        """``id`` made safe as a file name (anything but alphanumerics and ``-_.,`` -> ``_``)."""
        return "".join(ch if ch.isalnum() or ch in "-_.," else "_" for ch in self.id)

    @property
    def call_kwargs(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.kwargs}


def _label(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "+".join(str(v) for v in value)
    return str(value)


@dataclass
class Plan:
    """The ordered calls plus lookup helpers."""

    calls: list[StageCall] = field(default_factory=list)

    def add(self, call: StageCall) -> StageCall:
        if any(c.id == call.id for c in self.calls):
            raise ConfigError(f"plan: duplicate stage call '{call.id}'")
        missing = [a for a in call.after if a not in self.ids]
        if missing:
            raise ConfigError(f"plan: '{call.id}' waits for unknown call(s) {missing}")
        self.calls.append(call)
        return call

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.calls]

    def by_stage(self, stage: str) -> list[StageCall]:
        return [c for c in self.calls if c.stage == stage]

    def ids_of(self, stage: str) -> tuple[str, ...]:
        return tuple(c.id for c in self.by_stage(stage))

    def outputs(self) -> list[str]:
        return [o for c in self.calls for o in c.outputs]

    def select(self, until: str | None = None, only: Sequence[str] | None = None) -> Plan:
        """Calls of the stages up to ``until`` (inclusive), or only the stages in ``only``
        (whose ``after`` links to unselected calls are dropped: their outputs must exist)."""
        names = selected_stages(until, only)
        kept = [c for c in self.calls if c.stage in names]
        kept_ids = {c.id for c in kept}
        out = Plan()
        for c in kept:
            out.add(replace(c, after=tuple(a for a in c.after if a in kept_ids)))
        return out


def _optional_file(path: str | None) -> tuple[str, ...]:
    return (path,) if path else ()


def build_plan(params: Params, systems: Iterable[tuple[str, str, str | None]]) -> Plan:
    """The whole stage graph for ``params``.

    ``systems``: ``(name, chunking, embedder-or-None)`` of every configured candidate system, in
    config order (from ``stages.systems.load_systems``); each gets its own answer task.
    """
    p = Plan()
    llm_inputs = (params.llm.models_file,)
    ingest = p.add(
        StageCall(
            "ingest",
            inputs=(params.corpus.dir,),
            outputs=(DOCS, "data/rejected_documents.parquet"),
            params_keys=("corpus",),
        )
    )
    for c in params.chunkings:
        p.add(
            StageCall(
                "chunk",
                kwargs=(("chunking", c),),
                inputs=(DOCS,),
                outputs=(chunks_path(c),),
                params_keys=("chunk_tokenizer", f"chunkings.{c}"),
                after=(ingest.id,),
            )
        )
    for c in params.chunkings:
        for e in params.embedders:
            p.add(
                StageCall(
                    "embed",
                    kwargs=(("chunking", c), ("embedder", e)),
                    inputs=(chunks_path(c), params.llm.models_file),
                    outputs=embedding_paths(c, e),
                    params_keys=(f"embedders.{e}",),
                    after=(f"chunk[{c}]",),
                    models_keys=(EMBEDDERS,),
                )
            )
    q = params.qagen
    ref = q.reference_chunking
    qagen_after = [ingest.id]
    if q.qa_file is None:
        qagen_after.append(f"chunk[{ref}]")
    qagen = p.add(
        StageCall(
            "qagen",
            inputs=(
                DOCS,
                *((chunks_path(ref),) if q.qa_file is None else ()),
                *_optional_file(q.qa_file),
                *_optional_file(q.few_shot_file),
                f"{PROMPTS_DIR}/qagen.yaml",
                *llm_inputs,
            ),
            outputs=(
                "data/qa/qa.parquet",
                "data/qa/qa_rejected.parquet",
                "data/qa/summary.json",
            ),
            params_keys=("qagen", "llm", "embedders"),
            after=tuple(qagen_after),
            models_keys=(LLMS, EMBEDDERS),  # near-duplicate removal embeds questions
        )
    )
    all_indexes = tuple(
        x for c in params.chunkings for e in params.embedders for x in embedding_paths(c, e)
    )
    p.add(
        StageCall(
            "retrieval_eval",
            inputs=(
                "data/qa/qa.parquet",
                *(chunks_path(c) for c in params.chunkings),
                *all_indexes,
                *llm_inputs,  # the embedder registry: queries are embedded
            ),
            outputs=(
                "data/retrieval/per_query.parquet",
                "data/retrieval/summary.parquet",
                "data/retrieval/metrics.json",
                "data/retrieval/recall_vs_chunk_size.png",
            ),
            params_keys=("retrieval", "chunkings", "embedders"),
            after=(qagen.id, *p.ids_of("embed")),
            models_keys=(EMBEDDERS,),
        )
    )
    systems = list(systems)
    answer_common = ("data/qa/qa.parquet", params.systems_file, f"{PROMPTS_DIR}/answer.yaml")
    for name, chunking, embedder in systems:
        deps: list[str] = [chunks_path(chunking)]
        after = [qagen.id, f"chunk[{chunking}]"]
        if embedder is not None:
            deps.extend(embedding_paths(chunking, embedder))
            after.append(f"embed[{chunking},{embedder}]")
        p.add(
            StageCall(
                "answer",
                kwargs=(("systems", (name,)),),
                inputs=(*answer_common, *deps, *llm_inputs),
                outputs=(f"data/answers/systems/{name}.parquet",),
                params_keys=("llm", "retrieval", "chunkings", "embedders"),
                after=tuple(after),
                models_keys=(LLMS, EMBEDDERS),
            )
        )
    answers = p.add(
        StageCall(
            "answer",
            tag="combine",
            inputs=(
                *answer_common,
                *(f"data/answers/systems/{n}.parquet" for n, _, _ in systems),
                *llm_inputs,  # combine re-answers any system whose partition is not fresh
            ),
            outputs=("data/answers/answers.parquet", "data/answers/summary.json"),
            params_keys=("llm", "retrieval", "chunkings", "embedders"),
            after=p.ids_of("answer") or (qagen.id,),
            models_keys=(LLMS, EMBEDDERS),
        )
    )
    judge_common = (
        "data/answers/answers.parquet",
        "data/qa/qa.parquet",
        f"{PROMPTS_DIR}/judge.yaml",
        *llm_inputs,
    )
    j_ans = p.add(
        StageCall(
            "judge",
            kwargs=(("step", "answers"),),
            inputs=judge_common,
            outputs=("data/judge/verdicts.parquet", "data/judge/correctness.parquet"),
            params_keys=("judge", "llm", "embedders"),
            after=(answers.id,),
            models_keys=(LLMS, EMBEDDERS),  # embedding_similarity judges
        )
    )
    j_ret = p.add(
        StageCall(
            "judge",
            kwargs=(("step", "retrieval"),),
            inputs=judge_common,
            outputs=(
                "data/judge/relevance.parquet",
                "data/judge/passage_utility.parquet",
                "data/judge/udcg.parquet",
            ),
            params_keys=("judge", "llm", "retrieval"),
            after=(answers.id,),
            models_keys=(LLMS,),
        )
    )
    j_sum = p.add(
        StageCall(
            "judge",
            kwargs=(("step", "summary"),),
            inputs=(
                *judge_common[:2],
                *j_ans.outputs,
                *j_ret.outputs,
                *(chunks_path(c) for c in params.chunkings),  # span-rule IR metrics
            ),
            outputs=(
                "data/judge/per_question.parquet",
                "data/judge/system_summary.parquet",
                "data/judge/metric_correlation.parquet",
                "data/judge/summary.json",
            ),
            params_keys=("judge", "chunkings", "retrieval.relevance"),
            after=(j_ans.id, j_ret.id),
        )
    )
    tour = p.add(
        StageCall(
            "tournament",
            inputs=(
                "data/answers/answers.parquet",
                "data/qa/qa.parquet",
                "data/judge/correctness.parquet",
                f"{PROMPTS_DIR}/tournament.yaml",
                *llm_inputs,
            ),
            outputs=(
                "data/tournament/pairwise.parquet",
                "data/tournament/matches.parquet",
                "data/tournament/leaderboard.parquet",
                "data/tournament/leaderboard.png",
                "data/tournament/summary.json",
            ),
            params_keys=("tournament", "llm"),
            after=(answers.id, j_ans.id),
            models_keys=(LLMS,),
        )
    )
    produced = dict.fromkeys(o for c in p.calls if c.stage != "report" for o in c.outputs)
    report_inputs = (*produced, params.llm.metrics_dir)
    p.add(
        StageCall(
            "report",
            inputs=report_inputs,
            outputs=("data/report/report.html", "data/report/report.md"),
            params_keys=("chunkings", "embedders"),
            after=(j_sum.id, tour.id, *p.ids_of("retrieval_eval")),
        )
    )
    return p


def systems_for_plan(params: Params) -> list[tuple[str, str, str | None]]:
    """``(name, chunking, embedder)`` of every configured system (validated by stages.systems)."""
    from stages.systems import load_systems

    return [(s.name, s.spec.chunking, s.spec.embedder) for s in load_systems(params)]


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


def plan_for(params: Params, until: str | None = None, only: Sequence[str] | None = None) -> Plan:
    """The plan restricted to the selected stages; the systems file is read only when the
    answer stage (one task per system) is selected."""
    names = selected_stages(until, only)
    systems = systems_for_plan(params) if "answer" in names else []
    return build_plan(params, systems).select(only=names)


def existing(paths: Iterable[str], root: Path) -> list[str]:
    return [p for p in paths if (root / p).exists()]

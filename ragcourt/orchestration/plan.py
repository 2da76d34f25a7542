"""The stage graph, once: what each stage runs, reads and writes, for both engines.

:data:`STAGES` names every stage (the same name in DVC, Prefect and the CLI), the library
function both engines call (``module:function``) and its thin DVC entry ``stages/<name>.py``.
:func:`build_plan` lists, in dependency order, every concrete call (per chunking, per (chunking,
embedder), per system) with the artifacts it reads and writes (paths from
:mod:`ragcourt.core.catalog`), the params keys it depends on and the model-registry sections it
resolves models from; the Prefect flow turns each call into a task.
:mod:`ragcourt.orchestration.dvc_yaml` renders the same graph as ``dvc.yaml``.

:func:`code_paths` is the one list of source paths a stage's results depend on: its thin entry
and every ``ragcourt`` subpackage it imports, transitively, as folders (read with ``ast``, not
imported). The Prefect cache key hashes exactly these, and dvc.yaml lists them as deps, so
editing shared code re-runs the same work in both engines.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.params import Params


@dataclass(frozen=True)
class StageDef:
    """A pipeline stage: its library function (``module:function``, called as
    ``fn(params, **partition)``) and a one-line description (dvc.yaml comment, CLI help)."""

    name: str
    function: str
    description: str

    @property
    def entry(self) -> str:
        """The thin DVC entry module (``python -m stages.<name>``)."""
        return f"stages.{self.name}"

    def load(self) -> Callable[..., Any]:
        module, _, attr = self.function.partition(":")
        fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
        return fn


STAGES: dict[str, StageDef] = {
    s.name: s
    for s in (
        StageDef("ingest", "ragcourt.corpus.ingest:run", "corpus folder -> documents"),
        StageDef("chunk", "ragcourt.corpus.chunking:run", "token chunks per chunking"),
        StageDef("embed", "ragcourt.retrieval.indexing:run", "vectors + FAISS index"),
        StageDef("qagen", "ragcourt.qagen.stage:run", "synthetic QA set with filters"),
        StageDef("retrieval_eval", "ragcourt.retrieval.evaluation:run", "retrieval metrics"),
        StageDef("answer", "ragcourt.answering.stage:run", "every system answers"),
        StageDef("judge", "ragcourt.judging.answers_stage:run", "DAFE verdicts, correctness"),
        StageDef(
            "judge_retrieval",
            "ragcourt.judging.retrieval_stage:run",
            "passage relevance, UDCG",
        ),
        StageDef("judge_summary", "ragcourt.judging.summary:run", "per-system judge summary"),
        StageDef("tournament", "ragcourt.tournament.stage:run", "DICE Swiss tournament, Elo"),
        StageDef("report", "ragcourt.reporting.stage:run", "HTML + Markdown report"),
    )
}
STAGE_ORDER: tuple[str, ...] = tuple(STAGES)

LLMS, EMBEDDERS = "llms", "embedders"  # sections of the model registry (llm.models_file)
PROJECT_ROOT = catalog.SOURCE_ROOT  # holds ragcourt/ and stages/
PACKAGE = "ragcourt"


def _ragcourt_imports(path: Path) -> set[str]:
    """``ragcourt.*`` modules imported anywhere in the file (absolute imports, also lazy
    ones inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module or ""
            if module.split(".")[0] == PACKAGE:
                found.add(module)
                found.update(f"{module}.{a.name}" for a in node.names)
    return found


def _subpackage(module: str, root: Path) -> str | None:
    """``ragcourt/<sub>`` for module ``ragcourt.<sub>[.x]`` when that folder exists."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    folder = root / PACKAGE / parts[1]
    return f"{PACKAGE}/{parts[1]}" if folder.is_dir() else None


def code_paths(stage: str, root: Path = PROJECT_ROOT) -> list[str]:
    """Sorted source paths (relative to ``root``) the results of ``stage`` depend on:
    ``stages/<stage>.py``, ``ragcourt/__init__.py`` and every ``ragcourt/<subpackage>`` folder
    imported by them or by a folder already included, transitively. Not memoised: callers
    serialise ``ast.parse`` themselves (CPython 3.11's parser is not thread-safe)."""
    entry = root / "stages" / f"{stage}.py"
    if stage not in STAGES or not entry.is_file():
        raise ConfigError(f"no stage '{stage}' (stages: {', '.join(STAGES)})")
    files = [f"stages/{stage}.py", f"{PACKAGE}/__init__.py"]
    todo = [entry]
    folders: set[str] = set()
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for module in _ragcourt_imports(f):
            sub = _subpackage(module, root)
            if sub is not None and sub not in folders:
                folders.add(sub)
                todo.extend(sorted((root / sub).rglob("*.py")))
    return sorted(files) + sorted(folders)


def code_files(stage: str, root: Path = PROJECT_ROOT) -> list[str]:
    """Every source file under :func:`code_paths` (relative to ``root``, sorted): what the
    Prefect cache key hashes. Package data (report templates) counts as source."""
    out: set[str] = set()
    for rel in code_paths(stage, root):
        p = root / rel
        if p.is_file():
            out.add(rel)
            continue
        for f in p.rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                out.add(f.relative_to(root).as_posix())
    return sorted(out)


def chunks_path(chunking: str) -> str:
    return catalog.spec("chunks").path_str(chunking=chunking)


def embedding_paths(chunking: str, embedder: str) -> tuple[str, str]:
    return (
        catalog.spec("embeddings").path_str(chunking=chunking, embedder=embedder),
        catalog.spec("index").path_str(chunking=chunking, embedder=embedder),
    )


def _outs(stage: str) -> tuple[str, ...]:
    """The catalog paths of a non-partitioned stage's outputs."""
    return tuple(a.template for a in catalog.produced_by(stage))


def _p(name: str) -> str:
    return catalog.spec(name).path_str()


def metrics_path(params: Params, stage: str) -> str:
    return catalog.llm_metrics(params.llm.metrics_dir, stage).as_posix()


def _prompts(stage: str) -> str:
    return catalog.prompts_file(stage).as_posix()


@dataclass(frozen=True)
class StageCall:
    """One call of stage ``stage``'s library function (``fn(params, **kwargs)``, see
    :data:`STAGES`) and what it reads and writes.

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
    config order (from ``ragcourt.answering.systems.load_systems``); each gets its own answer task.
    """
    p = Plan()
    llm_inputs = (params.llm.models_file,)
    docs = _p("documents")
    qa = _p("qa")
    ingest = p.add(
        StageCall(
            "ingest",
            inputs=(params.corpus.dir,),
            outputs=_outs("ingest"),
            params_keys=("corpus",),
        )
    )
    for c in params.chunkings:
        p.add(
            StageCall(
                "chunk",
                kwargs=(("chunking", c),),
                inputs=(docs,),
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
                docs,
                *((chunks_path(ref),) if q.qa_file is None else ()),
                *_optional_file(q.qa_file),
                *_optional_file(q.few_shot_file),
                _prompts("qagen"),
                *llm_inputs,
            ),
            outputs=_outs("qagen"),
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
                qa,
                *(chunks_path(c) for c in params.chunkings),
                *all_indexes,
                *llm_inputs,  # the embedder registry: queries are embedded
            ),
            outputs=_outs("retrieval_eval"),
            params_keys=("retrieval", "chunkings", "embedders"),
            after=(qagen.id, *p.ids_of("embed")),
            models_keys=(EMBEDDERS,),
        )
    )
    systems = list(systems)
    answer_common = (qa, params.systems_file, _prompts("answer"))
    partition = catalog.spec("answer_partition")
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
                outputs=(partition.path_str(system=name),),
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
                *(partition.path_str(system=n) for n, _, _ in systems),
                *llm_inputs,  # combine re-answers any system whose partition is not fresh
            ),
            outputs=(_p("answers"), _p("answers_summary")),
            params_keys=("llm", "retrieval", "chunkings", "embedders"),
            after=p.ids_of("answer") or (qagen.id,),
            models_keys=(LLMS, EMBEDDERS),
        )
    )
    judge_common = (_p("answers"), qa, _prompts("judge"), *llm_inputs)
    j_ans = p.add(
        StageCall(
            "judge",
            inputs=judge_common,
            outputs=_outs("judge"),
            params_keys=("judge", "llm", "embedders"),
            after=(answers.id,),
            models_keys=(LLMS, EMBEDDERS),  # embedding_similarity judges
        )
    )
    j_ret = p.add(
        StageCall(
            "judge_retrieval",
            inputs=judge_common,
            outputs=_outs("judge_retrieval"),
            params_keys=("judge", "llm", "retrieval"),
            after=(answers.id,),
            models_keys=(LLMS,),
        )
    )
    j_sum = p.add(
        StageCall(
            "judge_summary",
            inputs=(
                *judge_common[:2],
                *j_ans.outputs,
                *j_ret.outputs,
                *(chunks_path(c) for c in params.chunkings),  # span-rule IR metrics
            ),
            outputs=_outs("judge_summary"),
            params_keys=("judge", "chunkings", "retrieval.relevance"),
            after=(j_ans.id, j_ret.id),
        )
    )
    tour = p.add(
        StageCall(
            "tournament",
            inputs=(_p("answers"), qa, _p("correctness"), _prompts("tournament"), *llm_inputs),
            outputs=_outs("tournament"),
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
            outputs=_outs("report"),
            params_keys=("chunkings", "embedders"),
            after=(j_sum.id, tour.id, *p.ids_of("retrieval_eval")),
        )
    )
    return p


def systems_for_plan(params: Params) -> list[tuple[str, str, str | None]]:
    """``(name, chunking, embedder)`` of every configured system (validated by
    :mod:`ragcourt.answering.systems`)."""
    from ragcourt.answering.systems import load_systems

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

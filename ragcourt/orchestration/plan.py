"""The stage graph, declared once: what each stage runs, reads and writes, for both engines.

:data:`STAGES` declares every stage (the same name in DVC, Prefect and the CLI): the library
function both engines call (``module:function``), its partition (one call per chunking, per
(chunking, embedder), per system), its inputs (:class:`Dep`), the catalog artifacts it writes,
the params keys and model-registry sections it depends on. From it,
:func:`build_plan` expands every concrete call for Prefect (inputs/outputs as paths from
:mod:`ragcourt.core.catalog`; ``after`` = the calls producing its inputs) and
:mod:`ragcourt.orchestration.dvc_yaml` renders ``dvc.yaml``. Adding a stage = one
:class:`StageDef` here (plus its catalog entries, library module and ``stages/<name>.py``).

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

LLMS, EMBEDDERS = "llms", "embedders"  # sections of the model registry (llm.models_file)
PROJECT_ROOT = catalog.SOURCE_ROOT  # holds ragcourt/ and stages/
PACKAGE = "ragcourt"


@dataclass(frozen=True)
class Dep:
    """One input of a stage, declared once for both engines; exactly one of:

    - ``artifact``: a catalog name; ``bind`` maps each partition field of its template to
      ``"$field"`` (the call's own partition value), ``"*"`` (every value; DVC depends on the
      artifact's folder) or ``"@dotted.key"`` (the value of a params key);
    - ``param``: a params key whose value is a path (corpus folder, systems file, a user file);
      ``optional``: it may be null (then no input; DVC tracks the key, not the file);
    - ``prompts``: the prompt file of a stage family.

    ``unless``: a params key; when it is set (not null) a Prefect call does not read this input.
    """

    artifact: str | None = None
    bind: tuple[tuple[str, str], ...] = ()
    param: str | None = None
    optional: bool = False
    prompts: str | None = None
    unless: str | None = None


def art(name: str, *, unless: str | None = None, **bind: str) -> Dep:
    """An artifact input: ``art("chunks", chunking="$chunking")``."""
    return Dep(artifact=name, bind=tuple(bind.items()), unless=unless)


def arts(*names: str) -> tuple[Dep, ...]:
    return tuple(Dep(artifact=n) for n in names)


@dataclass(frozen=True)
class StageDef:
    """A pipeline stage (see the module docstring). ``partition``: the fields one call covers
    (``("chunking", "embedder")``; ``("system",)`` is the per-system fan-out of the answer
    stage, which DVC runs as one stage and Prefect as one call per system plus ``combine``).
    ``params``: params keys (``{chunking}`` is filled per partition). ``metrics``: outputs DVC
    keeps in git uncached (summaries); ``llm_metrics``: it writes ``llm_<name>.json``."""

    name: str
    function: str
    description: str
    deps: tuple[Dep, ...] = ()
    outs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    partition: tuple[str, ...] = ()
    llm_metrics: bool = False
    #: "module:function" returning JSON data the outputs depend on beyond files and params (the
    #: environment): DVC runs the stage every time (``always_changed``); Prefect hashes the data
    volatile: str | None = None

    @property
    def entry(self) -> str:
        """The thin DVC entry module (``python -m stages.<name>``)."""
        return f"stages.{self.name}"

    @property
    def writes(self) -> tuple[str, ...]:
        """Every catalog artifact the stage writes (outs and metrics)."""
        return (*self.outs, *self.metrics)

    def load(self) -> Callable[..., Any]:
        module, _, attr = self.function.partition(":")
        fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
        return fn


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
            "Sentence-transformers vectors + a FAISS index per (chunking, embedder).",
            deps=(art("chunks", chunking="$chunking"),),
            outs=("embeddings", "index"),
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
            "the user's qagen.qa_file, validated). DVC tracks qagen.qa_file / few_shot_file as\n"
            "params (the path), not their content: after editing such a file run\n"
            "`dvc repro -f -s qagen` (the Prefect flow hashes the content itself).",
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
            params=("qagen", "llm", "embedders"),
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
            params=("systems_file", "llm", "retrieval", "controls"),
            models=(EMBEDDERS, LLMS),
            partition=("system",),
            llm_metrics=True,
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
            "RAGElo 0/1/2 relevance of every retrieved passage (once per question x chunk across\n"
            "systems), P(NO-RESPONSE | question, passage) and UDCG per (system, question).",
            deps=(Dep(prompts="judge"), *arts("answers", "qa", "llm_routes")),
            outs=("relevance", "passage_utility", "udcg"),
            params=("judge.relevance_model", "judge.prompt_version", "judge.udcg", "llm"),
            models=(LLMS,),
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
            "Self-contained HTML report (plots inlined) + Markdown twin. A missing artifact\n"
            "becomes a note in its section, never a failure.",
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
                Dep(param="llm.metrics_dir"),
            ),
            outs=("report_html", "report_md"),
            params=("chunkings", "embedders", "llm.model", "llm.metrics_dir"),
        ),
    )
}
STAGE_ORDER: tuple[str, ...] = tuple(STAGES)


# --- source files a stage depends on -----------------------------------------------------------


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


# --- Prefect: concrete calls -----------------------------------------------------------------


@dataclass(frozen=True)
class StageCall:
    """One call of stage ``stage``'s library function (``fn(params, **kwargs)``) and what it
    reads and writes.

    ``inputs``/``outputs`` are paths relative to the workdir (files or folders); ``params_keys``
    are dotted keys of params.yaml (``chunkings.c256.size``) whose values the call depends on;
    ``after`` names the calls whose outputs it needs (by :attr:`id`); ``models_keys`` are the
    sections of the model registry it resolves models from (the registry file is then one of
    ``inputs``).
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


def _param_value(params: Params, key: str) -> Any:
    node: Any = params.model_dump(mode="json")
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(f"params key '{key}' not found (needed by the stage graph)")
        node = node[part]
    return node


def _values(params: Params, field_name: str) -> list[str]:
    """Every partition value of a field: the chunkings or embedders keys."""
    if field_name == "chunking":
        return list(params.chunkings)
    if field_name == "embedder":
        return list(params.embedders)
    raise ConfigError(f"plan: no value list for partition field '{field_name}'")


def _dep_paths(dep: Dep, params: Params, part: dict[str, str | None]) -> list[str]:
    """The concrete input paths of ``dep`` for a call with partition values ``part``."""
    if dep.unless is not None and _param_value(params, dep.unless) is not None:
        return []
    if dep.prompts is not None:
        return [catalog.prompts_file(dep.prompts).as_posix()]
    if dep.param is not None:
        value = _param_value(params, dep.param)
        if value is None and dep.optional:
            return []
        return [str(value)]
    assert dep.artifact is not None
    spec = catalog.spec(dep.artifact)
    choices: list[dict[str, str]] = [{}]
    for name, how in dep.bind:
        if how == "*":
            vals = _values(params, name)
        elif how.startswith("$"):
            v = part.get(how[1:])
            if v is None:  # e.g. a BM25 system has no embedder: no embedding input
                return []
            vals = [v]
        elif how.startswith("@"):
            vals = [str(_param_value(params, how[1:]))]
        else:
            raise ConfigError(f"plan: bad binding {name}={how!r} of '{dep.artifact}'")
        choices = [{**c, name: v} for c in choices for v in vals]
    return [spec.path_str(**c) for c in choices]


def _fill(keys: Iterable[str], part: dict[str, str | None]) -> tuple[str, ...]:
    return tuple(k.format(**part) for k in keys)


def _call(
    sd: StageDef,
    params: Params,
    part: dict[str, str | None],
    kwargs: tuple[tuple[str, Any], ...],
    outs: Iterable[str],
    producers: dict[str, str],
    tag: str = "",
    extra_inputs: Iterable[str] = (),
) -> StageCall:
    inputs = [p for d in sd.deps for p in _dep_paths(d, params, part)]
    inputs.extend(extra_inputs)
    if sd.models:
        inputs.append(params.llm.models_file)
    inputs = list(dict.fromkeys(inputs))
    after = tuple(dict.fromkeys(producers[i] for i in inputs if i in producers))
    return StageCall(
        sd.name,
        kwargs=kwargs,
        inputs=tuple(inputs),
        outputs=tuple(outs),
        params_keys=_fill(sd.params, part),
        after=after,
        tag=tag,
        models_keys=sd.models,
    )


SystemEntry = (
    tuple[str, str | None, str | None] | tuple[str, str | None, str | None, tuple[str, ...]]
)


def build_plan(params: Params, systems: Iterable[SystemEntry]) -> Plan:
    """Every concrete call of :data:`STAGES` for ``params``, in dependency order.

    ``systems``: ``(name, chunking-or-None, embedder-or-None[, inputs])`` of every configured
    candidate system, in config order (:func:`systems_for_plan`). A ``("system",)`` stage
    runs one call per system (its partitioned outputs, its system's chunking/embedder
    inputs) and then a ``combine`` call that reads every partition and writes the rest.
    """
    systems = list(systems)
    p = Plan()
    producers: dict[str, str] = {}

    ancestors: dict[str, set[str]] = {}

    def add(call: StageCall) -> None:
        # wait only for the nearest producers: drop one that another producer already waits for
        direct = [a for a in call.after if not any(a in ancestors[b] for b in call.after)]
        call = replace(call, after=tuple(direct))
        p.add(call)
        ancestors[call.id] = set(direct).union(*(ancestors[a] for a in direct))
        producers.update(dict.fromkeys(call.outputs, call.id))

    for sd in STAGES.values():
        if sd.partition == ("system",):
            part_outs = [a for a in sd.writes if "system" in catalog.spec(a).fields]
            rest = [a for a in sd.writes if a not in part_outs]
            partition_paths: list[str] = []
            for entry in systems:
                name, chunking, embedder = entry[0], entry[1], entry[2]
                extra = entry[3] if len(entry) > 3 else ()
                part = {"system": name, "chunking": chunking, "embedder": embedder}
                outs = [catalog.spec(a).path_str(system=name) for a in part_outs]
                partition_paths.extend(outs)
                one = (("systems", (name,)),)
                add(_call(sd, params, part, one, outs, producers, extra_inputs=extra))
            # the combine call reads the stage's unpartitioned inputs and every partition
            combine = replace(sd, deps=tuple(d for d in sd.deps if not d.bind))
            outs = [catalog.spec(a).path_str() for a in rest]
            add(_call(combine, params, {}, (), outs, producers, "combine", partition_paths))
            continue
        fields = sd.partition
        combos: list[dict[str, str | None]] = [{}]
        for f in fields:
            combos = [{**c, f: v} for c in combos for v in _values(params, f)]
        for part in combos:
            kwargs = tuple((f, part[f]) for f in fields)
            outs = [
                catalog.spec(a).path_str(**{f: str(part[f]) for f in catalog.spec(a).fields})
                for a in sd.writes
            ]
            add(_call(sd, params, part, kwargs, outs, producers))
    return p


def systems_for_plan(params: Params) -> list[tuple[str, str | None, str | None, tuple[str, ...]]]:
    """``(name, chunking, embedder, inputs)`` of every configured system (validated by
    :mod:`ragcourt.answering.systems`): an external system has no chunking/embedder and
    lists the files its answers come from (an answers file, a project module) as inputs."""
    from ragcourt.answering.systems import load_systems

    entries = [s.plan_entry() for s in load_systems(params)]
    return [(e.name, e.chunking, e.embedder, tuple(e.inputs)) for e in entries]


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


def metrics_path(params: Params, stage: str) -> str:
    return catalog.llm_metrics(params.llm.metrics_dir, stage).as_posix()


def existing(paths: Iterable[str], root: Path) -> list[str]:
    return [p for p in paths if (root / p).exists()]

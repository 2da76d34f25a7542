"""``ragcourt doctor``: offline checks of everything a run needs, one :class:`Check` each.

Nothing here downloads or calls a hosted model: embedders are located (and a zip-part embedder
unpacked once, as a run would), GGUF files are sha256-verified, llama-cpp is imported, the DVC
repository is opened, and the Prefect API's ``/health`` is asked only when an API URL is set.
Every verified local LLM is loaded **in a child process** that runs one 1-token chat call, so a
native crash (SIGSEGV on a CPU whose AMX path llama.cpp mishandles) is one failed check naming
the signal, the CPU flags and the remedy. Hosted models (any litellm model string): the key
variable is set, the API base answers ``GET /models`` (free) and lists the model, and the
provider offers logprobs where a role needs them; one real call only with ``call=True``.
Models checked: every embedder of params, judge embedders given as registry names, and every
``local/<name>`` LLM of a params role or of a candidate system (generator, RAG-Fusion model).
Profiles (``configs/profiles``): which one params match, and whether its models are installed.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ragcourt.core.errors import RagcourtError
from ragcourt.orchestration.params import Params, load_params

if TYPE_CHECKING:
    from ragcourt.answering.systems import CandidateSystem
    from ragcourt.retrieval.trained_judges.pair_model import Role

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str


def _guard(name: str, fn: Callable[[], Check]) -> Check:
    """Run one check; an unexpected exception is a failed check, not a crash."""
    try:
        return fn()
    except RagcourtError as err:
        return Check(name, "fail", str(err))
    except Exception as err:  # a broken install can raise anything on import
        return Check(name, "fail", f"{type(err).__name__}: {err}")


def _guard_all(name: str, fn: Callable[[], list[Check]]) -> list[Check]:
    """:func:`_guard` for a check that returns several."""
    try:
        return fn()
    except RagcourtError as err:
        return [Check(name, "fail", str(err))]
    except Exception as err:
        return [Check(name, "fail", f"{type(err).__name__}: {err}")]


def check_python() -> Check:
    v = sys.version_info
    ok = (v.major, v.minor) >= (3, 11)
    return Check("python", "ok" if ok else "fail", f"{v.major}.{v.minor}.{v.micro}")


def judge_registry_embedders(params: Params) -> list[str]:
    """Judge ``embedder`` values that are registry names, not keys of ``params.embedders``."""
    names = {j.embedder for j in params.judge.judges.values() if j.embedder}
    return sorted(n for n in names if n not in params.embedders)


def check_embedders(params: Params) -> list[Check]:
    from ragcourt.retrieval.embedders import resolve_model_dir

    models = [(f"embedder {key}", spec.model) for key, spec in params.embedders.items()]
    models += [(f"judge embedder {n}", n) for n in judge_registry_embedders(params)]

    def located(name: str, model: str) -> Check:
        return Check(name, "ok", f"{model}: {resolve_model_dir(model)}")

    return [_guard(name, partial(located, name, model)) for name, model in models]


def local_models(params: Params, systems: Sequence[CandidateSystem] = ()) -> list[str]:
    """Registry names of every ``local/<name>`` model params or the ``systems`` refer to: the
    models of every model-calling stage (:func:`~ragcourt.orchestration.llm_routes.stage_models`)
    and ``llm.model``."""
    from ragcourt.orchestration.llm_routes import stage_models

    roles = {params.llm.model, *(m for ms in stage_models(params, systems).values() for m in ms)}
    return sorted(m.split("/", 1)[1] for m in roles if m.startswith("local/"))


def check_local_llms(params: Params, systems: Sequence[CandidateSystem] = ()) -> list[Check]:
    from ragcourt.core.model_registry import load_registry
    from ragcourt.llm.gguf_files import resolve_gguf

    names = local_models(params, systems)
    if not names:
        return []
    try:
        registry = load_registry(params.llm.models_file)
    except RagcourtError as err:
        return [Check("model registry", "fail", str(err))]

    def verified(name: str, label: str) -> Check:
        return Check(label, "ok", f"sha256 verified: {resolve_gguf(name, registry.llm(name))}")

    labels = [(name, f"local LLM {name}") for name in names]
    return [_guard(label, partial(verified, name, label)) for name, label in labels]


def check_local_llm_calls(
    params: Params, systems: Sequence[CandidateSystem] = (), verified: Sequence[str] = ()
) -> list[Check]:
    """A 1-token chat call per local model in ``verified``, each in a child process."""
    from ragcourt.llm.smoke import probe

    out = []
    for name in verified:
        r = probe(name, params.llm.models_file)
        out.append(Check(f"local LLM call {name}", "ok" if r.ok else "fail", r.detail))
    return out


#: stages whose judges read next-token probabilities (logprobs) when configured to
LOGPROB_STAGES = ("qagen", "judge", "judge_retrieval", "tournament")


def hosted_models(params: Params, systems: Sequence[CandidateSystem]) -> dict[str, list[str]]:
    """Every hosted model string of the run -> the stages that call it."""
    from ragcourt.llm.providers import is_in_process
    from ragcourt.orchestration.llm_routes import stage_models

    out: dict[str, list[str]] = {}
    for stage, models in stage_models(params, systems).items():
        for m in models:
            if not is_in_process(m):
                out.setdefault(m, []).append(stage)
    return out


DOCTOR_REPLY_BOUND = 2_000_000  # bytes of a /models or /health reply doctor reads


def _listed_models(base: str, key: str | None, timeout_s: float) -> tuple[str, list[str]]:
    """(status, model ids) of ``GET <base>/models`` within a total deadline of ``timeout_s``
    (connect, headers and body: a server that trickles cannot hold doctor): status ``ok``,
    ``refused`` (401/403), ``no-list`` (another status) or ``unreachable: <why>``."""
    import httpx

    from ragcourt.core.bounded_http import ReplyBound, UnsafeReply, get_bounded

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        resp = get_bounded(
            f"{base.rstrip('/')}/models",
            headers,
            ReplyBound(DOCTOR_REPLY_BOUND, "doctor's reply bound"),
            timeout_s,
        )
    except UnsafeReply as err:
        return f"unreachable: {err}", []
    except httpx.HTTPError as err:
        return f"unreachable: {type(err).__name__}", []
    if resp.status in (401, 403):
        return "refused", []
    if resp.status != 200:
        return "no-list", []
    try:
        data = json.loads(resp.body).get("data") or []
        return "ok", [str(d.get("id")) for d in data if isinstance(d, dict)]
    except (ValueError, AttributeError):
        return "no-list", []


def check_hosted_model(
    params: Params, model: str, stages: Sequence[str], call: bool = False, timeout_s: float = 5.0
) -> list[Check]:
    """Key variable, API base, model known, logprobs; a real 1-token call only with ``call``."""
    import os

    from ragcourt.core.redact import redact_url
    from ragcourt.llm import endpoints, providers

    r = endpoints.route(model, params.llm)
    label = f"hosted {model}"
    missing = endpoints.missing_key(r)
    checks = [Check(f"{label} key", "fail" if missing else "ok", missing or f"{r.key_env} set")]
    key = os.environ.get(r.key_env) if r.key_env else None
    name = model.split("/", 1)[1] if "/" in model else model
    if r.api_base:
        status, ids = _listed_models(r.api_base, key, timeout_s)
        where = f"{redact_url(r.api_base)} (from {r.base_from})"
        if status.startswith("unreachable"):
            checks.append(Check(f"{label} API base", "fail", f"{where} {status}"))
        elif status == "refused":
            checks.append(Check(f"{label} API base", "fail", f"{where} refused the key"))
        elif status == "ok" and ids and name not in ids:
            checks.append(
                Check(f"{label} API base", "warn", f"{where} lists no '{name}' (has {ids[:5]})")
            )
        else:
            known = "lists the model" if status == "ok" else "answers (no model list)"
            checks.append(Check(f"{label} API base", "ok", f"{where} {known}"))
    else:
        providers.configure_litellm()
        import litellm

        try:
            litellm.get_model_info(model)
            checks.append(Check(f"{label} model", "ok", f"known to litellm; {r.host}"))
        except Exception:
            checks.append(Check(f"{label} model", "warn", f"not in litellm's model map; {r.host}"))
    needs = [s for s in stages if s in LOGPROB_STAGES]
    if needs:
        providers.configure_litellm()
        import litellm

        try:
            supported = litellm.get_supported_openai_params(model=model) or []
        except Exception:
            supported = []
        has = "logprobs" in supported or "top_logprobs" in supported
        checks.append(
            Check(
                f"{label} logprobs",
                "ok" if has else "warn",
                f"needed by {', '.join(needs)}: "
                + ("offered" if has else "not offered; label probabilities use label probes"),
            )
        )
    if call:
        checks.append(_real_call(params, model, label))
    return checks


def _real_call(params: Params, model: str, label: str) -> Check:
    from ragcourt.llm import ChatRequest, Gateway

    gw = Gateway(params.llm.model_copy(update={"cache": False, "max_retries": 0}), "doctor")
    [res] = gw.chat([ChatRequest.of(model, None, "Say OK.", max_tokens=1, top_logprobs=5)])
    if not res.ok:
        return Check(f"{label} call", "fail", res.error or "failed")
    lp = "with logprobs" if res.logprobs else "no logprobs returned"
    return Check(f"{label} call", "ok", f"1-token reply in {res.latency_s:.2f}s, {lp}")


def check_llama_cpp() -> Check:
    def run() -> Check:
        mod = importlib.import_module("llama_cpp")
        return Check("llama-cpp-python", "ok", f"version {getattr(mod, '__version__', '?')}")

    return _guard("llama-cpp-python", run)


def check_systems(params: Params) -> tuple[Check, list[CandidateSystem]]:
    """The systems file's check and its systems (none when it does not load)."""
    loaded: list[CandidateSystem] = []

    def run() -> Check:
        from ragcourt.answering.systems import load_systems

        loaded.extend(load_systems(params))
        return Check("systems", "ok", f"{len(loaded)} systems in {params.systems_file}")

    return _guard("systems", run), loaded


def check_dvc(root: Path) -> list[Check]:
    out = []
    git = shutil.which("git")
    in_git = (root / ".git").exists() or any((p / ".git").exists() for p in root.parents)
    out.append(
        Check(
            "git",
            "ok" if git and in_git else "warn",
            "inside a git repository" if in_git else "not a git repository (DVC needs one)",
        )
    )

    def run() -> Check:
        from dvc.repo import Repo

        if not (root / ".dvc").is_dir():
            return Check("DVC repo", "fail", f"{root}/.dvc not found (run `dvc init`)")
        with Repo(str(root)) as repo:
            n = len(repo.index.stages)
            remotes = list(repo.config.get("remote", {}))
            default = repo.config.get("core", {}).get("remote")
        where = f"default remote '{default}'" if default else "no default remote (dvc push off)"
        return Check("DVC repo", "ok", f"{n} stages; remotes {remotes or 'none'}; {where}")

    out.append(_guard("DVC repo", run))
    return out


def check_prefect(timeout_s: float = 3.0) -> Check:
    def run() -> Check:
        import httpx
        from prefect.settings import PREFECT_API_URL

        from ragcourt.core.bounded_http import ReplyBound, UnsafeReply, get_bounded

        url = PREFECT_API_URL.value()
        if not url:
            return Check(
                "Prefect API",
                "warn",
                "no PREFECT_API_URL: flows run against a temporary local server and are not "
                "kept; start one with `prefect server start` and "
                "`prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api`",
            )
        try:
            resp = get_bounded(
                f"{url.rstrip('/')}/health",
                {},
                ReplyBound(DOCTOR_REPLY_BOUND, "doctor's reply bound"),
                timeout_s,
            )
        except UnsafeReply as err:
            return Check("Prefect API", "fail", f"{url} unreachable ({err})")
        except httpx.HTTPError as err:
            return Check("Prefect API", "fail", f"{url} unreachable ({type(err).__name__})")
        if resp.status != 200:
            return Check("Prefect API", "fail", f"{url}/health answered {resp.status}")
        return Check("Prefect API", "ok", f"{url} is healthy")

    return _guard("Prefect API", run)


def check_languages(params: Params, root: Path) -> list[Check]:
    """The corpus language mix (documents table, if ingested) and what serves each language:
    warn when a configured embedder was not trained on a corpus language."""

    def run() -> list[Check]:
        from ragcourt.core import catalog
        from ragcourt.core.io import read_table
        from ragcourt.retrieval.language_serving import language_serving

        path = root / catalog.path("documents")
        if not path.is_file():
            return [Check("languages", "ok", f"{path} not built yet (run ingest)")]
        langs = read_table(path, "documents", columns=["language"])["language"].to_list()
        return [
            Check(
                f"language {r.label}",
                "ok" if r.embedder_fits else "warn",
                f"{r.documents} documents; BM25 {r.bm25_tokenizer}; {r.embedders}",
            )
            for r in language_serving(langs, params)
        ]

    try:
        return run()
    except RagcourtError as err:
        return [Check("languages", "fail", str(err))]
    except Exception as err:  # an old documents table or a broken install
        return [Check("languages", "fail", f"{type(err).__name__}: {err}")]


def check_profiles(params_path: Path, root: Path = Path(".")) -> list[Check]:
    """Which profile params match (``ragcourt profile apply``), and for every profile
    whether its ``local/`` models are installed (sha256-verified, memoised)."""
    from ragcourt.core.model_registry import load_registry
    from ragcourt.llm.gguf_files import resolve_gguf
    from ragcourt.orchestration.profiles import is_active, merged_params, profile_names

    names = profile_names(root)
    if not names:
        return []

    def one(name: str) -> Check:
        label = f"profile {name}"
        merged = merged_params(name, params_path, root)
        registry = load_registry(root / merged.llm.models_file)
        missing = []
        models = local_models(merged)
        for model in models:
            try:
                resolve_gguf(model, registry.llm(model))
            except RagcourtError as err:
                missing.append(str(err))
        state = "active" if is_active(name, params_path, root) else "not active"
        if missing:
            return Check(label, "warn", f"{state}; model missing: {'; '.join(missing)}")
        how = "" if state == "active" else f" (ragcourt profile apply {name})"
        return Check(label, "ok", f"{state}{how}; models installed: {', '.join(models)}")

    return [_guard(f"profile {n}", partial(one, n)) for n in names]


def trained_roles(params: Params) -> list[Role]:
    """The trained-judge roles the params use (QA filter, relevance grader, correctness): the
    kinds they name (null: the registry's default) against the kinds that load each one."""
    from ragcourt.judging.graders.builtin import TRAINED_GRADER
    from ragcourt.judging.relevance_graders import TRAINED_RELEVANCE
    from ragcourt.judging.trained_correctness import TRAINED_JUDGE
    from ragcourt.judging.vocabulary import CORRECTNESS_MODE, RELEVANCE_GRADER
    from ragcourt.qagen.filter_registry import role_kinds
    from ragcourt.qagen.trained_filter import TRAINED_ANSWERABILITY

    roles: list[Role] = []
    if role_kinds(params.qagen.filter_kinds)["answerability"] == TRAINED_ANSWERABILITY:
        roles.append("answerability")
    if RELEVANCE_GRADER.kind(params) == TRAINED_RELEVANCE:
        roles.append("relevance")
    jp = params.judge
    used = {jp.judges[n].kind for n in jp.primaries if n in jp.judges}
    if CORRECTNESS_MODE.kind(params) == TRAINED_GRADER or TRAINED_JUDGE in used:
        roles.append("correctness")
    return roles


def check_trained_judges(params: Params) -> list[Check]:
    """Each trained judge the params use loads its weights (and its embedders are present)."""
    from ragcourt.retrieval.embedders import resolve_model_dir
    from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR, TrainedJudges

    judges = TrainedJudges(Path(params.judge.trained_weights or WEIGHTS_DIR))

    def loaded(role: Role) -> Check:
        model = judges.model(role)
        _ = judges.idf
        for embedder in model.embedders:
            resolve_model_dir(embedder)
        return Check(
            f"trained judge {role}", "ok", f"{judges.directory} ({', '.join(model.embedders)})"
        )

    return [
        _guard(f"trained judge {role}", partial(loaded, role)) for role in trained_roles(params)
    ]


def run_checks(params_path: Path, root: Path = Path("."), call: bool = False) -> list[Check]:
    """Every check, in the order they are shown (``call``: one real call per hosted model)."""
    checks = [check_python()]
    try:
        params = load_params(params_path)
        checks.append(Check("params", "ok", str(params_path)))
    except RagcourtError as err:
        params = None
        checks.append(Check("params", "fail", str(err)))
    if params is not None:
        systems_check, systems = check_systems(params)
        checks.append(systems_check)
        checks += check_embedders(params)
        checks += check_trained_judges(params)
        local = check_local_llms(params, systems)
        checks += local
        ok_names = [
            c.name.removeprefix("local LLM ")
            for c in local
            if c.status == "ok" and c.name.startswith("local LLM ")
        ]
        checks += check_local_llm_calls(params, systems, ok_names)
        for model, stages in hosted_models(params, systems).items():
            checks += _guard_all(
                f"hosted {model}", partial(check_hosted_model, params, model, stages, call)
            )
        checks += check_profiles(params_path, root)
        checks += check_languages(params, root)
    checks.append(check_llama_cpp())
    if params is not None:
        checks += check_dvc(root.resolve())
    else:  # DVC's own parser reads params.yaml without our bounds (aliases, nesting)
        checks.append(Check("DVC repo", "warn", f"not checked: {params_path} did not load"))
    checks.append(check_prefect())
    return checks

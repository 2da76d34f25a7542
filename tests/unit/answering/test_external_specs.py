"""External systems in the systems file: validation errors name file, system and key; the
built-in kind stays the default with unchanged config hashes; plan entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ragcourt.answering.partitions import config_hash
from ragcourt.answering.systems import (
    LIST_COLUMNS,
    ExternalSystem,
    System,
    builtin_systems,
    external_systems,
    group_by_retrieval,
    list_row,
    parse_systems,
)
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
DEFAULTS = {"chunking": "c256", "embedder": "minilm", "max_tokens": 64}


@pytest.fixture(scope="module")
def params() -> Params:
    """The shipped params without control systems (these tests list the systems file's own)."""
    p = load_params(ROOT / "params.yaml")
    p.controls.kinds = []
    return p


def parse(systems: list[dict[str, Any]], params: Params, **doc: Any) -> list[Any]:
    data = {"defaults": DEFAULTS, "systems": systems, **doc}
    return parse_systems(data, params, "cfg/sys.yaml", check_models=False, prompts_dir=PROMPTS)


FILE = {"name": "team-b", "kind": "answers_file", "path": "data/external/team-b.jsonl"}
PY = {"name": "mine", "kind": "python", "callable": "examples.plain_function_system:answer"}
HTTP = {
    "name": "svc",
    "kind": "http",
    "url": "http://127.0.0.1:9/ask",
    "body": {"q": "{question}", "id": "{question_id}"},
    "answer_path": "data.answer",
    "contexts_path": "data.contexts",
    "headers": {"Authorization": "Bearer ${env:SVC_KEY}"},
}
CHAT = {
    "name": "chat",
    "kind": "http",
    "openai_chat": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"},
}


def test_three_external_kinds_parse_beside_builtin_in_config_order(params: Params) -> None:
    systems = parse([{"name": "b", "retriever": "bm25"}, FILE, PY, HTTP, CHAT], params)
    assert [s.name for s in systems] == ["b", "team-b", "mine", "svc", "chat"]
    assert [s.kind for s in systems] == ["builtin", "answers_file", "python", "http", "http"]
    ext = external_systems(systems)
    assert [s.name for s in builtin_systems(systems)] == ["b"]
    assert [s.name for s in ext] == ["team-b", "mine", "svc", "chat"]
    assert all(isinstance(s, ExternalSystem) and s.is_external for s in ext)
    assert [s.generator_model for s in ext] == [
        "external:answers_file", "external:python", "external:http", "external:http"
    ]  # fmt: skip
    assert all(s.chunking is None and s.embedder is None and s.llm_models() == () for s in ext)
    assert list(group_by_retrieval(systems)) == [systems[0].retrieval]  # externals: no group
    # the defaults (chunking, max_tokens) are not merged into external entries
    assert "chunking" not in ext[0].describe()


def test_explicit_builtin_kind_keeps_the_config_hash(params: Params) -> None:
    plain = parse([{"name": "b", "retriever": "bm25", "top_k": 3}], params)[0]
    explicit = parse([{"name": "b", "retriever": "bm25", "top_k": 3, "kind": "builtin"}], params)[0]
    assert isinstance(plain, System) and isinstance(explicit, System)
    assert config_hash(plain, params, PROMPTS) == config_hash(explicit, params, PROMPTS)
    assert "kind" not in plain.describe()  # the hashed description did not grow a key


@pytest.mark.parametrize(
    ("system", "needle"),
    [
        ({**FILE, "colour": "red"}, "system 'team-b': key 'colour': unknown key"),
        ({**FILE, "path": "answers.xlsx"}, "key 'path'"),
        ({**FILE, "chunking": "c256"}, "key 'chunking': unknown key"),
        (
            {"name": "x", "kind": "magic"},
            "system 'x': key 'kind': unknown system kind 'magic' "
            "(registered: answers_file, builtin, http, python, shuffled)",
        ),
        ({**PY, "callable": "not a target"}, "system 'mine': key 'callable'"),
        ({**PY, "concurrency": 0}, "key 'concurrency'"),
        ({**PY, "timeout_s": 0}, "key 'timeout_s'"),
        ({**HTTP, "url": "ftp://x"}, "key 'url'"),
        ({**HTTP, "url": "http://h/${env:SVC_KEY}"}, "header values only"),
        ({**HTTP, "body": {"q": "hello"}}, "no '{question}' placeholder"),
        ({**HTTP, "body": '{"q": "{question}"'}, "body is not valid JSON"),
        ({**HTTP, "body": {"q": "{question}", "k": "${env:SVC_KEY}"}}, "header values only"),
        ({**HTTP, "headers": {"Authorization": "Bearer sk-123"}}, "holds a literal value"),
        ({**HTTP, "headers": {"X-Api-Key": "abc"}}, "holds a literal value"),
        ({**HTTP, "headers_env": {"Authorization": "not a var"}}, "not an environment variable"),
        ({**HTTP, "headers": {"X-Tag": "${TAG}"}}, "only ${env:NAME} references"),
        ({**HTTP, "headers": {"X Tag": "a"}}, "key 'headers': Value error, 'X Tag' is not"),
        ({**HTTP, "headers_env": {"X:Tag": "K"}}, "key 'headers_env': Value error, 'X:Tag' is not"),
        ({**HTTP, "answer_path": "a..b"}, "key 'answer_path'"),
        ({**HTTP, "method": "GET"}, "a GET request has no body"),
        ({**HTTP, "timeout": 3}, "key 'timeout': unknown key"),
        ({"name": "h", "kind": "http", "url": "http://h/x"}, "needs 'url' and 'answer_path'"),
        ({**CHAT, "url": "http://h/x"}, "openai_chat replaces ['url']"),
        ({**CHAT, "openai_chat": {"base_url": "http://h", "model": "m", "x": 1}}, "openai_chat.x"),
        ({**HTTP, "context_fields": {"text": "t"}, "contexts_path": None}, "needs 'contexts_path'"),
    ],
)
def test_bad_external_system_is_one_line_error_naming_file_and_system(
    params: Params, system: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ConfigError) as err:
        parse([system], params)
    msg = str(err.value)
    assert msg.startswith("cfg/sys.yaml: ") and "\n" not in msg
    assert needle in msg


def test_defaults_may_not_set_kind_and_grids_are_builtin_only(params: Params) -> None:
    with pytest.raises(ConfigError, match=r"key 'defaults.kind'"):
        parse([FILE], params, defaults={**DEFAULTS, "kind": "http"})
    grid = {"prefix": "g", "base": {"kind": "http"}, "factors": {"top_k": [1, 2]}}
    with pytest.raises(ConfigError, match=r"grids\[0\] \('g'\): key 'base.kind': grids expand"):
        parse([], params, grids=[grid])


def test_duplicate_names_and_identical_external_configs(params: Params) -> None:
    with pytest.raises(ConfigError, match="duplicate system name 'team-b'"):
        parse([FILE, {**PY, "name": "team-b"}], params)
    with pytest.raises(ConfigError, match="'team-b' and 'again' have the same configuration"):
        parse([FILE, {**FILE, "name": "again"}], params)
    with pytest.raises(ConfigError, match="key 'name'"):
        parse([{**FILE, "name": "../escape"}], params)


def test_headers_env_and_a_body_given_as_json_text(params: Params) -> None:
    body = '{"input": {"text": "{question}"}, "meta": ["{question_id}", 3]}'
    s = parse([{**HTTP, "body": body, "headers": {}, "headers_env": {"X-Api-Key": "K"}}], params)
    spec = s[0].spec
    assert spec.body == {"input": {"text": "{question}"}, "meta": ["{question_id}", 3]}
    assert spec.headers_env == {"X-Api-Key": "K"}
    with pytest.raises(ConfigError, match=r"set in both headers and headers_env"):
        parse([{**HTTP, "headers_env": {"authorization": "K"}}], params)


def test_plan_entries(params: Params, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/rag.py").write_text("def answer(q): return q\n")
    systems = parse(
        [
            {"name": "b", "retriever": "dense"},
            FILE,
            {**PY, "callable": "pkg.rag:answer", "inputs": ["data/chunks/c256.parquet"]},
            {**PY, "name": "installed", "callable": "json:dumps"},
            HTTP,
        ],
        params,
    )
    entries = [s.plan_entry() for s in systems]
    assert [(e.name, e.chunking, e.embedder, e.inputs) for e in entries] == [
        ("b", "c256", "minilm", ()),
        ("team-b", None, None, ("data/external/team-b.jsonl",)),
        ("mine", None, None, ("pkg/rag.py", "data/chunks/c256.parquet")),
        ("installed", None, None, ()),  # an installed module is not a project input
        ("svc", None, None, ()),
    ]


def test_example_systems_file_is_valid(params: Params) -> None:
    data = yaml.safe_load((ROOT / "examples/systems_external.yaml").read_text())
    systems = parse_systems(
        data, params, "examples/systems_external.yaml", check_models=False, prompts_dir=PROMPTS
    )
    assert [s.kind for s in systems] == ["builtin", "python", "python", "http", "http"]


def test_list_rows_show_kind_and_target_without_secrets(
    params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_KEY", "sk-never-shown")
    systems = parse([{"name": "b", "retriever": "bm25", "top_k": 3}, FILE, PY, HTTP, CHAT], params)
    rows = [list_row(s) for s in systems]
    assert all(list(r) == list(LIST_COLUMNS) for r in rows)
    assert rows[0]["kind"] == "builtin" and rows[0]["retriever"] == "bm25"
    assert rows[0]["generator / target"] == params.llm.model
    assert [r["generator / target"] for r in rows[1:]] == [
        "data/external/team-b.jsonl",
        "examples.plain_function_system:answer",
        "POST http://127.0.0.1:9/ask",
        "http://127.0.0.1:9/v1 (openai_chat, m)",
    ]
    assert rows[1]["chunking"] == "–"
    assert "sk-never-shown" not in repr(rows) + repr([s.describe() for s in systems])

"""Python systems: how targets are found and called, what their failures become."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from ragcourt.answering.external.python_callable import answer_with_python
from ragcourt.answering.external.specs import PythonSpec
from ragcourt.core.errors import ConfigError

QA = pl.DataFrame({"question_id": ["q1", "q2", "q3"], "question": ["one?", "two?", "three?"]})

MODULE = """
import asyncio, time

calls = []

def plain(question):
    calls.append(question)
    return question.upper()

def with_id(question, question_id):
    if question_id == "q2":
        raise RuntimeError("cannot answer " + question_id)
    return {"answer": question_id, "contexts": ["ctx for " + question]}

async def coro(question, **kw):
    await asyncio.sleep(0)
    return {"answer": kw["question_id"] + ":" + question}

def slow(question):
    if question == "two?":
        time.sleep(3)
    return "done"

def wrong(question):
    return 7

class Bot:
    def __init__(self, prefix):
        self.prefix = prefix
    async def __call__(self, question, question_id=None):
        return self.prefix + question

class FakeRunnable:
    def invoke(self, question):
        return {"answer": "invoked " + question}

runnable = FakeRunnable()
not_callable = 3

flaky_count = {}
def flaky(question):
    flaky_count[question] = flaky_count.get(question, 0) + 1
    if flaky_count[question] < 2:
        raise ConnectionError("try again")
    return "ok"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    name = f"userbot_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(MODULE))
    yield tmp_path / name
    sys.modules.pop(name, None)
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


def run(project: Path, attr: str, **kw: object) -> pl.DataFrame:
    spec = PythonSpec.model_validate(
        {"name": "p", "kind": "python", "callable": f"{project.name}:{attr}", **kw}
    )
    return answer_with_python("p", "external:python", spec, QA)


def test_plain_function_gets_the_question(project: Path) -> None:
    df = run(project, "plain")
    assert df["answer"].to_list() == ["ONE?", "TWO?", "THREE?"]
    assert df["model"].to_list() == ["external:python"] * 3
    assert df["retrieved"].list.len().to_list() == [0, 0, 0]  # no contexts supplied


def test_question_id_is_passed_when_named_and_an_exception_is_an_error_row(project: Path) -> None:
    df = run(project, "with_id")
    assert df["answer"].to_list() == ["q1", None, "q3"]
    assert df["error"].to_list() == [None, "raised RuntimeError: cannot answer q2", None]
    assert df["retrieved"][0][0]["text"] == "ctx for one?"


def test_async_function_class_and_runnable(project: Path) -> None:
    assert run(project, "coro")["answer"].to_list() == ["q1:one?", "q2:two?", "q3:three?"]
    df = run(project, "Bot", init={"prefix": "> "})
    assert df["answer"].to_list() == ["> one?", "> two?", "> three?"]
    assert run(project, "runnable")["answer"][0] == "invoked one?"


def test_timeout_bad_return_and_retries(project: Path) -> None:
    df = run(project, "slow", timeout_s=0.5)
    assert df["error"].to_list() == [None, "timed out after 0.5s (system process killed)", None]
    unsafe = run(project, "slow", timeout_s=0.5, isolation="in_process_unsafe")
    assert unsafe["error"].to_list() == [None, "timed out after 0.5s", None]
    bad = run(project, "wrong", max_retries=3)
    assert set(bad["error"]) == {
        "bad return value: returned int; expected a str, or a mapping/object with 'answer' "
        "(and optional 'contexts')"
    }
    # the per-question failure counter lives in the module's memory: one worker, so the retry
    # reaches the process that counted the first attempt
    flaky = run(project, "flaky", max_retries=1, backoff_s=0, concurrency=1)
    assert flaky["error"].null_count() == 3


def test_previous_answers_are_kept_and_only_failures_asked_again(project: Path) -> None:
    first = run(project, "with_id")
    # in this process, so the module's list of calls can be read here
    spec = PythonSpec(
        name="p", kind="python", callable=f"{project.name}:plain", isolation="in_process_unsafe"
    )
    answer_with_python("p", "external:python", spec, QA)
    mod = sys.modules[project.name]
    mod.calls.clear()
    again = answer_with_python("p", "external:python", spec, QA, previous=first)
    assert mod.calls == ["two?"]
    assert again["answer"].to_list() == ["q1", "TWO?", "q3"]


@pytest.mark.parametrize(
    ("attr", "extra", "needle"),
    [
        ("missing", {}, "has no attribute 'missing'"),
        ("not_callable", {}, "is neither callable nor a Runnable"),
        ("plain", {"init": {"x": 1}}, "key 'init' is only for a class"),
        ("Bot", {"init": {"nope": 1}}, "constructing"),
    ],
)
def test_bad_targets_are_config_errors(
    project: Path, attr: str, extra: dict[str, object], needle: str
) -> None:
    with pytest.raises(ConfigError) as err:
        run(project, attr, **extra)
    assert str(err.value).startswith("system 'p': ") and needle in str(err.value)


def test_unimportable_module(project: Path) -> None:
    spec = PythonSpec(name="p", kind="python", callable="no_such_module_xyz:f")
    with pytest.raises(ConfigError, match=r"cannot import module 'no_such_module_xyz'"):
        answer_with_python("p", "external:python", spec, QA)

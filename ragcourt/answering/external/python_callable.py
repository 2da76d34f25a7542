"""``kind: python``: the user's own Python code answers each question.

**Target** (``callable: package.module:attr``, imported with the project root on ``sys.path``):

* a function (sync or ``async def``), or any object with ``__call__``: called as
  ``fn(question)``, or ``fn(question, question_id=...)`` when its signature has a
  ``question_id`` parameter or ``**kwargs``;
* a class: instantiated once per run with the ``init`` keyword arguments, then used as above;
* a LangChain ``Runnable`` (anything with ``ainvoke`` / ``invoke``): ``ainvoke(question)``.

**Return contract** (:func:`~ragcourt.answering.external.replies.reply_from`): a ``str``, or a
mapping / object with ``answer`` and optional ``contexts`` (strings, ``{text, doc_id, score,
char_start, char_end}`` objects or LangChain ``Document`` s) and ``cost_usd``.

**Failures**: a module that does not import, a missing attribute or a failing constructor is a
one-line ConfigError before any question is asked. Per question, an exception (its type and
message become the error row), a timeout (``timeout_s``; a synchronous call keeps running in
its abandoned thread) or a return value that breaks the contract is an error row; exceptions
and timeouts are retried ``max_retries`` times with backoff, contract violations are not. At
most ``concurrency`` calls run at once (sync calls each in their own thread).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.answering.external.ask import Asker, ask_every_question
from ragcourt.answering.external.calls import CallFailed, CallPolicy, describe_exception, in_thread
from ragcourt.answering.external.replies import Reply, ReplyError, reply_from
from ragcourt.answering.external.routes import ANSWER_ROUTES, AnswerRoute
from ragcourt.answering.external.specs import PythonSpec
from ragcourt.core.errors import ConfigError

Invoker = Callable[[str, str], Awaitable[Any]]


def load_target(spec: PythonSpec, where: str) -> Any:
    """Import ``spec.callable`` (instantiating a class with ``spec.init``)."""
    root = str(Path.cwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        obj: Any = importlib.import_module(spec.module)
    except Exception as err:  # any import-time failure of user code is a config error
        raise ConfigError(
            f"{where}: key 'callable': cannot import module '{spec.module}' "
            f"({describe_exception(err)})"
        ) from None
    for part in spec.attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(
                f"{where}: key 'callable': '{spec.callable}' has no attribute '{part}'"
            )
        obj = getattr(obj, part)
    if inspect.isclass(obj):
        try:
            return obj(**spec.init)
        except Exception as err:
            raise ConfigError(
                f"{where}: constructing '{spec.callable}' with key 'init' failed "
                f"({describe_exception(err)})"
            ) from None
    if spec.init:
        raise ConfigError(f"{where}: key 'init' is only for a class; '{spec.callable}' is not one")
    return obj


def _accepts_question_id(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return any(p.name == "question_id" or p.kind is p.VAR_KEYWORD for p in params)


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an instance with async __call__
    )


def invoker(target: Any, where: str, name: str) -> Invoker:
    """How to call ``target`` for one question (rules in the module docstring)."""
    ainvoke, invoke = getattr(target, "ainvoke", None), getattr(target, "invoke", None)
    if callable(ainvoke):

        async def via_ainvoke(question: str, qid: str) -> Any:
            return await ainvoke(question)

        return via_ainvoke
    if callable(invoke):

        async def via_invoke(question: str, qid: str) -> Any:
            return await in_thread(lambda: invoke(question))

        return via_invoke
    if not callable(target):
        raise ConfigError(
            f"{where}: key 'callable': '{name}' is neither callable nor a Runnable "
            f"(got {type(target).__name__})"
        )
    pass_id = _accepts_question_id(target)

    def call(question: str, qid: str) -> Any:
        return target(question, question_id=qid) if pass_id else target(question)

    if _is_async(target):

        async def via_await(question: str, qid: str) -> Any:
            return await call(question, qid)

        return via_await

    async def via_thread(question: str, qid: str) -> Any:
        result = await in_thread(lambda: call(question, qid))
        return await result if inspect.isawaitable(result) else result

    return via_thread


def answer_with_python(
    name: str,
    model: str,
    spec: PythonSpec,
    qa: pl.DataFrame,
    previous: pl.DataFrame | None = None,
    where: str | None = None,
) -> pl.DataFrame:
    """Rows of table ``answers`` for a Python system (target loaded before any question)."""
    where = where or f"system '{name}'"
    inv = invoker(load_target(spec, where), where, spec.callable)
    policy = CallPolicy(spec.concurrency, spec.timeout_s, spec.max_retries, spec.backoff_s)

    async def ask(item: tuple[str, str]) -> Reply:
        qid, question = item
        try:
            value = await inv(question, qid)
        except Exception as err:  # the user's code failed on this question
            raise CallFailed(f"raised {describe_exception(err)}") from None
        try:
            return reply_from(value)
        except ReplyError as err:
            raise CallFailed(f"bad return value: {err}", retryable=False) from None

    async def make() -> tuple[Asker, Callable[[], Awaitable[None]]]:
        async def close() -> None:
            return None

        return ask, close

    return ask_every_question(name, model, qa, make, policy, previous)


ANSWER_ROUTES.register("python")(
    AnswerRoute(
        lambda name, model, spec, qa, previous: answer_with_python(name, model, spec, qa, previous),
        lambda spec: str(spec.callable),
    )
)

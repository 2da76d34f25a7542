"""Loading and calling the target of a ``kind: python`` system (rules in
:mod:`ragcourt.answering.external.python_callable`), shared by the stage's own process and the
worker processes (:mod:`ragcourt.answering.external.python_worker`): light imports only, so a
worker starts fast."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ragcourt.answering.external.bounds import bound_reply
from ragcourt.answering.external.calls import CallFailed, describe_exception, in_thread
from ragcourt.answering.external.replies import Reply, ReplyError, reply_from
from ragcourt.answering.external.specs import PythonSpec
from ragcourt.core.errors import ConfigError
from ragcourt.core.params import LimitsParams

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


async def answer_one(inv: Invoker, qid: str, question: str, limits: LimitsParams) -> Reply:
    """The bounded reply of the target to one question; :class:`CallFailed` when it raised
    (``SystemExit`` included) or broke the return contract or a size limit."""
    try:
        value = await inv(question, qid)
    except (Exception, SystemExit) as err:  # the user's code failed on this question
        raise CallFailed(f"raised {describe_exception(err)}") from None
    try:
        return bound_reply(reply_from(value), limits)
    except ReplyError as err:
        raise CallFailed(f"bad return value: {err}", retryable=False) from None

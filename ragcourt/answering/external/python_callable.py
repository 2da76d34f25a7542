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

**Isolation** (``isolation``): ``process`` (default) runs the target in worker processes
(:mod:`~ragcourt.answering.external.python_worker`), at most ``concurrency`` of them, one
question at a time each: ``sys.exit``, ``os._exit``, a segfault or a hang (killed at
``timeout_s``) become error rows of the questions in flight (``system process exited with code
3``) and the stage goes on with a fresh worker. ``in_process_unsafe`` calls the target in the
stage's own process (no per-call process round trip; a crash or ``os._exit`` ends the stage,
and a timed-out synchronous call keeps running in its abandoned thread).

**Failures**: a module that does not import, a missing attribute or a failing constructor is a
one-line ConfigError before any question is asked. Per question, an exception (``SystemExit``
included; its type and message become the error row), a timeout (``timeout_s``), a return
value that breaks the contract or a size limit (params ``limits``) is an error row; exceptions
and timeouts are retried ``max_retries`` times with backoff, contract violations are not. At
most ``concurrency`` calls run at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import polars as pl

from ragcourt.answering.external.ask import Asker, ask_every_question
from ragcourt.answering.external.calls import CallPolicy
from ragcourt.answering.external.python_target import answer_one, invoker, load_target
from ragcourt.answering.external.python_worker import WorkerPool
from ragcourt.answering.external.replies import Reply
from ragcourt.answering.external.routes import ANSWER_ROUTES, AnswerRoute
from ragcourt.answering.external.specs import PythonSpec
from ragcourt.core.params import LimitsParams

__all__ = ["answer_with_python", "invoker", "load_target"]


def answer_with_python(
    name: str,
    model: str,
    spec: PythonSpec,
    qa: pl.DataFrame,
    previous: pl.DataFrame | None = None,
    where: str | None = None,
    limits: LimitsParams | None = None,
) -> pl.DataFrame:
    """Rows of table ``answers`` for a Python system (target loaded before any question)."""
    where = where or f"system '{name}'"
    bounds = limits or LimitsParams()
    if spec.isolation == "in_process_unsafe":
        inv = invoker(load_target(spec, where), where, spec.callable)
        policy = CallPolicy(spec.concurrency, spec.timeout_s, spec.max_retries, spec.backoff_s)

        async def ask(item: tuple[str, str]) -> Reply:
            return await answer_one(inv, item[0], item[1], bounds)

        async def make() -> tuple[Asker, Callable[[], Awaitable[None]]]:
            async def close() -> None:
                return None

            return ask, close

        return ask_every_question(name, model, qa, make, policy, previous)

    # the pool enforces timeout_s (killing the worker); the outer bound also covers a start
    outer = spec.timeout_s + spec.start_timeout_s + 10.0
    policy = CallPolicy(spec.concurrency, outer, spec.max_retries, spec.backoff_s)

    async def make_pool() -> tuple[Asker, Callable[[], Awaitable[None]]]:
        pool = WorkerPool(spec, bounds, where, spec.concurrency)
        await pool.start()

        async def ask_worker(item: tuple[str, str]) -> Reply:
            return await pool.ask(item[0], item[1])

        return ask_worker, pool.close

    return ask_every_question(name, model, qa, make_pool, policy, previous)


ANSWER_ROUTES.register("python")(
    AnswerRoute(
        lambda name, model, spec, qa, previous, limits: answer_with_python(
            name, model, spec, qa, previous, limits=limits
        ),
        lambda spec: str(spec.callable),
    )
)

"""LLM judge: a binary correct/incorrect verdict from any litellm model string.

The model reads (question, every reference answer, candidate answer). From prompt version
v2 the three are fenced data and the verdict is P(correct) = P("yes") at
the first answer token after "Is the candidate answer correct? Answer with one word: yes or
no." (:func:`ragcourt.llm.graded.grade`, form ``probability``); verdict = P(correct) >=
``threshold`` (the judge spec's, default 0.5). ``judge.reason: true`` or a model without
logprobs gives the generated form ``{"reason": ..., "label": "yes"|"no"}``. Version v1 keeps
the original JSON ``{"reasoning": ..., "verdict": ...}`` (DAFE C.6.4, form ``generated``).
A failed call or an unparseable reply becomes a verdict with ``error`` set (never a default).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragcourt.core.prompts import has_prompt
from ragcourt.core.prompts import render as render_prompt
from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.vocabulary import ANSWER_JUDGES, AnswerItem, AnswerVerdict, JudgeContext
from ragcourt.llm.graded import YES_NO, Graded, grade

if TYPE_CHECKING:
    from ragcourt.llm import ChatRequest

PROMPT_AREA = "judge"
NO_QUESTION = "(no question given: judge the answer against the reference only)"

_TRUE = {"correct", "true", "yes", "1", "right", "equivalent"}
_FALSE = {"incorrect", "false", "no", "0", "wrong", "not correct", "not equivalent"}


def _drop_description(schema: dict[str, Any]) -> None:
    schema.pop("description", None)


MAX_REASON_CHARS = 500  # "one or two sentences"; ~125 tokens, well inside max_tokens


def reason_field(**kwargs: Any) -> Any:
    """A free-text reason field whose *JSON schema* carries ``maxLength`` = MAX_REASON_CHARS.

    Only the schema is capped, not validation: a schema grammar makes a local model close
    the string (so a runaway reply still ends its JSON within ``max_tokens``), while a
    hosted model that writes a longer reason is still parsed, not turned into an error."""
    return Field(json_schema_extra={"maxLength": MAX_REASON_CHARS}, **kwargs)


class ReplyModel(BaseModel):
    """Base of the judges' JSON replies. The schema sent to the model (grammar, repair
    message) leaves out the class docstring, which is for readers of this code, not for
    the model; free-text fields use :func:`reason_field` (schema-only length cap)."""

    model_config = ConfigDict(json_schema_extra=_drop_description)


class VerdictReply(ReplyModel):
    """The LLM judge's JSON reply (field order = generation order: reason, then verdict)."""

    reasoning: str = reason_field()
    verdict: Literal["correct", "incorrect"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, v: object) -> object:
        """Accept booleans and common spellings (``True``, ``"Correct."``, ``"no"``)."""
        if isinstance(v, bool):
            return "correct" if v else "incorrect"
        if isinstance(v, str):
            key = v.strip().strip(".!\"'").lower()
            if key in _TRUE:
                return "correct"
            if key in _FALSE:
                return "incorrect"
        return v


def format_references(refs: Sequence[str]) -> str:
    """References as a numbered list, one per line."""
    return "\n".join(f"{i}. {r}" for i, r in enumerate(refs, 1)) or "(none)"


def render(name: str, version: str, data: dict[str, str] | None = None) -> str:
    """Template ``name`` of ``configs/prompts/judge.yaml`` version ``version`` with the
    untrusted ``data`` fields (fenced from v2, see :func:`ragcourt.core.prompts.render`)."""
    return render_prompt(PROMPT_AREA, name, version, data)


def one_token(name: str, version: str) -> bool:
    """True when ``version`` asks judge ``name`` for one label token (``<name>_ask_token``)."""
    return has_prompt(PROMPT_AREA, f"{name}_ask_token", version)


def ask_requests(
    name: str,
    version: str,
    model: str,
    fields: Sequence[dict[str, str]],
    tag: str,
    temperature: float = 0.0,
    seed: int | None = 0,
    max_tokens: int = 256,
) -> tuple[list[ChatRequest], list[ChatRequest]]:
    """(one-token requests, reason requests) for judge ``name``: system prompt, the user
    template with the fenced ``fields``, then ``<name>_ask_token`` or ``<name>_ask_reason``.
    The prefix up to the ask is the same in both, shared parts first."""
    from ragcourt.llm import ChatRequest

    system = render(f"{name}_system", version)
    token_ask = render(f"{name}_ask_token", version)
    reason_ask = render(f"{name}_ask_reason", version)
    token, reason = [], []
    for data in fields:
        user = render(f"{name}_user", version, data)
        token.append(
            ChatRequest.of(
                model, system, f"{user}\n\n{token_ask}", max_tokens=1, temperature=0.0,
                seed=seed, tag=tag,
            )
        )  # fmt: skip
        reason.append(
            ChatRequest.of(
                model, system, f"{user}\n\n{reason_ask}", max_tokens=max_tokens,
                temperature=temperature, seed=seed, json_mode=True, tag=tag,
            )
        )  # fmt: skip
    return token, reason


def item_fields(it: AnswerItem) -> dict[str, str]:
    """The untrusted fields of an answer judge's prompt, in prompt order."""
    return {
        "question": it.question or NO_QUESTION,
        "references": format_references(it.references),
        "answer": it.answer,
    }


def prompt_requests(
    name: str, version: str, model: str, fields: Iterable[dict[str, str]], **opts: Any
) -> list[ChatRequest]:
    """One chat request per ``fields`` mapping: the ``<name>_system`` prompt of ``version``
    and its ``<name>_user`` template with those (untrusted) fields; ``opts`` go to
    :meth:`ChatRequest.of` (max_tokens, temperature, seed, json_mode, tag)."""
    from ragcourt.llm import ChatRequest

    system = render(f"{name}_system", version)
    return [
        ChatRequest.of(model, system, render(f"{name}_user", version, data), **opts)
        for data in fields
    ]


def judge_requests(
    items: Sequence[AnswerItem],
    model: str,
    version: str,
    temperature: float,
    tag: str,
    seed: int | None = 0,
) -> list[ChatRequest]:
    """One chat request per item with the verdict prompt of ``version`` (``seed`` =
    ``llm.seed``, sent to the provider and part of the cache key)."""
    return prompt_requests(
        "verdict", version, model, map(item_fields, items), max_tokens=256,
        temperature=temperature, seed=seed, json_mode=True, tag=tag,
    )  # fmt: skip


def graded_verdict(name: str, g: Graded, threshold: float) -> AnswerVerdict:
    """An answer verdict from P(correct) (or the generated label): correct iff score >=
    ``threshold``; the score is kept, a failure is an error verdict."""
    if not g.ok or g.score is None:
        return AnswerVerdict(name, None, g.raw or g.reason, error=g.error, form=g.form)
    return AnswerVerdict(name, g.score >= threshold, g.reason, score=g.score, form=g.form)


@dataclass
class LLMJudge:
    """Binary verdict from ``model`` via the gateway; no score (verdicts are categorical)."""

    name: str
    model: str
    prompt_version: str
    ctx: JudgeContext  # the gateway is created on first use, not when the judge is built
    temperature: float = 0.0
    seed: int | None = 0
    uses_llm: bool = True

    threshold: float = 0.5  # P(correct) >= threshold -> correct (one-token form)
    reason: bool = False  # generated form with a written reason (judge.reason)

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        if not items:
            return []
        tag = f"judge.{self.name}"
        if one_token("verdict", self.prompt_version):
            token, why = ask_requests(
                "verdict", self.prompt_version, self.model, [item_fields(it) for it in items],
                tag, self.temperature, self.seed,
            )  # fmt: skip
            graded = grade(self.ctx.gateway, token, why, YES_NO, self.reason, f"judge {self.name}")
            return [graded_verdict(self.name, g, self.threshold) for g in graded]
        reqs = judge_requests(
            items, self.model, self.prompt_version, self.temperature, tag, self.seed
        )
        results = self.ctx.gateway.structured(reqs, VerdictReply, desc=f"judge {self.name}")
        out: list[AnswerVerdict] = []
        for res in results:
            if not res.ok or res.value is None:
                err = res.error or "no parsed reply"
                failed = AnswerVerdict(self.name, None, res.raw[:500], error=err, form="generated")
                out.append(failed)
                continue
            reply = res.value
            verdict = reply.verdict == "correct"
            out.append(AnswerVerdict(self.name, verdict, reply.reasoning, form="generated"))
        return out


@ANSWER_JUDGES.register("llm")
def _llm(name: str, spec: JudgeSpec, ctx: JudgeContext) -> LLMJudge:
    render("verdict_system", spec.prompt_version)  # unknown prompt version: fail at build
    return LLMJudge(
        name=name,
        model=ctx.params.llm.resolve(spec.model),
        prompt_version=spec.prompt_version,
        ctx=ctx,
        temperature=ctx.params.llm.temperature,
        seed=ctx.params.llm.seed,
        threshold=0.5 if spec.threshold is None else spec.threshold,
        reason=ctx.params.judge.reason,
    )

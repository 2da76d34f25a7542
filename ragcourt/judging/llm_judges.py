"""LLM judge: a binary correct/incorrect verdict from any litellm model string.

The model reads (question, candidate answer, every reference answer) and replies with JSON
``{"reasoning": ..., "verdict": "correct"|"incorrect"}`` - reasoning first, then the verdict
(DAFE C.6.4). Replies are parsed with ``Gateway.structured``; a failed call or an
unparseable reply becomes a verdict with ``error`` set (never a default verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragcourt.core.params import JudgeSpec
from ragcourt.core.prompts import prompt
from ragcourt.judging.vocabulary import ANSWER_JUDGES, AnswerItem, AnswerVerdict, JudgeContext

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


def render(name: str, version: str, **fields: str) -> str:
    """Fill template ``name`` of ``configs/prompts/judge.yaml`` version ``version``."""
    return prompt(PROMPT_AREA, name, version).format(**fields)


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
    from ragcourt.llm import ChatRequest

    system = render("verdict_system", version)
    return [
        ChatRequest.of(
            model,
            system,
            render(
                "verdict_user",
                version,
                question=it.question or NO_QUESTION,
                references=format_references(it.references),
                answer=it.answer,
            ),
            max_tokens=256,
            temperature=temperature,
            seed=seed,
            json_mode=True,
            tag=tag,
        )
        for it in items
    ]


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

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        if not items:
            return []
        reqs = judge_requests(
            items,
            self.model,
            self.prompt_version,
            self.temperature,
            f"judge.{self.name}",
            self.seed,
        )
        results = self.ctx.gateway.structured(reqs, VerdictReply, desc=f"judge {self.name}")
        out: list[AnswerVerdict] = []
        for res in results:
            if not res.ok or res.value is None:
                err = res.error or "no parsed reply"
                out.append(AnswerVerdict(self.name, None, res.raw[:500], error=err))
                continue
            reply = res.value
            out.append(AnswerVerdict(self.name, reply.verdict == "correct", reply.reasoning))
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
    )

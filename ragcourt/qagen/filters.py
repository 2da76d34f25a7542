"""Reusable QA-quality judges (spec §2), registered as QA filters, and the standalone rule.

Three LLM judges; their prompts are ``configs/prompts/qagen_filters.yaml``
(``qagen.filter_prompt_version``):

* answerability(question, context): all facts needed are in the context;
* faithfulness(answer, context): the answer's claims are stated in the context;
* relevance(question, answer): the answer responds directly to the question.

From v2 the fields are fenced data and each judge is a yes/no question:
score = P(yes) at the first answer token (form ``probability``, one forward pass), or with
``filter_reason`` / a model without logprobs a generated ``{"reason", "label": "yes"|"no"}``
scored 1/0 (form ``generated``), see :mod:`ragcourt.llm.graded`. v1 asks for the original
JSON ``{"reason": "...", "score": ...}`` (answerability 0/1, the others a 0-1 share).

A model or parse failure is returned as a :class:`JudgeOutcome` with ``error`` set and no score,
never as an invented value. Each judge is registered in
:data:`~ragcourt.qagen.filter_registry.QA_FILTERS` under its name; ``faithfulness`` and
``relevance`` are the defaults of their roles (``qagen.filter_kinds``; the roles and their order
are :data:`~ragcourt.qagen.filter_registry.FILTER_ROLES`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator

from ragcourt.core.prompts import has_prompt, prompt, render
from ragcourt.llm.graded import YES_NO, Graded, grade
from ragcourt.llm.types import ChatRequest, StructuredResult
from ragcourt.qagen.filter_registry import QA_FILTERS, JudgeOutcome, JudgeSettings, QAItem
from ragcourt.qagen.questions_zh import chinese_not_standalone_reason

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

PROMPT_AREA = "qagen_filters"
TAG_AREA = "qagen"


# The JSON schema (not the validation) caps the reason, so a grammar-constrained local model
# closes the string instead of running into max_tokens with half a JSON object.
REASON_FIELD: Any = Field(json_schema_extra={"maxLength": 200})


class ScoreVerdict(BaseModel):
    """Graded judge reply: a one-sentence reason, then a score in [0, 1]."""

    reason: str = REASON_FIELD
    score: float = Field(ge=0.0, le=1.0)


_YES = {"1", "yes", "true", "answerable"}
_NO = {"0", "no", "false", "unanswerable", "not answerable"}


class BinaryVerdict(BaseModel):
    """Binary judge reply: a one-sentence reason, then 0 or 1.

    Accepts the spellings small models produce for the same value (``true``/``"yes"``/``1.0``);
    anything else (e.g. ``0.7``) is a parse failure, not silently rounded.
    """

    reason: str = REASON_FIELD
    score: Literal[0, 1]

    @field_validator("score", mode="before")
    @classmethod
    def _coerce(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float) and v in (0.0, 1.0):
            return int(v)
        if isinstance(v, str):
            s = v.strip().strip(".").casefold()
            if s in _YES:
                return 1
            if s in _NO:
                return 0
        return v


def _requests(
    judge: str, fields: Sequence[dict[str, str]], cfg: JudgeSettings
) -> list[ChatRequest]:
    system = prompt(PROMPT_AREA, f"{judge}_system", cfg.prompt_version, cfg.prompts_dir)
    user = prompt(PROMPT_AREA, f"{judge}_user", cfg.prompt_version, cfg.prompts_dir)
    return [
        ChatRequest.of(
            cfg.model,
            system,
            user.format(**f),
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            seed=cfg.seed,
            json_mode=True,
            tag=f"{TAG_AREA}.{judge}",
        )
        for f in fields
    ]


def _one_token_requests(
    judge: str, fields: Sequence[dict[str, str]], cfg: JudgeSettings
) -> tuple[list[ChatRequest], list[ChatRequest]]:
    """(one-token, reason) requests: fenced user template, then the ask (v2 prompts)."""

    def tmpl(name: str, data: dict[str, str] | None = None) -> str:
        version, where = cfg.prompt_version, cfg.prompts_dir
        return render(PROMPT_AREA, f"{judge}_{name}", version, data, None, where)

    system, token_ask, reason_ask = tmpl("system"), tmpl("ask_token"), tmpl("ask_reason")
    token, why = [], []
    for f in fields:
        user = tmpl("user", f)
        common: dict[str, Any] = {"seed": cfg.seed, "tag": f"{TAG_AREA}.{judge}"}
        token.append(
            ChatRequest.of(
                cfg.model, system, f"{user}\n\n{token_ask}", max_tokens=1, temperature=0.0,
                **common,
            )
        )  # fmt: skip
        why.append(
            ChatRequest.of(
                cfg.model, system, f"{user}\n\n{reason_ask}", max_tokens=cfg.max_tokens,
                temperature=cfg.temperature, json_mode=True, **common,
            )
        )  # fmt: skip
    return token, why


def _graded_outcomes(judge: str, graded: Sequence[Graded], model: str) -> list[JudgeOutcome]:
    return [
        JudgeOutcome(judge, g.score, g.reason, None, g.raw, model, g.form)
        if g.ok
        else JudgeOutcome(judge, None, None, g.error or "no score", g.raw, model, g.form)
        for g in graded
    ]


def _outcomes(
    judge: str, results: Sequence[StructuredResult[Any]], model: str
) -> list[JudgeOutcome]:
    out: list[JudgeOutcome] = []
    for r in results:
        if r.ok and r.value is not None:
            v = r.value
            reason = v.reason.strip()
            out.append(JudgeOutcome(judge, float(v.score), reason, None, r.raw, model, "generated"))
        else:
            err = r.error or "judge returned no value"
            out.append(JudgeOutcome(judge, None, None, err, r.raw, model, "generated"))
    return out


def _run(
    gw: Gateway,
    judge: str,
    fields: Sequence[dict[str, str]],
    cfg: JudgeSettings,
    desc: str | None,
    schema: type[BaseModel],
) -> list[JudgeOutcome]:
    if not fields:
        return []
    if has_prompt(PROMPT_AREA, f"{judge}_ask_token", cfg.prompt_version, cfg.prompts_dir):
        token, why = _one_token_requests(judge, fields, cfg)
        graded = grade(gw, token, why, YES_NO, cfg.reason, desc or judge)
        return _graded_outcomes(judge, graded, cfg.model)
    results = gw.structured(_requests(judge, fields, cfg), schema, desc=desc or judge)
    return _outcomes(judge, results, cfg.model)


@dataclass(frozen=True)
class PairJudge:
    """A QA filter judge reading two texts per item, ``first`` and ``second`` (prompt field
    names, also the :class:`QAItem` attributes they come from); ``judge`` names its prompts,
    its kind and the role its outcomes report; v1 prompts reply with ``schema``."""

    judge: str
    first: str
    second: str
    schema: type[BaseModel] = ScoreVerdict

    def __call__(
        self,
        gw: Gateway,
        firsts: Sequence[str],
        seconds: Sequence[str],
        cfg: JudgeSettings,
        desc: str | None = None,
    ) -> list[JudgeOutcome]:
        """One outcome per (firsts[i], seconds[i]) pair, in order."""
        if len(firsts) != len(seconds):
            raise ValueError(
                f"{self.judge} {self.first}s/{self.second}s: "
                f"got {len(firsts)} and {len(seconds)} items"
            )
        fields = [{self.first: a, self.second: b} for a, b in zip(firsts, seconds, strict=True)]
        return _run(gw, self.judge, fields, cfg, desc, self.schema)

    def on_items(
        self, gw: Gateway, items: Sequence[QAItem], cfg: JudgeSettings, desc: str | None = None
    ) -> list[JudgeOutcome]:
        """The judge as a registered QA filter: its two fields read off each item."""
        firsts = [getattr(i, self.first) for i in items]
        return self(gw, firsts, [getattr(i, self.second) for i in items], cfg, desc)


judge_answerability = PairJudge("answerability", "question", "context", BinaryVerdict)
"""Answerability (0/1): can each question be answered from its context alone?"""
judge_faithfulness = PairJudge("faithfulness", "answer", "context")
"""Faithfulness (0-1): share of each answer's claims stated in its context."""
judge_relevance = PairJudge("relevance", "question", "answer")
"""Answer relevance (0-1): how directly each answer responds to its question."""

# --- the registered QA filters -----------------------------------------------------------

answerability_filter = QA_FILTERS.register(judge_answerability.judge)(judge_answerability.on_items)
faithfulness_filter = QA_FILTERS.register(
    judge_faithfulness.judge, default=judge_faithfulness.judge
)(judge_faithfulness.on_items)
relevance_filter = QA_FILTERS.register(judge_relevance.judge, default=judge_relevance.judge)(
    judge_relevance.on_items
)


# --- self-contained questions --------------------------------------------------------------

_POINTS_AT_CONTEXT = re.compile(
    r"\b(?:the|this|that|above|given|following|provided)\s+"
    r"(?:text|passage|context|paragraph|excerpt)s?\b|\bthis\s+question\b",
    re.IGNORECASE,
)
# the document's own voice: "the speaker", "the statement", "we", "our" (lower-case only, so
# titles such as "Our Lady" or "My Fair Lady" are not caught; a sentence-initial "We" is)
_DOCUMENT_VOICE = re.compile(
    r"\b(?:the|this)\s+(?:speaker|speech|address|statement|report|document|article|author"
    r"|writer|narrator)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"^\s*We\b|\b(?:we|us|our|ours|me|my)\b")
_ASKS_WHAT_IS_DISCUSSED = re.compile(
    r"\b(?:being|is|are|was|were)\s+(?:discussed|mentioned|talked\s+about)\b", re.IGNORECASE
)


def not_standalone_reason(question: str) -> str | None:
    """Why ``question`` is not self-contained, or None.

    spec §2 asks for a specific, unambiguous question. One that points at "the text" / "this
    passage" (or asks about "this question"), speaks in the document's voice ("the speaker",
    "the statement", "we", "our") or asks what "is being discussed" cannot be asked by a user
    who has not seen the context, so it is rejected before any answer or judge call. A lexical
    rule, not a model: on SQuAD v1.1 train it rejects 0.3% of the human questions
    (``docs/results/qa-generation.md``). A question mostly in Chinese characters is also read
    by the Chinese rules (:func:`~ragcourt.qagen.questions_zh.chinese_not_standalone_reason`:
    ``文中``, ``这些``, ``该``, ``我们``, ``你``); others never reach them.
    """
    if (m := _POINTS_AT_CONTEXT.search(question)) is not None:
        return f"refers to '{m.group(0)}', so it only makes sense next to the context"
    if (m := _DOCUMENT_VOICE.search(question) or _FIRST_PERSON.search(question)) is not None:
        return f"speaks in the document's voice ('{m.group(0).strip()}'), not a reader's"
    if (m := _ASKS_WHAT_IS_DISCUSSED.search(question)) is not None:
        return f"asks what is talked about ('{m.group(0)}'), not for a fact"
    return chinese_not_standalone_reason(question)

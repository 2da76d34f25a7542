"""The agents and judges of QA generation (spec §2) and their budgeted loop.

Per context: a user agent writes one question (optionally shown ``few_shot_k`` example
questions; a question that points at "the text" instead of standing alone is rejected at once),
an expert agent answers from the context alone (the reference answer), then the QA filters
(resolved through :data:`~ragcourt.qagen.filter_registry.QA_FILTERS`, in the order of
:data:`~ragcourt.qagen.filter_registry.FILTER_ROLES`) score answerability (must be 1),
faithfulness and relevance (>= the thresholds), and exact / near-duplicate questions are
dropped against those already kept. Before the LLM judges, the rule filters of
:mod:`ragcourt.qagen.quality` (the quality gate: meta-questions, wrong language, repetition
loops, unsupported answers) reject candidates without a model call. Candidates are generated in
rounds of up to ``batch_size`` (the gateway runs a round concurrently). Every candidate ends
accepted or with the first failed check and its reason (model and parse failures included).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ragcourt.core.prompts import has_prompt, prompt
from ragcourt.corpus.language import (
    UNDETERMINED,
    detect_language,
    language_name,
    mostly_cjk_language,
)
from ragcourt.llm.types import ChatRequest, ChatResult
from ragcourt.qagen.duplicates import DuplicateIndex
from ragcourt.qagen.filter_registry import (
    FILTER_ROLES,
    QA_FILTERS,
    JudgeOutcome,
    JudgeSettings,
    QAFilter,
    QAItem,
    check_filter_settings,
    role_kinds,
    with_kind_settings,
)
from ragcourt.qagen.filters import not_standalone_reason
from ragcourt.qagen.params import QAGenView
from ragcourt.qagen.quality import GATE
from ragcourt.qagen.summaries import (
    STOP_EXHAUSTED,
    STOP_MAX_ATTEMPTS,
    STOP_N_ITEMS,
    GeneratedStop,
)

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

log = logging.getLogger("ragcourt.qagen")

# failed_filter values, in the order the checks run
QUESTION_ERROR = "question_generation_error"
NOT_STANDALONE = "question_not_standalone"
ANSWER_ERROR = "answer_generation_error"
OVER_QUOTA = "over_quota"

Encoder = Callable[[list[str]], np.ndarray]


# --- reply cleaning ------------------------------------------------------------------------


MAX_QUESTION_CHARS = 300
_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:question|q|answer|a|问题|答案)\s*\d*\s*[:：.)-]\s*(?:\*\*)?\s*", re.I
)
_ENUM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")


def clean_question(text: str) -> str | None:
    """The question in a user-agent reply: the first non-empty line, labels ('Question:',
    '问题：', '1.') and quotes removed, cut after its first question mark ('?' or full-width '？').
    None if nothing usable remains (fewer than 8 or more than ``MAX_QUESTION_CHARS``
    characters: a run-on reply is not a question)."""
    for line in text.strip().splitlines():
        line = _ENUM.sub("", _LABEL.sub("", line)).strip().strip("\"'`“”").strip()
        if not line:
            continue
        marks = [i for i in (line.find("?"), line.find("\uff1f")) if i >= 0]
        if marks:
            line = line[: min(marks) + 1]
        return line if 8 <= len(line) <= MAX_QUESTION_CHARS else None
    return None


def clean_answer(text: str) -> str | None:
    """The reference answer in an expert reply: stripped of an 'Answer:' label; None if empty."""
    out = _LABEL.sub("", text.strip(), count=1).strip()
    return out or None


# --- candidates and roles ------------------------------------------------------------------


@dataclass
class Candidate:
    """One attempted QA item, filled in as it passes through the agents and judges."""

    attempt_index: int
    source_chunk_id: str
    doc_id: str
    char_start: int
    char_end: int
    context: str
    question: str | None = None
    answer: str | None = None
    outcomes: dict[str, JudgeOutcome] = field(default_factory=dict)
    question_id: str | None = None
    failed_filter: str | None = None
    reason: str | None = None
    raw_output: str | None = None
    duplicate_of: str | None = None
    # answer-first generation (ragcourt.qagen.answer_first): the span chosen as the answer
    answer_start: int | None = None  # document offsets of the span
    answer_end: int | None = None
    answer_type: str | None = None
    long_reference: str | None = None  # the span's sentence
    doc_title: str | None = None  # the document's title as the writer sees it
    # a question asked in place opens with this citation of its source (据《title》，)
    source_frame: str | None = None
    reader_answer: str | None = None
    roundtrip_f1: float | None = None
    closed_book_answer: str | None = None
    # the writer's questions that passed the lexical checks, in try order (the first is
    # ``question``); the round trip may keep a later one
    passing_questions: list[str] = field(default_factory=list)
    # what wrote the question when no model did (a rule: ``rule:in_place_zh``); None: the writer
    # model (``qagen.question_model``)
    question_writer: str | None = None

    @property
    def candidate_id(self) -> str:
        return f"cand-{self.attempt_index:05d}"

    @property
    def alive(self) -> bool:
        return self.failed_filter is None

    def fail(
        self, check: str, reason: str, raw: str | None = None, duplicate_of: str | None = None
    ) -> None:
        self.failed_filter, self.reason = check, reason
        self.raw_output, self.duplicate_of = raw, duplicate_of


@dataclass(frozen=True)
class Roles:
    """Resolved model strings for the three agent roles."""

    question: str
    answer: str
    judge: str

    @classmethod
    def from_params(cls, params: QAGenView) -> Roles:
        q, r = params.qagen, params.llm.resolve
        return cls(r(q.question_model), r(q.answer_model), r(q.filter_model))


def question_id_for(c: Candidate) -> str:
    """Stable id from the span and the question text."""
    key = f"{c.doc_id}|{c.char_start}|{c.char_end}|{c.question}"
    return "q-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


def next_batch_size(needed: int, accepted: int, attempts: int, batch_size: int, left: int) -> int:
    """Candidates for the next round: enough to fill ``needed`` at the acceptance rate seen so
    far (assumed 1 before any attempt, floored at 0.1), capped by ``batch_size`` and ``left``."""
    rate = accepted / attempts if attempts else 1.0
    want = math.ceil(needed / max(rate, 0.1))
    return max(1, min(batch_size, left, want))


# --- one round: agents, then judges --------------------------------------------------------


def accepted_reply(
    c: Candidate, res: ChatResult, error: str, clean: Callable[[str], str | None], empty: str
) -> str | None:
    """The reply's text through ``clean``, or None after failing ``c`` with ``error``: a failed
    call (its error), or a reply ``clean`` finds nothing in (``empty``)."""
    if not res.ok:
        c.fail(error, f"model call failed: {res.error}", res.text or None)
        return None
    text = clean(res.text)
    if text is None:
        c.fail(error, empty, res.text)
    return text


class Generator:
    """Runs the agents and judges of spec §2 over candidates, one round at a time."""

    def __init__(
        self,
        gw: Gateway,
        params: QAGenView,
        examples: Sequence[str] = (),
        prompts_dir: Path | None = None,
    ) -> None:
        self.gw, self.params, self.q = gw, params, params.qagen
        self.roles = Roles.from_params(params)
        self.examples = list(examples)
        self.prompts_dir = prompts_dir
        self.judge_cfg = JudgeSettings(
            model=self.roles.judge,
            prompt_version=self.q.filter_prompt_version,
            writer_prompt_version=self.q.prompt_version,
            prompts_dir=prompts_dir,
            temperature=params.llm.temperature,
            seed=params.llm.seed,
            max_tokens=self.q.judge_max_tokens,
            reason=self.q.filter_reason,
            trained_weights=params.judge.trained_weights,
        )
        kinds, given = role_kinds(self.q.filter_kinds), self.q.filter_settings
        check_filter_settings(given)
        self.filters: dict[str, QAFilter] = {
            n: QA_FILTERS.get(k, f"qagen.filter_kinds.{n}") for n, k in kinds.items()
        }
        self.gate_filters: dict[str, QAFilter] = {n: QA_FILTERS.get(n, "qagen") for n in GATE}
        # each filter role's settings: the shared ones plus its kind's own
        self.filter_cfgs = {
            n: with_kind_settings(k, self.judge_cfg, given)
            for n, k in [*kinds.items(), *((n, n) for n in GATE)]
        }
        self._warned_language = False

    def _prompt(self, name: str) -> str:
        return prompt("qagen", name, self.q.prompt_version, self.prompts_dir)

    def _prompt_in(self, name: str, code: str) -> str:
        """Template ``name_<code>`` (e.g. ``answer_first_question_system_zh``) where the prompt
        version defines one for the context's language ``code``, else ``name``."""
        own = f"{name}_{code}"
        if has_prompt("qagen", own, self.q.prompt_version, self.prompts_dir):
            return self._prompt(own)
        return self._prompt(name)

    @staticmethod
    def language_code_of(c: Candidate) -> str:
        """The context's language code: the CJK language of a mostly CJK chunk, else the
        detector's (``und`` when it cannot tell)."""
        return mostly_cjk_language(c.context) or detect_language(c.context).language

    def _examples_block(self, attempt_index: int) -> str:
        k = min(self.q.few_shot_k, len(self.examples))
        if k == 0:
            return ""
        rng = np.random.default_rng([self.q.seed, attempt_index])
        chosen = [self.examples[i] for i in sorted(rng.choice(len(self.examples), k, False))]
        lines = "\n".join(f"- {q}" for q in chosen)
        return self._prompt("question_examples").format(questions=lines)

    def _chat(self, model: str, system: str, user: str, max_tokens: int, tag: str) -> ChatRequest:
        return ChatRequest.of(
            model,
            system,
            user,
            max_tokens=max_tokens,
            temperature=self.params.llm.temperature,
            seed=self.params.llm.seed,
            tag=tag,
        )

    def language_of(self, c: Candidate, code: str | None = None) -> str:
        """English name of the context's language (the ``{language}`` prompt field) of code
        ``code``, by default :meth:`language_code_of`; warns once when it is not English and
        the writer template does not name it."""
        code = code or self.language_code_of(c)
        if (
            code not in ("en", UNDETERMINED)
            and not self._warned_language
            and "{language}" not in self._prompt("question_user")
        ):
            self._warned_language = True
            log.warning(
                    "qagen: context %s is in %s but qagen.prompt_version '%s' does not ask for "
                    "that language (use v2-lang); the question language filter will reject "
                    "questions in another language",
                    c.source_chunk_id, language_name(code), self.q.prompt_version,
                )  # fmt: skip
        return language_name("en" if code == UNDETERMINED else code)

    def write_questions(self, batch: Sequence[Candidate]) -> None:
        system, user = self._prompt("question_system"), self._prompt("question_user")
        reqs = [
            self._chat(
                self.roles.question,
                system,
                user.format(
                    examples=self._examples_block(c.attempt_index),
                    context=c.context,
                    language=self.language_of(c),
                ),
                self.q.question_max_tokens,
                "qagen.question",
            )
            for c in batch
        ]
        for c, res in zip(batch, self.gw.chat(reqs, desc="qagen questions"), strict=True):
            if self.take_question(c, res) and (why := not_standalone_reason(c.question or "")):
                c.fail(NOT_STANDALONE, why)

    @staticmethod
    def take_question(c: Candidate, res: ChatResult) -> bool:
        """Sets ``c.question`` from a writer's reply (True), or fails ``c`` with
        ``question_generation_error``: a failed call or a reply holding no question (False)."""
        q = accepted_reply(c, res, QUESTION_ERROR, clean_question, "reply holds no usable question")
        if q is None:
            return False
        c.question = q
        return True

    def write_answers(self, batch: Sequence[Candidate]) -> None:
        live = [c for c in batch if c.alive]
        system, user = self._prompt("answer_system"), self._prompt("answer_user")
        reqs = [
            self._chat(
                self.roles.answer,
                system,
                user.format(context=c.context, question=c.question, language=self.language_of(c)),
                self.q.answer_max_tokens,
                "qagen.answer",
            )
            for c in live
        ]
        results = self.gw.chat(reqs, desc="qagen answers") if reqs else []
        for c, res in zip(live, results, strict=True):
            if (
                a := accepted_reply(c, res, ANSWER_ERROR, clean_answer, "empty answer")
            ) is not None:
                c.answer = a

    def gate(self, batch: Sequence[Candidate]) -> None:
        """The rule filters of :data:`~ragcourt.qagen.quality.GATE`, in order, on every live
        candidate (no model call): a candidate fails on the first rule that rejects it, with
        the rule's name as ``failed_filter`` and its reason. A question's citation of its
        source (``source_frame``: a document title, however long) is not gated, its own words
        are."""
        for name in GATE:
            todo = [c for c in batch if c.alive]
            if not todo:
                return
            items = [
                QAItem(
                    (c.question or "").removeprefix(c.source_frame or ""), c.answer or "", c.context
                )
                for c in todo
            ]
            for c, o in zip(
                todo, self.gate_filters[name](self.gw, items, self.filter_cfgs[name]), strict=True
            ):
                if not o.passes(1.0):
                    c.fail(name, o.reason or o.error or "rejected")

    def judge(self, batch: Sequence[Candidate]) -> None:
        """Judges in order answerability, faithfulness, relevance; a candidate fails on the
        first judge that errs or scores below its threshold. With ``qagen.short_circuit`` a
        judge runs only on candidates every earlier judge passed (the others' scores stay
        null); without it every judge scores every candidate that reached the judges."""
        reached = [c for c in batch if c.alive]
        thresholds = self.thresholds()
        for name in FILTER_ROLES:
            todo = [c for c in reached if c.alive] if self.q.short_circuit else reached
            out = self._run_judge(name, todo)
            for c, o in zip(todo, out, strict=True):
                c.outcomes[name] = o
                if not c.alive:
                    continue  # already failed an earlier judge (no short-circuit mode)
                if not o.ok:
                    c.fail(f"{name}_error", f"judge failed: {o.error}", o.raw or None)
                elif not o.passes(thresholds[name]):
                    c.fail(name, f"score {o.score:g} < {thresholds[name]:g}: {o.reason}")

    def _run_judge(self, name: str, todo: Sequence[Candidate]) -> list[JudgeOutcome]:
        items = [QAItem(c.question or "", c.answer or "", c.context) for c in todo]
        return self.filters[name](self.gw, items, self.filter_cfgs[name], f"qagen {name}")

    def thresholds(self) -> dict[str, float]:
        """Pass marks per filter: ``score >= qagen.thresholds.<filter>`` (P(yes) with filter
        prompt v2; with v1 answerability is 0/1 and the others a 0-1 share)."""
        t = self.q.thresholds
        return {
            "answerability": t.answerability,
            "faithfulness": t.faithfulness,
            "relevance": t.relevance,
        }

    def run_round(self, batch: Sequence[Candidate]) -> None:
        self.write_questions(batch)
        self.write_answers(batch)
        self.gate(batch)
        self.judge(batch)


# --- the budgeted loop ---------------------------------------------------------------------


@dataclass
class Generation:
    """What the loop did: every candidate tried (in attempt order), the accepted ones, why it
    stopped and how many contexts it could draw from."""

    tried: list[Candidate]
    accepted: list[Candidate]
    stop_reason: GeneratedStop
    contexts_available: int

    @property
    def rejected(self) -> list[Candidate]:
        return [c for c in self.tried if not c.alive]


def generate_candidates(
    contexts: pl.DataFrame, generator: Generator, encode: Encoder
) -> Generation:
    """The budgeted loop of spec §2 over ``contexts`` (in order; see
    :func:`ragcourt.qagen.contexts.sample_contexts`): rounds of :meth:`Generator.run_round`,
    then duplicate checks against the questions kept so far, until ``n_items`` are accepted,
    ``max_attempts`` candidates were tried or the contexts run out."""
    q = generator.q
    budget = min(q.max_attempts, contexts.height)
    dups = DuplicateIndex(q.near_duplicate_threshold)
    accepted: list[Candidate] = []
    tried: list[Candidate] = []
    rows = contexts.to_dicts()
    rnd = 0
    while len(accepted) < q.n_items and len(tried) < budget:
        size = next_batch_size(
            q.n_items - len(accepted), len(accepted), len(tried), q.batch_size, budget - len(tried)
        )
        batch = [Candidate(len(tried) + i, **rows[len(tried) + i]) for i in range(size)]
        tried.extend(batch)
        generator.run_round(batch)
        passed = [c for c in batch if c.alive]
        vectors = encode([c.question or "" for c in passed]) if passed else np.empty((0, 1))
        for c, vec in zip(passed, vectors, strict=True):
            if len(accepted) >= q.n_items:
                c.fail(OVER_QUOTA, f"passed every filter after n_items={q.n_items} were accepted")
                continue
            hit = dups.check(c.question or "", vec)
            if hit is not None:
                c.fail(hit.kind, hit.reason, duplicate_of=hit.of_id)
                continue
            c.question_id = question_id_for(c)
            dups.add(c.question_id, c.question or "", vec)
            accepted.append(c)
        rnd += 1
        log.info(
            "qagen round %d: %d candidates, %d accepted in total after %d attempts",
            rnd, size, len(accepted), len(tried),
        )  # fmt: skip
    stop: GeneratedStop
    if len(accepted) >= q.n_items:
        stop = STOP_N_ITEMS
    elif len(tried) >= q.max_attempts:
        stop = STOP_MAX_ATTEMPTS
    else:
        stop = STOP_EXHAUSTED
    return Generation(tried, accepted, stop, contexts.height)

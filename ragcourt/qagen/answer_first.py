"""Answer-first QA generation with round-trip consistency (``qagen.method: answer_first``).

After Alberti et al. (2019) and Puri et al. (2020): the answer is chosen first, a question is
written for it, and the pair is kept only if the question, read back, gives the same answer.

1. :func:`span_contexts` turns each sampled chunk into up to ``spans_per_chunk`` candidates,
   one per answer span of the chunk's extractor (:mod:`ragcourt.qagen.span_languages`:
   Chinese by jieba, other text by :mod:`ragcourt.qagen.answer_spans`; types diversified,
   seeded per chunk id), until ``max_attempts`` candidates exist.
2. The writer (``qagen.question_model``) writes one question whose answer is the span; in a
   language of ``ask_in_place`` the question is built by rule from the span's sentence instead
   (:mod:`ragcourt.qagen.in_place_zh`, no model call, no copy check). It is
   rejected when unusable (``question_generation_error``), when it points at "the text"
   (``question_not_standalone``), holds the answer (``question_contains_answer``), is a
   Chinese question whose question word does not fit the span's type
   (``question_word_mismatch``, :mod:`ragcourt.qagen.questions_zh`) or shares a run of more
   than ``max_copied_words`` words (jieba words for Chinese) with the chunk
   (``question_copies_context``).
3. Round trip: the reader (``qagen.answer_model``) answers from the chunk alone with a phrase
   copied from it; the pair is kept when F1(reader's phrase, span) >= ``roundtrip_f1``
   (:func:`~ragcourt.qagen.roundtrip.span_f1`: SQuAD token F1; for Chinese characters, kept at
   the fitted :data:`~ragcourt.qagen.roundtrip.ZH_ROUNDTRIP_F1`) and
   the phrase holds the span's numbers, no other (else ``roundtrip_mismatch``; a failed call
   ``reader_error``). Every distinct writer try that passed step 2 is read back; the first
   that matches is kept.
4. Optional (``closed_book_check``): the reader without the chunk; F1 >= ``roundtrip_f1``
   rejects the pair (``answerable_closed_book``: no retrieval needed).
5. Optional: the rule filters of the QA quality gate (``gate``) and the ``qagen.filter_kinds``
   filters (``judges``), exactly as :class:`~ragcourt.qagen.generator.Generator` runs them.

The span is the reference answer; its sentence is the long-form reference. Every prompt puts
the chunk first (writer and reader calls of one chunk share a prefix the local model reuses;
the gateway starts a round's requests sorted by prompt), inside a ``<text id=...>`` tag the
system prompt declares to be data.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ragcourt.core.fencing import neutralise_tags, tag
from ragcourt.corpus.markup_map import SECTION_SEPARATOR
from ragcourt.llm.types import ChatRequest, ChatResult
from ragcourt.qagen.answer_spans import (
    AnswerSpan,
    choose_spans,
    demote_frequent,
    resolve_extractor,
)
from ragcourt.qagen.contexts import qagen_contexts
from ragcourt.qagen.filters import not_standalone_reason
from ragcourt.qagen.generator import (
    NOT_STANDALONE,
    QUESTION_ERROR,
    Candidate,
    Generator,
)
from ragcourt.qagen.in_place_zh import (
    IN_PLACE_WRITER,
    QuestionFilter,
    askable_split,
    in_place_question,
)
from ragcourt.qagen.params import QAGenParams
from ragcourt.qagen.questions_zh import (
    chinese_question_word_mismatch,
    wh_draft,
    with_asked_unit,
)
from ragcourt.qagen.roundtrip import (
    clean_phrase,
    contains_answer,
    longest_shared_run,
    reads_back,
    roundtrip_threshold,
    span_f1,
)
from ragcourt.qagen.source_frame_zh import (
    framed,
    source_frame,
)
from ragcourt.qagen.span_languages import NoSpanExtractor, span_language, spans_of

log = logging.getLogger("ragcourt.qagen")

METHOD = "answer_first"
# failed_filter values of this method, in the order the checks run (then the gate, judges)
QUESTION_HAS_ANSWER = "question_contains_answer"
QUESTION_TYPE = "question_word_mismatch"
QUESTION_COPIES = "question_copies_context"
READER_ERROR = "reader_error"
ROUNDTRIP = "roundtrip_mismatch"
CLOSED_BOOK_ERROR = "closed_book_error"
CLOSED_BOOK = "answerable_closed_book"

#: the order in which Chinese candidates asked in place are attempted, by (the question cites
#: its source, the standalone probe passes it): 0 first; the others are held in reserve and
#: attempted, best first, only when every chunk is read and fewer than ``max_attempts``
#: candidates are found (docs/results/languages.md, "Questions that cite their source")
IN_PLACE_ORDER: dict[tuple[bool, bool], int] = {
    (True, True): 0,
    (True, False): 1,
    (False, True): 2,
    (False, False): 3,
}
SPAN_CONTEXT_SCHEMA: dict[str, pl.DataType] = {
    "source_chunk_id": pl.String(),
    "doc_id": pl.String(),
    "char_start": pl.Int64(),
    "char_end": pl.Int64(),
    "context": pl.String(),
    "answer": pl.String(),
    "answer_start": pl.Int64(),
    "answer_end": pl.Int64(),
    "answer_type": pl.String(),
    "long_reference": pl.String(),
    "doc_title": pl.String(),
    "source_frame": pl.String(),
}
MAX_TITLE_CHARS = 120


def display_title(title: str | None) -> str | None:
    """A document title as the writer sees it: underscores and dashes as spaces, a file
    extension dropped, at most :data:`MAX_TITLE_CHARS` characters; None when nothing is left."""
    if not title:
        return None
    text = re.sub(r"\.(?:txt|md|markdown|html?|pdf|docx?|rst)$", "", title.strip(), flags=re.I)
    text = " ".join(re.sub(r"[_\-]+", " ", text).split())[:MAX_TITLE_CHARS].strip()
    return text or None


def heading_title(title: str | None) -> str | None:
    """A title that is its document's first heading, as the writer sees it: whitespace runs
    as one space, at most :data:`MAX_TITLE_CHARS` characters (no other change)."""
    shown = " ".join((title or "").split())[:MAX_TITLE_CHARS].strip()
    return shown or None


def writer_title(title: str | None, section: str | None) -> str | None:
    """The title line the writer sees: the document's title, then the chunk's section path
    below it (``title › Basic Usage``; the path's first heading, the title itself, is not
    repeated). Without a section, or a section that is the title, the title alone."""
    if section is None:
        return title
    parts = section.split(SECTION_SEPARATOR)
    if title is not None and parts and parts[0] == title:
        parts = parts[1:]
    if not parts:
        return title
    return SECTION_SEPARATOR.join([title or "(untitled)", *parts])


@dataclass(frozen=True)
class DocumentInfo:
    """What span choice and the writer know of the sampled chunks' documents: every chunk text
    of each (span frequency, :func:`~ragcourt.qagen.answer_spans.demote_frequent`), titles,
    and each chunk's section path (chunks of documents with headings)."""

    chunk_texts: Mapping[str, Sequence[str]]
    titles: Mapping[str, str]
    sections: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, chunks: pl.DataFrame, documents: pl.DataFrame) -> DocumentInfo:
        """From the reference chunking's chunks (``doc_id``, ``text``, ``section`` when the
        table has it) and the documents table (``doc_id``, ``title``; ``headings`` when it
        has them). A title that is its document's first heading is shown as written
        (:func:`heading_title`); any other (a file stem, a first line) as
        :func:`display_title` shows it."""
        texts: dict[str, list[str]] = {}
        for doc_id, text in chunks.select("doc_id", "text").iter_rows():
            texts.setdefault(doc_id, []).append(text)
        heads = documents["headings"].to_list() if "headings" in documents.columns else None
        firsts = [h[0]["title"] if h else None for h in heads] if heads is not None else None
        shown: dict[str, str | None] = {}
        for i, (d, t) in enumerate(documents.select("doc_id", "title").iter_rows()):
            is_heading = firsts is not None and firsts[i] is not None and firsts[i] == t
            shown[d] = heading_title(t) if is_heading else display_title(t)
        titles = {d: t for d, t in shown.items() if t is not None}
        sections: dict[str, str] = {}
        if "section" in chunks.columns:
            for cid, sec in chunks.select("chunk_id", "section").iter_rows():
                if sec is not None:
                    sections[cid] = " ".join(sec.split())
        return cls(texts, titles, sections)


@dataclass(frozen=True)
class SpanContexts:
    """One row per (chunk, answer span) candidate, how many sampled chunks had no span, and
    how many spans were left out because no standalone question is asked in place for them."""

    frame: pl.DataFrame
    chunks_used: int
    chunks_without_spans: int
    spans_not_askable: int = 0
    # candidates asked in place held in reserve (SPAN_CONTEXT_SCHEMA and ``priority``, lower
    # first: :data:`IN_PLACE_ORDER`), attempted only when ``frame`` has too few
    reserve: pl.DataFrame | None = None


def chunk_seed(seed: int, chunk_id: str) -> list[int]:
    """The span-choice seed of one chunk: ``qagen.seed`` and a hash of its id (order-free)."""
    return [seed, int(hashlib.sha1(chunk_id.encode("utf-8")).hexdigest()[:8], 16)]


def read_span_contexts(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    q: QAGenParams,
    docs: DocumentInfo | None = None,
    models_file: str | None = None,
) -> SpanContexts:
    """:func:`span_contexts` of the stage's chunk sample (:func:`qagen_contexts`): the first
    ``max_attempts`` chunks; then, while fewer than ``max_attempts`` candidates are found and
    the last chunks read left spans unasked in place (the in-place rules and the standalone
    probe leave many chunks without a candidate), as many more again, in the same order, until
    every chunk is read. A text no span is asked in place for (English) reads only the first."""
    parts: list[SpanContexts] = []
    read, n = 0, q.max_attempts
    while True:
        contexts = qagen_contexts(chunks, documents, q, n)
        found = sum(p.frame.height for p in parts)
        parts.append(span_contexts(contexts[read:], q, docs, models_file, q.max_attempts - found))
        read, n = contexts.height, 2 * n
        found += parts[-1].frame.height
        if found >= q.max_attempts or read < n // 2 or not parts[-1].spans_not_askable:
            break
    frames = [p.frame for p in parts]
    reserves = [p.reserve for p in parts if p.reserve is not None and p.reserve.height]
    if reserves and found < q.max_attempts:  # reading stopped short: the best held back
        best = pl.concat(reserves, how="vertical").sort("priority", maintain_order=True)
        frames.append(best.head(q.max_attempts - found).drop("priority"))
        log.info("qagen answer_first: %d candidates from the reserve", frames[-1].height)
    return SpanContexts(
        pl.concat(frames, how="vertical"),
        sum(p.chunks_used for p in parts),
        sum(p.chunks_without_spans for p in parts),
        sum(p.spans_not_askable for p in parts),
    )


def span_contexts(
    contexts: pl.DataFrame,
    q: QAGenParams,
    docs: DocumentInfo | None = None,
    models_file: str | None = None,
    limit: int | None = None,
) -> SpanContexts:
    """Answer candidates of ``contexts`` (in order): per chunk the spans of
    :func:`~ragcourt.qagen.answer_spans.choose_spans`, until ``limit`` (``q.max_attempts``)
    rows. With ``docs``, spans frequent in their document are demoted
    (``frequent_span_share``) and each row carries its document's title and its chunk's
    section path (``document_titles``, :func:`writer_title`). A span asked in place is a
    candidate when its question cites its source (``in_place_frame``) and the standalone probe
    (read with the models of ``models_file``) passes it; the others go to the reserve with
    their :data:`IN_PLACE_ORDER`."""
    af = q.answer_first
    limit = q.max_attempts if limit is None else limit
    kind = resolve_extractor(af.extractor)
    keep = _probe_filter(models_file) if af.standalone_probe else None
    rows: list[dict[str, object]] = []
    reserve: list[dict[str, object]] = []
    used = empty = unaskable = 0
    unread: dict[str, int] = {}  # a language no extractor reads -> its chunks
    for ctx in contexts.iter_rows(named=True):
        if len(rows) >= limit:
            break
        used += 1
        text: str = ctx["context"]
        try:
            found = spans_of(text, kind, af.max_answer_words)
        except NoSpanExtractor as e:
            unread[str(e)] = unread.get(str(e), 0) + 1
            found = []
        groups, frame = [(0, found)], None
        if span_language(text) in af.ask_in_place:
            kept, held = askable_split(text, found, keep)
            unaskable += len(found) - len(kept)
            cited = docs is None or not af.in_place_frame
            if not cited and docs is not None:
                firsts = docs.chunk_texts.get(ctx["doc_id"]) or [""]
                frame = source_frame(docs.titles.get(ctx["doc_id"]), firsts[0])
                cited = frame is not None
            groups = [(IN_PLACE_ORDER[cited, True], kept), (IN_PLACE_ORDER[cited, False], held)]
        chunk_rows = [
            (priority, _chunk_rows(ctx, spans, q, docs, frame)) for priority, spans in groups
        ]
        empty += not any(r for p, r in chunk_rows if p == 0)
        for priority, candidates in chunk_rows:
            if priority == 0:
                rows.extend(candidates[: limit - len(rows)])
            else:
                reserve.extend({**r, "priority": priority} for r in candidates)
    for why, n in unread.items():
        log.warning("qagen answer_first: %s: %d chunks give no candidate", why, n)
    if unaskable:
        log.info(
            "qagen answer_first: %d spans no standalone question is asked in place for", unaskable
        )
    log.info(
        "qagen answer_first: %d candidate spans from %d chunks (%s extractor; %d without a span)",
        len(rows), used, kind, empty,
    )  # fmt: skip
    reserved = pl.DataFrame(reserve, schema={**SPAN_CONTEXT_SCHEMA, "priority": pl.Int64()})
    return SpanContexts(
        pl.DataFrame(rows, schema=SPAN_CONTEXT_SCHEMA), used, empty, unaskable, reserved
    )


def _chunk_rows(
    ctx: dict[str, Any],
    spans: list[AnswerSpan],
    q: QAGenParams,
    docs: DocumentInfo | None,
    frame: str | None,
) -> list[dict[str, object]]:
    """The candidate rows of one chunk (``ctx``): its ``spans`` chosen
    (:func:`~ragcourt.qagen.answer_spans.choose_spans`, spans frequent in their document
    demoted), each with the document's title and the ``frame`` its question cites."""
    af, text = q.answer_first, ctx["context"]
    if docs is not None:
        spans = demote_frequent(
            spans, docs.chunk_texts.get(ctx["doc_id"], ()), af.frequent_span_share
        )
    title = None
    if docs is not None and af.document_titles:
        title = writer_title(
            docs.titles.get(ctx["doc_id"]), docs.sections.get(ctx["source_chunk_id"])
        )
    chosen = choose_spans(
        spans, af.spans_per_chunk, chunk_seed(q.seed, ctx["source_chunk_id"]),
        af.fill_lower_tiers,
    )  # fmt: skip
    return [
        {
            **{k: ctx[k] for k in ("source_chunk_id", "doc_id", "char_start", "char_end")},
            "context": text,
            "answer": sp.text,
            "answer_start": ctx["char_start"] + sp.start,
            "answer_end": ctx["char_start"] + sp.end,
            "answer_type": sp.answer_type,
            "long_reference": text[sp.sentence_start : sp.sentence_end].strip() or None,
            "doc_title": title,
            "source_frame": frame,
        }
        for sp in chosen
    ]


def _probe_filter(models_file: str | None) -> QuestionFilter:
    """The shipped standalone probe's verdicts (:mod:`ragcourt.qagen.standalone_probe`)."""
    from ragcourt.qagen.standalone_probe import load_probe

    probe = load_probe()
    return lambda questions: probe.keeps(questions, models_file)


def _draft(c: Candidate, code: str) -> str:
    """The writer's draft question for a Chinese chunk (:func:`wh_draft`: the span's clause
    with the span replaced by its question word), for templates that use ``{draft}``; empty
    for other languages or a candidate without offsets."""
    if code != "zh" or c.answer_start is None or c.answer_end is None:
        return ""
    start = c.answer_start - c.char_start
    return wh_draft(c.context, start, c.answer_end - c.char_start, c.answer_type)


class AnswerFirstGenerator(Generator):
    """One round of answer-first generation: write, check, read back, (closed book), filters."""

    def write_questions(self, batch: Sequence[Candidate]) -> None:
        """``writer_tries`` questions per candidate's span, in the writer templates of the
        chunk's language where the prompt version has them, asked in one batch (try 0 at
        ``llm.temperature``/``llm.seed``, try t sampled at ``resample_temperature`` with seed
        ``llm.seed + t``: the tries of one span share their whole prompt, so the local model
        reads it once). The distinct tries that pass the lexical checks go to the round trip
        (only the first unless ``read_back_every_try``); when none passes, the last failure
        stays (no model call in the checks). A candidate in a language of ``ask_in_place`` gets
        its question by rule instead (:meth:`ask_in_place`)."""
        af = self.q.answer_first
        llm = self.params.llm
        written: list[Candidate] = []
        codes: list[str] = []
        for c in batch:
            code = self.language_code_of(c)
            if code in af.ask_in_place:
                self.ask_in_place(c)
            else:
                written.append(c)
                codes.append(code)
        batch = written
        if not batch:
            return
        prompts = {
            code: (
                self._prompt_in("answer_first_question_system", code),
                self._prompt_in("answer_first_question_user", code),
            )
            for code in set(codes)
        }
        reqs = [
            ChatRequest.of(
                self.roles.question,
                prompts[code][0],
                prompts[code][1].format(
                    context=tag(c.context, "text"),
                    answer=neutralise_tags(c.answer or ""),
                    sentence=neutralise_tags(c.long_reference or ""),
                    title=neutralise_tags(c.doc_title or "(untitled)"),
                    language=self.language_of(c, code),
                    draft=neutralise_tags(_draft(c, code)),
                ),
                max_tokens=self.q.question_max_tokens,
                temperature=llm.temperature if t == 0 else af.resample_temperature,
                seed=llm.seed + t,
                tag="qagen.answer_first.question",
            )
            for c, code in zip(batch, codes, strict=True)
            for t in range(af.writer_tries)
        ]
        results = self.gw.chat(reqs, desc="qagen answer-first questions")
        n = af.writer_tries
        for i, c in enumerate(batch):
            passing: list[str] = []
            for res in results[i * n : (i + 1) * n]:
                c.failed_filter = c.reason = c.raw_output = c.question = None
                if self.take_question(c, res):
                    self.check_question(c)
                if c.alive and c.question not in passing:
                    passing.append(c.question or "")
            if passing:
                c.failed_filter = c.reason = c.raw_output = None
                c.question = passing[0]
                c.passing_questions = passing if af.read_back_every_try else passing[:1]
            elif n > 1:
                c.reason = f"{c.reason} (all {n} tries)"

    def ask_in_place(self, c: Candidate) -> None:
        """The candidate's question built in place from its span's sentence, no model call
        (:func:`~ragcourt.qagen.in_place_zh.in_place_question`), then checked as a written one
        but for the copy check; a span no question can be built for fails with the reason."""
        if c.answer_start is None or c.answer_end is None:
            c.fail(QUESTION_ERROR, "no span offsets to ask in place")
            return
        start = c.answer_start - c.char_start
        built = in_place_question(c.context, start, c.answer_end - c.char_start, c.answer_type)
        if built.question is None:
            why = built.why_not or "no question"
            c.fail(NOT_STANDALONE if why.startswith("names no") else QUESTION_ERROR, why)
            return
        c.question, c.question_writer = framed(built.question, c.source_frame), IN_PLACE_WRITER
        self.check_question(c, copies_allowed=True)
        if c.alive:
            c.passing_questions = [c.question]

    def check_question(self, c: Candidate, copies_allowed: bool = False) -> None:
        """Rejects a question that points at the text, holds its answer, asks a Chinese question
        word that does not fit the span's type, or (unless ``copies_allowed``: a question asked
        in place) copies the chunk."""
        q, span = c.question or "", c.answer or ""
        run = longest_shared_run(q, c.context)
        if (why := not_standalone_reason(q)) is not None:
            c.fail(NOT_STANDALONE, why)
        elif contains_answer(q, span):
            c.fail(QUESTION_HAS_ANSWER, f"the question holds its answer '{span}'")
        elif (why := chinese_question_word_mismatch(q, c.answer_type, span)) is not None:
            c.fail(QUESTION_TYPE, why)
        elif not copies_allowed and run > self.q.answer_first.max_copied_words:
            c.fail(
                QUESTION_COPIES,
                f"shares a run of {run} words with the chunk "
                f"(> qagen.answer_first.max_copied_words={self.q.answer_first.max_copied_words})",
            )

    def read_back(self, batch: Sequence[Candidate]) -> None:
        """The round trip (``round_trip``): each live candidate's passing questions are read
        from its chunk alone, by the trained reader and/or the LLM reader (one batch each); the
        first question whose reading matches the span (token F1 >= ``roundtrip_f1``, the same
        numbers; for the trained reader also P(answerable) >= its threshold) is kept, else the
        candidate fails with its best reading. With ``both`` the LLM reads only the questions
        the trained reader accepted."""
        live = [c for c in batch if c.alive]
        asked = [(c, q) for c in live for q in (c.passing_questions or [c.question or ""])]
        mode = self.q.answer_first.round_trip
        if mode != "llm":
            asked = self._reader_round_trip(live, asked)
            if mode == "reader":
                return
            live = [c for c in live if c.alive]
        self._llm_round_trip(live, asked)

    def _reader_round_trip(
        self, live: Sequence[Candidate], asked: Sequence[tuple[Candidate, str]]
    ) -> list[tuple[Candidate, str]]:
        """The trained reader's round trip (:meth:`read_back`): keeps each candidate's first
        accepted question (and its span as ``reader_answer``), fails the others with their
        best reading; returns every accepted (candidate, question) in order."""
        from ragcourt.retrieval.reader.model import shipped_reader

        af = self.q.answer_first
        reader = shipped_reader()
        threshold = reader.threshold if af.reader_threshold is None else af.reader_threshold
        readings = (
            reader.read([q for _, q in asked], [c.context for c, _ in asked]) if asked else []
        )
        accepted: list[tuple[Candidate, str]] = []
        best: dict[int, tuple[tuple[bool, float], str, str, float]] = {}
        for (c, q), r in zip(asked, readings, strict=True):
            span = r.span or ""
            if c.answer_type == "number":
                span = with_asked_unit(span, q, c.answer or "")
            ok_span, f1 = reads_back(span, c.answer or "", af.roundtrip_f1)
            if r.p_answerable >= threshold and ok_span:
                accepted.append((c, q))
                if c.reader_answer is None:
                    c.question, c.reader_answer, c.roundtrip_f1 = q, span, f1
                continue
            rank = (ok_span, r.p_answerable)
            if id(c) not in best or rank > best[id(c)][0]:
                best[id(c)] = (rank, q, span, f1)
        for c in live:
            if c.reader_answer is not None:
                continue
            if id(c) not in best:
                c.fail(READER_ERROR, "no question read back")
                continue
            (ok_span, p), q, span, f1 = best[id(c)]
            c.question, c.roundtrip_f1 = q, f1
            of = f" (best of {len(c.passing_questions or [q])} questions)"
            why = (
                f"P(answerable) {p:.2f} < {threshold:g}"
                if ok_span
                else f"span '{span}' vs '{c.answer}': token F1 {f1:.2f}, P(answerable) {p:.2f}"
            )
            c.fail(ROUNDTRIP, f"the trained reader does not read the span back ({why}){of}")
        if af.round_trip == "both":
            for c in live:
                c.reader_answer = None
        return accepted

    def _ask_reader(
        self, prompt: str, fills: Sequence[Mapping[str, str]], what: str
    ) -> list[ChatResult]:
        """One reader call (the answer role, ``reader_max_tokens``) per fill of the
        ``answer_first_<prompt>`` system and user prompts, tagged
        ``qagen.answer_first.<prompt>``; results in the order of ``fills``."""
        system = self._prompt(f"answer_first_{prompt}_system")
        user = self._prompt(f"answer_first_{prompt}_user")
        reqs = [
            self._chat(
                self.roles.answer,
                system,
                user.format(**fill),
                self.q.answer_first.reader_max_tokens,
                f"qagen.answer_first.{prompt}",
            )
            for fill in fills
        ]
        return self.gw.chat(reqs, desc=f"qagen answer-first {what}") if reqs else []

    def _llm_round_trip(
        self, live: Sequence[Candidate], asked: Sequence[tuple[Candidate, str]]
    ) -> None:
        """The LLM reader's round trip (:meth:`read_back`)."""
        fills = [
            {"context": tag(c.context, "text"), "question": neutralise_tags(q)} for c, q in asked
        ]
        results = self._ask_reader("reader", fills, "round trip")
        readings: dict[int, list[tuple[str, ChatResult]]] = {}
        for (c, q), res in zip(asked, results, strict=True):
            readings.setdefault(id(c), []).append((q, res))
        for c in live:
            self._keep_first_round_trip(c, readings[id(c)])

    def _keep_first_round_trip(self, c: Candidate, readings: list[tuple[str, ChatResult]]) -> None:
        """Keeps the first (question, reading) whose phrase matches the span; else fails ``c``
        with the best-matching reading (``roundtrip_mismatch``) or, when no reading came back,
        the first error (``reader_error``)."""
        threshold = self.q.answer_first.roundtrip_f1
        best: tuple[float, str, str] | None = None  # (F1, question, phrase)
        error: tuple[str, str | None] | None = None
        for q, res in readings:
            phrase = clean_phrase(res.text) if res.ok else None
            if phrase is not None and c.answer_type == "number":
                phrase = with_asked_unit(phrase, q, c.answer or "")
            if phrase is None:
                why = f"model call failed: {res.error}" if not res.ok else "empty reply"
                error = error or (why, res.text or None)
                continue
            match, f1 = reads_back(phrase, c.answer or "", threshold)
            if match:
                c.question, c.reader_answer, c.roundtrip_f1 = q, phrase, f1
                return
            if best is None or f1 > best[0]:
                best = (f1, q, phrase)
        if best is None:
            why, raw = error or ("no question read back", None)
            c.fail(READER_ERROR, why, raw)
            return
        f1, c.question, c.reader_answer = best
        c.roundtrip_f1 = f1
        of = f" (best of {len(readings)} questions)" if len(readings) > 1 else ""
        need = roundtrip_threshold(c.reader_answer or "", c.answer or "", threshold)
        why = f"token F1 {f1:.2f} < {need:g}" if f1 < need else "its numbers differ"
        c.fail(ROUNDTRIP, f"the reader answered '{c.reader_answer}', not '{c.answer}' ({why}){of}")

    def closed_book(self, batch: Sequence[Candidate]) -> None:
        """Rejects live questions the reader answers with the span without the chunk."""
        live = [c for c in batch if c.alive]
        fills = [{"question": neutralise_tags(c.question or "")} for c in live]
        results = self._ask_reader("closed_book", fills, "closed book")
        threshold = self.q.answer_first.roundtrip_f1
        for c, res in zip(live, results, strict=True):
            if not res.ok:
                c.fail(CLOSED_BOOK_ERROR, f"model call failed: {res.error}", res.text or None)
                continue
            c.closed_book_answer = phrase = clean_phrase(res.text)
            f1 = span_f1(phrase or "", c.answer or "")
            need = roundtrip_threshold(phrase or "", c.answer or "", threshold)
            if f1 >= need:
                c.fail(
                    CLOSED_BOOK,
                    f"answered '{phrase}' without the chunk (token F1 {f1:.2f} >= {need:g})",
                )

    def run_round(self, batch: Sequence[Candidate]) -> None:
        af = self.q.answer_first
        self.write_questions(batch)
        self.read_back(batch)
        if af.closed_book_check:
            self.closed_book(batch)
        if af.gate:
            self.gate(batch)
        if af.judges:
            self.judge(batch)

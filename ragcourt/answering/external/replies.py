"""What an external system returns for one question, and how it becomes ``retrieved`` rows.

**Contexts** (the passages the system answered from), in an answers file, a Python return
value or an HTTP reply: a list whose items are

* a string (the passage text), or
* an object with ``text`` (required) and optional ``doc_id`` (str), ``score`` (number),
  ``char_start`` / ``char_end`` (ints, ``0 <= start < end``); other keys are errors, or
* a LangChain ``Document`` (or its dict form): ``page_content`` is the text; ``doc_id``,
  ``score``, ``char_start``, ``char_end`` are read from ``metadata`` when present.

``null`` / absent means no contexts were supplied. Each passage becomes one ``RETRIEVED``
struct with chunk id ``ext:<system>:<question_id>:<i>``, rank ``i + 1``, the score if given
(else null), doc_id / offsets if given (else null).

**Python return contract** (:func:`reply_from`): a ``str`` (the answer, no contexts); or a
mapping with ``answer`` (str) and optional ``contexts`` and ``cost_usd``; or any object with
an ``answer`` attribute and optional ``contexts`` / ``cost_usd`` attributes. Other keys of a
mapping are ignored, except ``context`` without ``contexts`` (a likely typo: an error).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragcourt.core.provenance import external_chunk_id

MAX_OFFSET = 2**63 - 1  # a character offset the answers table can hold (Int64)
PASSAGE_KEYS = ("text", "doc_id", "score", "char_start", "char_end")


class ReplyError(ValueError):
    """A reply that breaks the contract; the message says where and why (one line)."""


@dataclass(frozen=True)
class Passage:
    text: str
    doc_id: str | None = None
    score: float | None = None
    char_start: int | None = None
    char_end: int | None = None


@dataclass(frozen=True)
class Reply:
    """One answer of an external system (``latency_s`` / ``cost_usd`` as reported, if any;
    ``dropped_contexts``: passages left out by :func:`~.bounds.bound_reply`)."""

    answer: str
    contexts: tuple[Passage, ...] = ()
    latency_s: float | None = None
    cost_usd: float | None = None
    dropped_contexts: int = 0


def _opt_str(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ReplyError(f"{where}: expected a string, got {type(value).__name__}")


def opt_number(value: Any, where: str, *, minimum: float | None = None) -> float | None:
    """A finite number (int or float, not bool) or None; ``minimum`` bounds it below."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ReplyError(f"{where}: expected a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ReplyError(f"{where}: must be >= {minimum:g}, got {value!r}")
    return float(value)


def _opt_int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReplyError(f"{where}: expected an integer >= 0, got {value!r}")
    if value > MAX_OFFSET:  # past what the tables store (int64): an error, never a null
        raise ReplyError(f"{where}: {value} is out of range (at most {MAX_OFFSET})")
    return value


def _passage(text: Any, doc_id: Any, score: Any, start: Any, end: Any, where: str) -> Passage:
    if not isinstance(text, str) or not text.strip():
        raise ReplyError(f"{where}: 'text' must be a non-empty string")
    s, e = _opt_int(start, f"{where}.char_start"), _opt_int(end, f"{where}.char_end")
    if s is not None and e is not None and s >= e:
        raise ReplyError(f"{where}: char_start {s} must be < char_end {e}")
    return Passage(
        text=text,
        doc_id=_opt_str(doc_id, f"{where}.doc_id"),
        score=opt_number(score, f"{where}.score"),
        char_start=s,
        char_end=e,
    )


def passage_from(item: Any, where: str) -> Passage:
    """One context item (rules in the module docstring)."""
    if isinstance(item, str):
        return _passage(item, None, None, None, None, where)
    doc_like = (
        "page_content" in item if isinstance(item, Mapping) else hasattr(item, "page_content")
    )
    if doc_like:
        get = item.get if isinstance(item, Mapping) else lambda k, d=None: getattr(item, k, d)
        meta = get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise ReplyError(f"{where}: 'metadata' must be a mapping")
        return _passage(
            get("page_content"),
            meta.get("doc_id"),
            meta.get("score"),
            meta.get("char_start"),
            meta.get("char_end"),
            where,
        )
    if isinstance(item, Mapping):
        unknown = sorted(str(k) for k in item if k not in PASSAGE_KEYS)
        if unknown:
            raise ReplyError(
                f"{where}: unknown key(s) {unknown} (a context has {', '.join(PASSAGE_KEYS)})"
            )
        g = item.get
        return _passage(g("text"), g("doc_id"), g("score"), g("char_start"), g("char_end"), where)
    raise ReplyError(
        f"{where}: a context must be a string or an object with 'text', got {type(item).__name__}"
    )


def passages_from(items: Any, where: str = "contexts") -> tuple[Passage, ...]:
    """A contexts list (None -> no contexts)."""
    if items is None:
        return ()
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise ReplyError(f"{where}: must be a list, got {type(items).__name__}")
    return tuple(passage_from(x, f"{where}[{i}]") for i, x in enumerate(items))


def reply_from(value: Any) -> Reply:
    """A Python callable's return value as a :class:`Reply` (contract in the module docstring)."""
    if isinstance(value, str):
        return Reply(answer=value)
    if isinstance(value, Mapping):
        if "answer" not in value:
            keys = sorted(map(str, value))
            raise ReplyError(f"returned a mapping without 'answer' (keys: {keys})")
        if "context" in value and "contexts" not in value:
            raise ReplyError("returned 'context'; the key for passages is 'contexts'")
        answer, contexts, cost = value["answer"], value.get("contexts"), value.get("cost_usd")
    elif hasattr(value, "answer"):
        answer = value.answer
        contexts, cost = getattr(value, "contexts", None), getattr(value, "cost_usd", None)
    else:
        raise ReplyError(
            f"returned {type(value).__name__}; expected a str, or a mapping/object with "
            "'answer' (and optional 'contexts')"
        )
    if not isinstance(answer, str):
        raise ReplyError(f"'answer' must be a string, got {type(answer).__name__}")
    return Reply(
        answer=answer,
        contexts=passages_from(contexts),
        cost_usd=opt_number(cost, "cost_usd", minimum=0),
    )


def retrieved_rows(
    system: str, question_id: str, passages: Sequence[Passage]
) -> list[dict[str, Any]]:
    """``RETRIEVED`` structs for the supplied passages (synthetic chunk ids, rank i + 1)."""
    return [
        {
            "chunk_id": external_chunk_id(system, question_id, i),
            "rank": i + 1,
            "score": p.score,
            "doc_id": p.doc_id,
            "char_start": p.char_start,
            "char_end": p.char_end,
            "text": p.text,
        }
        for i, p in enumerate(passages)
    ]

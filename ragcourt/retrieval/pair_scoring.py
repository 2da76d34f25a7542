"""Scoring user-labelled pairs with any trained judge (``ragcourt judges score``).

Input: JSON Lines, one object per line with the role's two text fields
(:data:`ROLE_FIELDS`); other fields are kept. Output: each input row plus ``score`` (in [0, 1])
and ``label`` (``score >= threshold``, the role's shipped threshold), and for the reader its
``span``. A line that is not a JSON object with both fields as strings becomes an error row
``{"line": N, "error": "..."}`` in place; nothing is dropped. Scores are pure functions of the
texts, so a rerun gives the same file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ragcourt.core.user_json import loads_user_json

ScoredRole = Literal["reader", "answerability", "relevance", "correctness"]
SCORED_ROLES: tuple[str, ...] = get_args(ScoredRole)
ROLE_FIELDS: dict[str, tuple[str, str]] = {
    "reader": ("question", "passage"),
    "answerability": ("question", "passage"),
    "relevance": ("question", "passage"),
    "correctness": ("answer", "reference"),
}
MAX_TEXT_CHARS = 200_000


@dataclass(frozen=True)
class ParsedLine:
    """One input line: its number (1-based), the row, or the one-line reason it is unusable."""

    line: int
    row: dict[str, Any] | None
    error: str | None


def parse_lines(role: ScoredRole, lines: Iterable[str]) -> list[ParsedLine]:
    """Every non-blank line of ``lines`` as a :class:`ParsedLine` (module doc)."""
    left, right = ROLE_FIELDS[role]
    out: list[ParsedLine] = []
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = loads_user_json(text)
        except ValueError as err:
            out.append(ParsedLine(n, None, f"line {n}: not JSON ({err})"))
            continue
        if not isinstance(row, dict):
            out.append(ParsedLine(n, None, f"line {n}: not a JSON object"))
            continue
        bad = [f for f in (left, right) if not isinstance(row.get(f), str)]
        if bad:
            out.append(
                ParsedLine(n, None, f"line {n}: {role} needs string fields {left!r} and "
                                    f"{right!r} (missing or not text: {', '.join(bad)})")
            )  # fmt: skip
            continue
        long = [f for f in (left, right) if len(row[f]) > MAX_TEXT_CHARS]
        if long:
            out.append(
                ParsedLine(n, None, f"line {n}: field {long[0]!r} is over {MAX_TEXT_CHARS} chars")
            )
            continue
        out.append(ParsedLine(n, row, None))
    return out


def score_pairs(
    role: ScoredRole, left: Sequence[str], right: Sequence[str]
) -> tuple[list[float], float, list[str | None] | None]:
    """(scores, the role's shipped threshold, the reader's spans or None) of the pairs."""
    if role == "reader":
        from ragcourt.retrieval.reader.model import shipped_reader

        reader = shipped_reader()
        readings = reader.read(left, right)
        return [r.p_answerable for r in readings], reader.threshold, [r.span for r in readings]
    from ragcourt.retrieval.trained_judges.judges import shipped_judges

    judges = shipped_judges()
    return judges.scores(role, left, right), judges.model(role).threshold, None


def scored_rows(role: ScoredRole, parsed: Sequence[ParsedLine]) -> list[dict[str, Any]]:
    """The output rows of ``parsed``, in input order (module doc)."""
    left_f, right_f = ROLE_FIELDS[role]
    good = [p for p in parsed if p.row is not None]
    scores, threshold, spans = score_pairs(
        role, [p.row[left_f] for p in good if p.row], [p.row[right_f] for p in good if p.row]
    )
    by_line: dict[int, dict[str, Any]] = {}
    for i, p in enumerate(good):
        assert p.row is not None
        s = scores[i]
        row = {**p.row, "score": round(s, 6) if math.isfinite(s) else None}
        row["label"] = bool(s >= threshold) if math.isfinite(s) else None
        if spans is not None:
            row["span"] = spans[i] if s >= threshold else None
        by_line[p.line] = row
    return [
        by_line[p.line] if p.row is not None else {"line": p.line, "error": p.error} for p in parsed
    ]


def dumps_rows(rows: Iterable[dict[str, Any]]) -> str:
    """JSON Lines of ``rows`` (UTF-8 text, non-ASCII kept)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)

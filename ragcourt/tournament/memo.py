"""The judgement memo shared by every schedule, and the per-question pairwise rows.

The memo asks the pairwise judge for both presentation orders of every (pair, question)
exactly once per process, whichever schedule (Swiss, round-robin, single-system) needs it
first, and combines them (:func:`ragcourt.tournament.scoring.combine_orders`). If either
order fails the question is an error row: excluded from scores, counted, never a tie.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from ragcourt.tournament.pairwise import OrderKey, OrderVerdict, PairwiseJudge
from ragcourt.tournament.scoring import combine_orders, score
from ragcourt.tournament.swiss import MatchScore, Pair


def _question_row(ab: OrderVerdict, ba: OrderVerdict, margin: float) -> dict[str, Any]:
    """Combine the two orders of one (pair, question) into a pairwise row (a = first of ab)."""
    row: dict[str, Any] = {
        "rationale_ab": ab.rationale,
        "rationale_ba": ba.rationale,
    }
    for tag, v in (("ab", ab), ("ba", ba)):
        p = v.probs
        row[f"p_{tag}_a"], row[f"p_{tag}_b"], row[f"p_{tag}_tie"] = (
            (p.a, p.b, p.tie) if p is not None else (None, None, None)
        )
    errors = [f"order {t}: {v.error}" for t, v in (("AB", ab), ("BA", ba)) if v.error]
    errors += [
        f"order {t}: no probabilities"
        for t, v in (("AB", ab), ("BA", ba))
        if v.probs is None and not v.error
    ]
    if errors or ab.probs is None or ba.probs is None:
        row.update(p_a=None, p_b=None, p_tie=None, margin=None, scheme=None)
        row.update(score_a=None, score_b=None, error="; ".join(errors))
        return row
    comb = combine_orders(ab.probs, ba.probs)
    qs = score(comb, margin)
    row.update(p_a=comb.a, p_b=comb.b, p_tie=comb.tie, margin=qs.margin, scheme=qs.scheme)
    row.update(score_a=qs.s_a, score_b=qs.s_b, error=None)
    return row


class JudgementMemo:
    """Judges each (first, second, question) once per process and serves every schedule.

    ``play`` is a :data:`ragcourt.tournament.swiss.PlayRound`: it judges all missing orders of a
    round's pairs in one batch (so an LLM judge runs them concurrently) and returns match
    totals over the valid questions. :meth:`prefetch` judges pairs before any schedule asks
    (one batch for pairs known in advance, e.g. a whole round-robin); ``executed_by`` counts
    an order-judgement for the first schedule that asks for it, prefetched or not.
    """

    def __init__(self, judge: PairwiseJudge, question_ids: Sequence[str], margin: float = 0.1):
        self.judge = judge
        self.question_ids = list(question_ids)
        self.margin = margin
        self._verdicts: dict[OrderKey, OrderVerdict] = {}
        self._rows: dict[tuple[Pair, str], dict[str, Any]] = {}
        self.requested: dict[str, set[frozenset[str]]] = {}
        self.executed_by: dict[str, int] = {}  # order-judgements first run for each schedule
        self._asked: set[OrderKey] = set()  # order-judgements some schedule asked for

    @property
    def executed(self) -> int:
        """Order-judgements actually run (each (pair, question, order) once)."""
        return len(self._verdicts)

    def _keys(self, pairs: Sequence[Pair]) -> list[OrderKey]:
        """Both orders of every question of ``pairs``, each once, in a fixed order."""
        keys = [
            key
            for a, b in pairs
            for q in self.question_ids
            for key in (OrderKey(a, b, q), OrderKey(b, a, q))
        ]
        return list(dict.fromkeys(keys))

    def prefetch(self, pairs: Sequence[Pair]) -> None:
        """Judge every missing order of ``pairs`` in one batch; no schedule is charged."""
        self._judge([k for k in self._keys(pairs) if k not in self._verdicts])

    def ensure(self, pairs: Sequence[Pair]) -> int:
        """Judge what ``pairs`` still miss (one batch); returns how many of their
        order-judgements no schedule had asked for before (``executed_by``'s unit)."""
        keys = self._keys(pairs)
        self._judge([k for k in keys if k not in self._verdicts])
        new = [k for k in keys if k not in self._asked]
        self._asked.update(new)
        return len(new)

    def _judge(self, missing: list[OrderKey]) -> None:
        if missing:
            verdicts = self.judge.judge(missing)
            if len(verdicts) != len(missing):
                raise RuntimeError(
                    f"judge {self.judge.name} returned {len(verdicts)} verdicts "
                    f"for {len(missing)} requests"
                )
            self._verdicts.update(zip(missing, verdicts, strict=True))

    def rows(self, a: str, b: str) -> list[dict[str, Any]]:
        """Per-question rows of pair (a, b), oriented with ``a`` as system_a."""
        self.ensure([(a, b)])
        out = []
        for q in self.question_ids:
            if ((a, b), q) not in self._rows:
                ab, ba = self._verdicts[OrderKey(a, b, q)], self._verdicts[OrderKey(b, a, q)]
                self._rows[((a, b), q)] = {
                    "system_a": a,
                    "system_b": b,
                    "question_id": q,
                    **_question_row(ab, ba, self.margin),
                }
            out.append(self._rows[((a, b), q)])
        return out

    def play_as(self, schedule_name: str) -> Callable[[list[Pair]], list[MatchScore]]:
        """A PlayRound that also records which schedule asked for each pair, and in
        ``executed_by[schedule_name]`` how many order-judgements it ran that no earlier
        schedule had run (the rest were served from the memo)."""
        used = self.requested.setdefault(schedule_name, set())
        self.executed_by.setdefault(schedule_name, 0)

        def play(pairs: list[Pair]) -> list[MatchScore]:
            self.executed_by[schedule_name] += self.ensure(pairs)
            out = []
            for a, b in pairs:
                used.add(frozenset((a, b)))
                rows = self.rows(a, b)
                ok = [r for r in rows if r["error"] is None]
                out.append(
                    MatchScore(
                        a,
                        b,
                        sum(r["score_a"] for r in ok),
                        sum(r["score_b"] for r in ok),
                        len(ok),
                        len(rows) - len(ok),
                    )
                )
            return out

        return play

    def pairwise_frame(
        self, judge_name: str, schedules: Sequence[str] = ("swiss", "round_robin")
    ) -> pl.DataFrame:
        """Every judged (pair, question) once, in canonical orientation (system_a < system_b),
        with an ``in_<schedule>`` flag per schedule saying whether it used the pair."""
        pairs = sorted({tuple(sorted((a, b))) for (a, b), _q in list(self._rows)})
        records = [row for a, b in pairs for row in self.rows(a, b)]
        frame = pl.DataFrame(records, schema=PAIRWISE_COLUMNS)
        key = pl.concat_str("system_a", "system_b", separator="\x1f")
        flags = {
            f"in_{name}": key.is_in(
                ["\x1f".join(sorted(p)) for p in self.requested.get(name, set())]
            )
            for name in schedules
        }
        return frame.with_columns(judge=pl.lit(judge_name), **flags).sort(
            "system_a", "system_b", "question_id"
        )


PAIRWISE_COLUMNS: dict[str, pl.DataType] = {
    "system_a": pl.String(),
    "system_b": pl.String(),
    "question_id": pl.String(),
    "rationale_ab": pl.String(),
    "rationale_ba": pl.String(),
    "p_ab_a": pl.Float64(),
    "p_ab_b": pl.Float64(),
    "p_ab_tie": pl.Float64(),
    "p_ba_a": pl.Float64(),
    "p_ba_b": pl.Float64(),
    "p_ba_tie": pl.Float64(),
    "p_a": pl.Float64(),
    "p_b": pl.Float64(),
    "p_tie": pl.Float64(),
    "margin": pl.Float64(),
    "scheme": pl.String(),
    "score_a": pl.Float64(),
    "score_b": pl.Float64(),
    "error": pl.String(),
}

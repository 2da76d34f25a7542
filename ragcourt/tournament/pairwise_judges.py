"""Pairwise judges (protocol + registry) and the judgement memo shared by every schedule.

A judge sees one *presentation order* at a time: ``OrderKey(first, second, question_id)``
shows ``first`` as "A" and ``second`` as "B", and returns probabilities over the labels
A / B / C (C = tie) or an error. The memo asks for both orders of every (pair, question)
exactly once per process, whichever schedule (Swiss, round-robin, single-system) needs it
first, and combines them (:func:`ragcourt.tournament.scoring.combine_orders`). If either order fails
the question is an error row: excluded from scores, counted, never a tie.

Registered judges:
- ``llm``: the two-stage DICE judge (analysis, then next-token probabilities), see
  :mod:`ragcourt.tournament.llm_judge`.
- ``correctness_margin``: a non-LLM judge derived from per-answer correctness scores
  (``data/judge/correctness.parquet``) via an ordered logit on their difference, see
  :func:`ordered_logit_probs`. Deterministic and symmetric, so it has no position bias.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from ragcourt.core.errors import ConfigError, SchemaError
from ragcourt.core.params import Params
from ragcourt.tournament.scoring import Probs, combine_orders, ordered_logit, score
from ragcourt.tournament.swiss import MatchScore, Pair

if TYPE_CHECKING:
    from ragcourt.llm.gateway import Gateway


@dataclass(frozen=True)
class OrderKey:
    first: str
    second: str
    question_id: str


@dataclass(frozen=True)
class OrderVerdict:
    """Label probabilities of one presentation order ("A" = first), or an error."""

    probs: Probs | None
    rationale: str = ""
    error: str | None = None


class PairwiseJudge(Protocol):
    name: str

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        """One verdict per key, in order; failures are verdicts with ``error`` set."""
        ...


@dataclass(frozen=True)
class JudgeInputs:
    """What a judge factory may use; ``gateway`` is the stage's (LLM judges build one if None)."""

    params: Params
    answers: pl.DataFrame
    qa: pl.DataFrame
    correctness: pl.DataFrame | None = None
    gateway: Gateway | None = None


@dataclass(frozen=True)
class JudgeEntry:
    factory: Callable[[JudgeInputs], PairwiseJudge]
    needs_correctness: bool
    description: str


# ---------------------------------------------------------------- correctness_margin judge


def ordered_logit_probs(d: float, scale: float, tie_band: float) -> Probs:
    """Pseudo-probabilities from a correctness difference d = c_first − c_second.

    Ordered logit with cut points ±``tie_band`` (τ) and ``scale`` (s):
    P(A) = σ((d − τ)/s), P(B) = σ((−d − τ)/s), P(C) = 1 − P(A) − P(B) (>= 0 for τ >= 0).
    With the defaults s = τ = 0.1 and the RAGalyst rubric grid (steps of 0.2-0.3), any rubric
    step is a hard win (d = 0.1 already gives ΔP = 0.12), |d| <= 0.03 a hard tie, and
    differences in between fall under the soft rule.
    """
    p_a, p_b, p_t = ordered_logit(d, scale, tie_band)
    return Probs(float(p_a), float(p_b), float(p_t))


class CorrectnessMarginJudge:
    """Pairwise verdicts from per-answer correctness scores (table: system, question_id,
    correctness float in [0, 1] or null, error). Missing, null, errored or out-of-range
    scores on either side give an error verdict naming the system and question."""

    name = "correctness_margin"

    def __init__(self, correctness: pl.DataFrame, scale: float = 0.1, tie_band: float = 0.1):
        need = {"system", "question_id", "correctness", "error"}
        if missing := sorted(need - set(correctness.columns)):
            raise SchemaError(f"correctness table: missing column(s) {missing}")
        if scale <= 0 or tie_band < 0:
            raise ConfigError("tournament: correctness_scale must be > 0, tie band >= 0")
        dup = correctness.filter(pl.struct("system", "question_id").is_duplicated())
        if dup.height:
            row = dup.row(0, named=True)
            raise SchemaError(
                f"correctness table: duplicate row for system '{row['system']}', "
                f"question '{row['question_id']}'"
            )
        self.scale, self.tie_band = scale, tie_band
        self._scores: dict[tuple[str, str], tuple[float | None, str | None]] = {
            (s, q): (c, e)
            for s, q, c, e in correctness.select(
                "system", "question_id", pl.col("correctness").cast(pl.Float64), "error"
            ).iter_rows()
        }

    def _lookup(self, system: str, qid: str) -> tuple[float | None, str | None]:
        if (system, qid) not in self._scores:
            return None, f"no correctness score for system '{system}' on question '{qid}'"
        c, err = self._scores[(system, qid)]
        if err:
            return None, f"correctness of '{system}' on '{qid}' failed: {err}"
        if c is None or not math.isfinite(c):
            return None, f"correctness of '{system}' on '{qid}' is null"
        if not 0.0 <= c <= 1.0:
            return None, f"correctness of '{system}' on '{qid}' is {c}, outside [0, 1]"
        return c, None

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        out = []
        for key in keys:
            c1, e1 = self._lookup(key.first, key.question_id)
            c2, e2 = self._lookup(key.second, key.question_id)
            if c1 is None or c2 is None:
                out.append(OrderVerdict(None, error="; ".join(e for e in (e1, e2) if e)))
                continue
            d = c1 - c2
            why = f"correctness A={c1:.2f} vs B={c2:.2f} (d={d:+.2f})"
            out.append(OrderVerdict(ordered_logit_probs(d, self.scale, self.tie_band), why))
        return out


def _correctness_factory(inputs: JudgeInputs) -> PairwiseJudge:
    if inputs.correctness is None:
        raise ConfigError("tournament.judge 'correctness_margin' needs the correctness table")
    tp = inputs.params.tournament
    return CorrectnessMarginJudge(inputs.correctness, tp.correctness_scale, tp.correctness_tie_band)


def _llm_factory(inputs: JudgeInputs) -> PairwiseJudge:
    from ragcourt.tournament.llm_judge import LLMPairwiseJudge  # imports the gateway only when used

    return LLMPairwiseJudge.from_inputs(inputs)


PAIRWISE_JUDGES: dict[str, JudgeEntry] = {
    "llm": JudgeEntry(_llm_factory, False, "DICE two-stage LLM judge (analysis + A/B/C logits)"),
    "correctness_margin": JudgeEntry(
        _correctness_factory, True, "ordered logit on per-answer correctness differences"
    ),
}


def make_judge(name: str, inputs: JudgeInputs) -> PairwiseJudge:
    """Build the registered pairwise judge ``name`` (ConfigError naming the known ones)."""
    if name not in PAIRWISE_JUDGES:
        raise ConfigError(
            f"params.yaml: tournament.judge '{name}' is not one of {sorted(PAIRWISE_JUDGES)}"
        )
    return PAIRWISE_JUDGES[name].factory(inputs)


# ---------------------------------------------------------------- memo + per-question rows


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
    totals over the valid questions.
    """

    def __init__(self, judge: PairwiseJudge, question_ids: Sequence[str], margin: float = 0.1):
        self.judge = judge
        self.question_ids = list(question_ids)
        self.margin = margin
        self._verdicts: dict[OrderKey, OrderVerdict] = {}
        self._rows: dict[tuple[Pair, str], dict[str, Any]] = {}
        self.requested: dict[str, set[frozenset[str]]] = {}
        self.executed_by: dict[str, int] = {}  # order-judgements first run for each schedule

    @property
    def executed(self) -> int:
        """Order-judgements actually run (each (pair, question, order) once)."""
        return len(self._verdicts)

    def ensure(self, pairs: Sequence[Pair]) -> None:
        missing = [
            key
            for a, b in pairs
            for q in self.question_ids
            for key in (OrderKey(a, b, q), OrderKey(b, a, q))
            if key not in self._verdicts
        ]
        missing = list(dict.fromkeys(missing))
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
            before = self.executed
            self.ensure(pairs)
            self.executed_by[schedule_name] += self.executed - before
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

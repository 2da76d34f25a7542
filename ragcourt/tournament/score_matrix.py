"""Dense (pair × question) score matrices: the shared input of replays, BT fits and bootstrap.

Rows are canonical pairs (system_a < system_b by name), columns question ids. Error
judgements are marked invalid and contribute nothing (never a tie). ``totals`` turns a
question-count vector (all ones, or a bootstrap resample) into summed match scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
import polars as pl

from ragcourt.tournament import bradley_terry, elo
from ragcourt.tournament.swiss import Pair

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ScoreMatrix:
    systems: list[str]
    pairs: list[Pair]
    questions: list[str]
    s_a: FloatArray  # (P, Q), 0 where invalid
    s_b: FloatArray
    valid: npt.NDArray[np.bool_]

    @classmethod
    def from_pairwise(cls, df: pl.DataFrame, systems: list[str] | None = None) -> ScoreMatrix:
        """From pairwise rows (system_a, system_b, question_id, score_a, score_b, error)."""
        canon = df.select(
            pl.min_horizontal("system_a", "system_b").alias("a"),
            pl.max_horizontal("system_a", "system_b").alias("b"),
            "question_id",
            pl.when(pl.col("system_a") <= pl.col("system_b"))
            .then(pl.col("score_a"))
            .otherwise(pl.col("score_b"))
            .alias("sa"),
            pl.when(pl.col("system_a") <= pl.col("system_b"))
            .then(pl.col("score_b"))
            .otherwise(pl.col("score_a"))
            .alias("sb"),
            (pl.col("error").is_null() & pl.col("score_a").is_not_null()).alias("ok"),
        )
        if canon.select(pl.struct("a", "b", "question_id").is_duplicated().any()).item():
            raise ValueError("pairwise rows repeat a (pair, question)")
        pairs = sorted(set(zip(canon["a"].to_list(), canon["b"].to_list(), strict=True)))
        questions = sorted(set(canon["question_id"].to_list()))
        p_idx = {p: i for i, p in enumerate(pairs)}
        q_idx = {q: i for i, q in enumerate(questions)}
        s_a = np.zeros((len(pairs), len(questions)))
        s_b = np.zeros_like(s_a)
        valid = np.zeros(s_a.shape, dtype=bool)
        for a, b, q, sa, sb, ok in canon.iter_rows():
            if ok:
                i, j = p_idx[(a, b)], q_idx[q]
                s_a[i, j], s_b[i, j], valid[i, j] = sa, sb, True
        names = systems if systems is not None else sorted({s for p in pairs for s in p})
        return cls(names, pairs, questions, s_a, s_b, valid)

    def totals(self, counts: npt.ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
        """Summed scores per pair, (…, P) each; ``counts`` (…, Q) weights each question."""
        c = np.ones(len(self.questions)) if counts is None else np.asarray(counts, float)
        return c @ self.s_a.T, c @ self.s_b.T

    @cached_property
    def _rows(self) -> dict[Pair, int]:
        return {p: i for i, p in enumerate(self.pairs)}

    def pair_index(self, a: str, b: str) -> tuple[int, bool]:
        """Row of the pair and whether ``a`` is its first (canonical) system."""
        lo, hi = (a, b) if a <= b else (b, a)
        return self._rows[(lo, hi)], a == lo

    def replay_elo(
        self,
        schedule: list[list[Pair]],
        counts: npt.ArrayLike | None = None,
        k: float = 32.0,
        upset_weighting: bool = True,
        initial: float = 1500.0,
    ) -> FloatArray:
        """Elo after replaying ``schedule`` on (resampled) scores: (…, N) in ``systems`` order."""
        tot_a, tot_b = self.totals(counts)
        sys_idx = {s: i for i, s in enumerate(self.systems)}
        ratings = np.full((*tot_a.shape[:-1], len(self.systems)), float(initial))
        for round_pairs in schedule:
            for a, b in round_pairs:
                p, forward = self.pair_index(a, b)
                sa, sb = (
                    (tot_a[..., p], tot_b[..., p]) if forward else (tot_b[..., p], tot_a[..., p])
                )
                ia, ib = sys_idx[a], sys_idx[b]
                ratings[..., ia], ratings[..., ib], _, _ = elo.update_arrays(
                    ratings[..., ia], ratings[..., ib], sa, sb, k, upset_weighting
                )
        return ratings

    def fit_bt(
        self,
        counts: npt.ArrayLike | None = None,
        pairs: list[Pair] | None = None,
        anchor: float = 1500.0,
    ) -> FloatArray:
        """Bradley-Terry on all (or the given) pairs' summed scores: (N,) in ``systems`` order."""
        tot_a, tot_b = self.totals(counts)
        rows = range(len(self.pairs)) if pairs is None else [self.pair_index(*p)[0] for p in pairs]
        rows = sorted(set(rows))
        sys_idx = {s: i for i, s in enumerate(self.systems)}
        ia = [sys_idx[self.pairs[r][0]] for r in rows]
        ib = [sys_idx[self.pairs[r][1]] for r in rows]
        return bradley_terry.fit(ia, ib, tot_a[rows], tot_b[rows], len(self.systems), anchor)

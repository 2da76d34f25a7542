"""The live race, stage ``race`` (spec §6, "Race"): only the survivors answer and are judged on
each round's questions, then :func:`~ragcourt.tournament.race.run_race` drops the systems that
are significantly behind.

Per round ``r`` (a folder ``data/race/rounds/<r>/``, catalog ``race_rounds``):

- ``answers/<system>.parquet``: each survivor's answers to the round's questions
  (:func:`ragcourt.answering.stage.answer_rows`: the answer stage's retrieval and prompts,
  so the reply cache serves a question the answer stage asked already);
- ``verdicts.parquet``, ``correctness.parquet``: the judge stage's DAFE verdicts and
  correctness grades of those answers (:func:`ragcourt.judging.answers_stage.judge_answers`);
- ``pairwise.parquet``: the tournament's pairwise judge on the round's pairs, both orders
  combined as the tournament does (:class:`~ragcourt.tournament.memo.JudgementMemo`).

Each file carries a key (:mod:`ragcourt.core.shards`: what made it, and the library's code):
a file whose key matches is read instead of recomputed, so a killed race resumes at the round
it stopped in and a re-run makes no model call. The real systems race; controls do not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import polars as pl

from ragcourt.answering.candidate_system import CandidateSystem
from ragcourt.answering.params import AnsweringView, ControlsParams
from ragcourt.answering.partitions import config_hash
from ragcourt.answering.stage import answer_rows, check_questions
from ragcourt.answering.systems import load_systems
from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import read_table, write_json
from ragcourt.core.shards import is_done, rows_digest, shard_key, write_shard
from ragcourt.judging.answers_stage import judge_answers, judge_inputs
from ragcourt.judging.params import JudgingView
from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.llm import Gateway
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.memo import JudgementMemo
from ragcourt.tournament.pairwise import PairwiseContext
from ragcourt.tournament.params import TournamentView
from ragcourt.tournament.race import PairOutcome, RaceResult, race_lines, run_race
from ragcourt.tournament.swiss import Pair

log = logging.getLogger("ragcourt.race")


class RaceView(TournamentView, JudgingView, AnsweringView, Protocol):
    """The params the live race reads: it answers and judges as the answer and judge stages
    do, then plays the tournament's pairwise judge."""

    controls: ControlsParams


def _read_or_make(
    path: Path, table: str, key: str, make: Callable[[], pl.DataFrame]
) -> pl.DataFrame:
    """The frame in ``path`` when its key is ``key``; else ``make()``, written with the key."""
    if is_done(path, key):
        return pl.read_parquet(path)
    df = make()
    write_shard(df, path, table, key)
    return df


@dataclass
class LiveRace:
    """Answers and judges what each round of the race asks for (module doc)."""

    params: RaceView
    systems: dict[str, CandidateSystem]
    qa: pl.DataFrame
    gateway: Gateway
    folder: Path
    answered: list[pl.DataFrame] = field(default_factory=list)  # every round's answers

    def _answers(self, r: int, names: Sequence[str], qa: pl.DataFrame) -> pl.DataFrame:
        """The survivors' answers to the round's questions (each system's file reused when its
        config and the questions are unchanged)."""
        folder = self.folder / f"{r:03d}" / "answers"
        keys = {
            n: shard_key(
                {"system": config_hash(self.systems[n], self.params), "qa": rows_digest(qa)}
            )
            for n in names
        }
        todo = [n for n in names if not is_done(folder / f"{n}.parquet", keys[n])]
        if todo:
            chosen = [self.systems[n] for n in todo]
            made = answer_rows(chosen, qa, self.params, self.gateway, pool=self.qa)
            for n in todo:
                write_shard(made[n], folder / f"{n}.parquet", "answers", keys[n])
        return pl.concat([pl.read_parquet(folder / f"{n}.parquet") for n in names], how="vertical")

    def _judged(self, r: int, answers: pl.DataFrame, qa: pl.DataFrame) -> pl.DataFrame:
        """The correctness grades of the round's answers (verdicts written beside them)."""
        folder = self.folder / f"{r:03d}"
        key = shard_key(
            {"answers": rows_digest(answers), "judge": self.params.judge.model_dump(mode="json")}
        )
        if is_done(folder / "verdicts.parquet", key) and is_done(
            folder / "correctness.parquet", key
        ):
            return pl.read_parquet(folder / "correctness.parquet")
        ctx = JudgeContext(self.params, stage="race", shared_gateway=self.gateway)
        verdicts, correctness = judge_answers(judge_inputs(answers, qa), ctx)
        write_shard(verdicts, folder / "verdicts.parquet", "verdicts", key)
        write_shard(correctness, folder / "correctness.parquet", "correctness", key)
        return correctness

    def play(self, r: int, pairs: list[Pair], questions: list[str]) -> list[PairOutcome]:
        """Round ``r``: answer, grade and judge ``pairs`` on ``questions`` (a
        :data:`~ragcourt.tournament.race.PlayPairs`)."""
        order = pl.DataFrame({"question_id": questions}).with_row_index("_at")
        qa = self.qa.join(order, on="question_id").sort("_at").drop("_at")
        names = sorted({s for pair in pairs for s in pair})
        answers = self._answers(r, names, qa)
        self.answered.append(answers)
        correctness = self._judged(r, answers, qa)
        tp = self.params.tournament
        key = shard_key(
            {
                "pairs": [list(p) for p in pairs],
                "answers": rows_digest(answers),
                "correctness": rows_digest(correctness),
                "tournament": tp.model_dump(mode="json"),
            }
        )

        def judge_pairs() -> pl.DataFrame:
            ctx = PairwiseContext(
                self.params,
                answers=answers,
                qa=qa,
                correctness=correctness,
                shared_gateway=self.gateway,
            )
            judge = build_pairwise_judge(tp.judge, ctx)
            memo = JudgementMemo(judge, questions, tp.margin)
            memo.play_as("race")(pairs)
            frame = memo.pairwise_frame(judge.name, schedules=("race",)).drop("in_race")
            return frame.with_columns(race_round=pl.lit(r, dtype=pl.Int32))

        table = _read_or_make(
            self.folder / f"{r:03d}" / "pairwise.parquet", "race_pairwise", key, judge_pairs
        )
        return [_outcome(table, a, b) for a, b in pairs]


def _outcome(table: pl.DataFrame, a: str, b: str) -> PairOutcome:
    """Pair (a, b)'s round from its pairwise rows (stored with system_a < system_b)."""
    first, second = sorted((a, b))
    rows = table.filter((pl.col("system_a") == first) & (pl.col("system_b") == second))
    ok = rows.filter(pl.col("error").is_null())
    mine = "score_a" if a == first else "score_b"
    return PairOutcome(a, b, float(ok[mine].sum()), ok.height, rows.height - ok.height)


def run(params: RaceView, include_controls: bool = False) -> RaceResult:
    """Stage ``race`` (paths relative to the cwd): race the configured real systems (and the
    controls with ``include_controls``) on the QA set; writes the summary (catalog
    ``race_summary``) and every round's files."""
    qa_path = catalog.path("qa")
    qa = check_questions(read_table(qa_path, "qa"), qa_path)
    configured = load_systems(params)
    systems = {s.name: s for s in configured if include_controls or s.control is None}
    if len(systems) < 2:
        raise RagcourtError(
            f"{params.systems_file}: a race needs at least 2 real systems, found {sorted(systems)}"
        )
    gateway = Gateway(params.llm, stage="race")
    rounds = catalog.path("race_rounds")
    rounds.mkdir(parents=True, exist_ok=True)  # an output even when no round is played
    live = LiveRace(params, systems, qa, gateway, rounds)
    try:
        result = run_race(
            list(systems),
            qa["question_id"].to_list(),
            live.play,
            params.race,
        )
    finally:
        gateway.write_metrics()
    write_json(result.model_dump(mode="json"), catalog.path("race_summary"))
    for line in race_lines(result):
        log.info("race: %s", line)
    if live.answered:  # the failure policy over every answer the race asked for
        answered = pl.concat(live.answered, how="vertical")
        controls = {s.name: s.control for s in systems.values() if s.control is not None}
        enforce("race", [assess("answers", answered, controls=controls)], params.failure)
    return result

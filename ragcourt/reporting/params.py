"""The params the report reads: every section below it (the report has none of its own)."""

from __future__ import annotations

from typing import Protocol

from ragcourt.calibration.params import CalibrationView
from ragcourt.judging.params import JudgeParams, JudgingView
from ragcourt.qagen.params import QAGenView
from ragcourt.tournament.params import TournamentView


class ReportingView(TournamentView, JudgingView, CalibrationView, QAGenView, Protocol):
    """The params the report reads: the tournament's, judging's, calibration's and QA
    generation's views; the root :class:`ragcourt.orchestration.params.Params` satisfies it."""

    judge: JudgeParams

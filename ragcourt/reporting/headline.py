"""The report's headline figures: ``data/report/headline.json`` (a DVC metric) as a model.

:func:`headline` reads the stage summaries through :class:`Artifacts` and answers what a reader
came for: the best real system (controls excluded) and its Swiss Elo gap to the runner-up with
the 95% bootstrap interval (``significant``: the interval excludes 0), how many gaps between
neighbours in the ranking are resolved and roughly how many questions would resolve the rest
(:mod:`ragcourt.tournament.gaps`), the discrimination verdict over the tournament and DAFE
checks, the DAFE disagreement rate, the PPI status, the QA yield and the model calls. Flat
keys so ``dvc metrics show`` prints one column each; None where the artifact is missing.
"""

from __future__ import annotations

from ragcourt.calibration.summaries import CalibrationSummary
from ragcourt.core.control_kinds import is_control_pair
from ragcourt.core.fixed_model import FixedModel
from ragcourt.judging.discrimination import CHECKED, NOT_SEPARATED, REVERSED, SEPARATED
from ragcourt.judging.summaries import JudgeSummary
from ragcourt.qagen.summaries import ByoQASummary
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.tournament.gaps import EloGap, EloGaps
from ragcourt.tournament.summaries import TournamentSummary

# discrimination verdicts, worst first (the headline gives the worst over both checks)
VERDICT_REVERSED = "reversed"
VERDICT_NOT_SEPARATED = "not separated"
VERDICT_NOT_CHECKED = "not checked"
VERDICT_SEPARATED = "separated"
VERDICT_NOT_AVAILABLE = "not available"


class Headline(FixedModel):
    """``data/report/headline.json``."""

    best_system: str | None  # rank 1 among the real systems (controls excluded)
    runner_up: str | None
    elo_gap: float | None  # Swiss Elo(best) - Elo(runner-up)
    elo_gap_lo: float | None  # 95% bootstrap interval of that gap
    elo_gap_hi: float | None
    significant: bool | None  # the interval excludes 0; None without an interval
    questions: int | None  # questions per match
    neighbour_gaps: int | None  # gaps between neighbours in the real systems' rank order
    neighbour_gaps_resolved: int | None
    questions_to_resolve: int | None  # estimate: most any unresolved neighbour gap needs
    real_pairs: int | None  # pairs of real systems in the gap matrix
    real_pairs_resolved: int | None  # of those, with a 95% interval excluding 0
    discrimination: str  # separated | not separated | reversed | not checked | not available
    discrimination_detail: str
    dafe_disagreement_rate: float | None
    ppi: str
    human_labels: int | None  # usable labelled answers
    qa_accepted: int | None
    qa_yield: float | None  # accepted / attempts; None for a bring-your-own QA file
    model_calls: int  # real model calls over every stage (cache hits excluded)
    cache_hits: int


def _counts(verdicts: list[str]) -> str:
    """ "k of n separated (r reversed, m not separated)"."""
    sep, rev = verdicts.count(SEPARATED), verdicts.count(REVERSED)
    not_sep = verdicts.count(NOT_SEPARATED)
    text = f"{sep} of {len(verdicts)} separated"
    extra = [f"{n} {what}" for n, what in ((rev, REVERSED), (not_sep, "not separated")) if n]
    return text + (f" ({', '.join(extra)})" if extra else "")


def _check_detail(name: str, pairs: list[tuple[str, bool]]) -> str:
    """One check's counts: pairs of two controls, then real systems against shuffled answers."""
    control = [v for v, both in pairs if both]
    floor = [v for v, both in pairs if not both]
    parts = [f"control pairs {_counts(control)}"] if control else []
    if floor:
        parts.append(f"systems above shuffled answers {_counts(floor)}")
    return f"{name}: " + ", ".join(parts)


def discrimination(ts: TournamentSummary | None, js: JudgeSummary | None) -> tuple[str, str]:
    """(verdict, detail) over the tournament and DAFE checks: the worst verdict of any pair of
    two controls (oracle > random / closed book / shuffled: can the judges rank?). A real system
    not separated from shuffled answers is a finding about that system, named in the detail;
    with no pair of two controls (only a shuffled control), every known pair decides."""
    if ts is None and js is None:
        return VERDICT_NOT_AVAILABLE, "no tournament or judge summary"
    checks = [
        (name, c)
        for name, c in (
            ("tournament", ts.discrimination if ts is not None else None),
            ("DAFE", js.discrimination if js is not None else None),
        )
        if c is not None and c.status == CHECKED
    ]
    if not checks:
        return VERDICT_NOT_CHECKED, "no control systems in this run: see controls.kinds"
    per = [
        (name, [(p.verdict, is_control_pair(p.better_control, p.worse_control)) for p in c.pairs])
        for name, c in checks
    ]
    every = [vb for _, pairs in per for vb in pairs]
    verdicts = [v for v, both in every if both] or [v for v, _ in every]
    detail = "; ".join(_check_detail(name, pairs) for name, pairs in per)
    floor = sorted(
        {
            p.better
            for _, c in checks[:1]  # the ranking's own judge when the tournament ran
            for p in c.pairs
            if p.better_control is None and p.verdict != SEPARATED
        }
    )
    if floor:
        detail += f"; not above shuffled answers ({checks[0][0]}): {', '.join(floor)}"
    if REVERSED in verdicts:
        return VERDICT_REVERSED, detail
    if NOT_SEPARATED in verdicts:
        return VERDICT_NOT_SEPARATED, detail
    if verdicts and all(v == SEPARATED for v in verdicts):
        return VERDICT_SEPARATED, detail
    return VERDICT_NOT_CHECKED, detail


def ppi_status(cs: CalibrationSummary | None) -> str:
    """One line: whether human labels calibrated the judges (PPI), and the low-kappa judges."""
    if cs is None:
        return VERDICT_NOT_AVAILABLE
    if not cs.label_files:
        return "not calibrated: no human labels"
    text = f"calibrated on {cs.answers.usable} labelled answers"
    if cs.low_agreement:
        text += f"; kappa below {cs.kappa_warning}: {', '.join(cs.low_agreement)}"
    return text


def _real_ranked(art: Artifacts) -> list[tuple[str, float]]:
    """(system, Swiss Elo) of the ranked real systems, best first, from the leaderboard."""
    board = art.table("leaderboard")
    if board is None or board["rank"].is_null().all():
        return []
    rows = board.sort("rank").iter_rows(named=True)
    return [(r["system"], float(r["elo"])) for r in rows if not r.get("control")]


def unresolved_need(gaps: list[EloGap]) -> int | None:
    """The most questions any unresolved gap needs (estimate); None when none has one."""
    needs = [g.questions_to_resolve for g in gaps if g.resolved is False]
    known = [n for n in needs if n is not None]
    return max(known) if known else None


def headline(art: Artifacts) -> Headline:
    """The headline figures of the artifacts under ``art.root`` (module doc)."""
    ts, js = art.tournament_summary(), art.judge_summary()
    cs, qa = art.calibration_summary(), art.qa_summary()
    gaps: EloGaps | None = ts.elo_gaps if ts is not None else None
    if ts is not None and ts.outcome != "ranked":  # no valid judgement: nothing is ranked
        gaps = None
    ranked = [s for s, _ in _real_ranked(art)] if gaps is None else gaps.systems
    if ts is not None and ts.outcome != "ranked":
        ranked = []
    head = gaps.best_vs_runner_up() if gaps is not None else None
    if gaps is None and len(ranked) > 1:  # a summary written without the gap intervals
        elos = dict(_real_ranked(art))
        gap: float | None = elos[ranked[0]] - elos[ranked[1]]
    else:
        gap = head.elo_gap if head is not None else None
    adjacent = gaps.adjacent() if gaps is not None else []
    verdict, detail = discrimination(ts, js)
    metrics = art.llm_metrics()
    return Headline(
        best_system=ranked[0] if ranked else None,
        runner_up=ranked[1] if len(ranked) > 1 else None,
        elo_gap=gap,
        elo_gap_lo=head.elo_gap_lo if head is not None else None,
        elo_gap_hi=head.elo_gap_hi if head is not None else None,
        significant=head.resolved if head is not None else None,
        questions=ts.n_questions if ts is not None else None,
        neighbour_gaps=len(adjacent) if gaps is not None else None,
        neighbour_gaps_resolved=sum(1 for g in adjacent if g.resolved)
        if gaps is not None
        else None,
        questions_to_resolve=unresolved_need(adjacent),
        real_pairs=len(gaps.pairs) if gaps is not None else None,
        real_pairs_resolved=sum(1 for g in gaps.pairs if g.resolved) if gaps is not None else None,
        discrimination=verdict,
        discrimination_detail=detail,
        dafe_disagreement_rate=js.dafe.disagreement_rate if js is not None else None,
        ppi=ppi_status(cs),
        human_labels=cs.answers.usable if cs is not None else None,
        qa_accepted=qa.accepted if qa is not None else None,
        qa_yield=None if qa is None or isinstance(qa, ByoQASummary) else qa.acceptance_rate,
        model_calls=sum(m.total.model_calls for m in metrics),
        cache_hits=sum(m.total.cache_hits for m in metrics),
    )

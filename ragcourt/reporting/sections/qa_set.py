"""Report section: synthetic QA generation (budget, acceptance, the models of the three
roles, rejections by filter), from the QA summary; a bring-your-own QA file says so."""

from __future__ import annotations

from ragcourt.qagen.summaries import ByoQASummary, QASummary
from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct


def _model_facts(s: QASummary | ByoQASummary) -> list[tuple[str, str]]:
    """The question / answer / filter models and the contexts' chunking of a generated set."""
    if not isinstance(s, QASummary):
        return []
    m = s.models
    roles = (("question", m.question), ("answer", m.answer), ("filter", m.filter))
    facts = [(f"{role} model", model) for role, model in roles if model]
    if s.reference_chunking:
        facts.append(("contexts from chunking", s.reference_chunking))
    return facts


def qa_generation(art: Artifacts) -> Section:
    """Generation figures and rejections (from the summary, else the ``qa_rejected`` table)."""
    sec = Section(
        "qa",
        "Synthetic QA generation",
        "Candidate questions pass answerability, faithfulness and relevance filters and a "
        "duplicate check; every rejected candidate is kept with the filter that rejected it.",
    )
    s = art.qa_summary()
    if s is None:
        sec.notes += art.note("qa_summary")
        return sec
    sec.facts += [
        ("requested items", fmt(s.requested)),
        ("accepted items", fmt(s.accepted)),
        ("candidates generated", fmt(s.attempts)),
        ("acceptance rate", pct(s.acceptance_rate)),
        ("stopped because", s.stop_reason),
    ]
    sec.facts += _model_facts(s)
    rejections = dict(s.rejections)
    if not rejections:
        rej = art.table("qa_rejected")
        if rej is not None and rej.height:
            rejections = dict(rej["failed_filter"].value_counts().iter_rows())
    if rejections:
        counts = {str(k): int(v) for k, v in rejections.items()}
        sec.tables.append(Table(["filter", "rejected"], [[k, fmt(v)] for k, v in counts.items()]))
        sec.figures.append(plots.counts_bar(counts, "Rejected candidates by filter", "candidates"))
    elif isinstance(s, ByoQASummary) and s.qa_file:
        sec.notes.append(f"QA items were supplied by the user ({s.qa_file}); none generated.")
    return sec

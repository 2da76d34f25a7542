"""The report's sections, one module per question the report answers.

Every builder takes :class:`~ragcourt.reporting.artifacts.Artifacts` (and params where needed)
and returns a :class:`~ragcourt.reporting.model.Section`; it reads the stage summaries as their
typed models and tables as schema-checked frames. A missing artifact becomes a note naming the
file and the stage that makes it; a builder never raises on missing or partial data.
:func:`build_sections` gives them in report order.
"""

from __future__ import annotations

from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.headline import Headline
from ragcourt.reporting.model import Section
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections.dafe_agreement import dafe
from ragcourt.reporting.sections.example_judgements import examples
from ragcourt.reporting.sections.headline import headline_section
from ragcourt.reporting.sections.human_agreement import human_labels
from ragcourt.reporting.sections.metric_correlation import udcg_correlation
from ragcourt.reporting.sections.model_calls import model_usage
from ragcourt.reporting.sections.qa_set import qa_generation
from ragcourt.reporting.sections.race import race_section
from ragcourt.reporting.sections.ranking import leaderboard
from ragcourt.reporting.sections.release_gate import release_gate
from ragcourt.reporting.sections.retrieval_metrics import retrieval, retrieval_intro
from ragcourt.reporting.sections.run_overview import overview
from ragcourt.reporting.sections.tournament_cost import swiss_cost
from ragcourt.reporting.sections.validity_check import validity

__all__ = [
    "build_sections",
    "dafe",
    "examples",
    "headline_section",
    "human_labels",
    "leaderboard",
    "model_usage",
    "overview",
    "qa_generation",
    "race_section",
    "release_gate",
    "retrieval",
    "retrieval_intro",
    "swiss_cost",
    "udcg_correlation",
    "validity",
]


def build_sections(
    art: Artifacts, params: ReportingView, head: Headline | None = None
) -> list[Section]:
    """Every section, in the report's order (the headline, then validity); ``head``: the
    headline figures when already computed."""
    return [
        headline_section(art, params, head),
        validity(art),
        overview(art, params),
        leaderboard(art, params),
        *([release_gate(art, params)] if params.gate.baseline else []),
        human_labels(art),
        swiss_cost(art),
        *(
            [race_section(art)]
            if art.path("race_summary").is_file() or art.path("race_replay").is_file()
            else []
        ),
        dafe(art),
        retrieval(art, params),
        udcg_correlation(art),
        qa_generation(art),
        model_usage(art),
        examples(art),
    ]

"""Report section: model calls and cost per stage and model, as the LLM gateway counted them
(``<metrics_dir>/llm_<stage>.json``)."""

from __future__ import annotations

from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt

COLUMNS = [
    "stage",
    "model",
    "requests",
    "cache hits",
    "model calls",
    "errors",
    "prompt tok",
    "completion tok",
    "model s",
    "cost",
]


def model_usage(art: Artifacts) -> Section:
    """Requests, cache hits, real calls, errors, tokens, model time and cost; total cost."""
    sec = Section(
        "calls",
        "Model calls and cost",
        "Per stage and model as the LLM gateway counted them: requests, disk-cache hits, real "
        "model calls (retries included), tokens of real calls, model time and cost (0 for "
        "the local model).",
    )
    metrics = art.llm_metrics()
    if not metrics:
        sec.notes.append(
            f"Not available: no {art.metrics_dir}/llm_*.json (written by every stage "
            "that calls a model)."
        )
        return sec
    rows = []
    tot_cost = 0.0
    for m in metrics:
        for name, c in m.models.items():
            rows.append(
                [
                    m.stage,
                    name,
                    fmt(c.requests),
                    fmt(c.cache_hits),
                    fmt(c.model_calls),
                    fmt(c.errors),
                    fmt(c.prompt_tokens),
                    fmt(c.completion_tokens),
                    fmt(c.model_time_s, 1),
                    f"${float(c.cost_usd or 0):.4f}",
                ]
            )
            tot_cost += float(c.cost_usd or 0)
    sec.tables.append(Table(COLUMNS, rows))
    sec.facts.append(("total cost", f"${tot_cost:.4f}"))
    sec.figures.append(plots.cost_per_stage(metrics))
    sec.notes.append(
        "A re-run with unchanged inputs is served from the cache: its model calls are 0 and the "
        "counts above describe the latest run of each stage."
    )
    return sec

"""Per-query IR metrics of a retrieval run against qrels, computed by ir-measures.

For every cutoff k: ``R@k`` (recall), ``P@k`` (precision), ``RR@k`` (reciprocal rank; its mean
is MRR@k), ``nDCG@k`` and ``Success@k`` (hit rate: 1 if any relevant chunk is in the top k).

ir-measures (like trec_eval) orders a run by score and breaks score ties by document id, which
would silently re-order our ties. We therefore hand it score = 1 / rank so the evaluated order
is exactly the run's ``rank`` column. Every query with at least one relevant chunk gets a value
for every measure: a query the run has no rows for scores 0, as trec_eval's ``-c`` does.
Queries without relevant chunks are not evaluated (their metrics are undefined); callers count
them (``n_unevaluable`` in :mod:`ragcourt.retrieval.evaluation`) rather than averaging them in as 0.
"""

from __future__ import annotations

import ir_measures
import polars as pl
from ir_measures import RR, Measure, P, R, Success, nDCG

from ragcourt.core.errors import RagcourtError

METRIC_FACTORIES = {"R": R, "P": P, "RR": RR, "nDCG": nDCG, "Success": Success}
OUT_SCHEMA = {"query_id": pl.String, "measure": pl.String, "value": pl.Float64}


def measures_for(ks: list[int], metrics: list[str] | None = None) -> list[Measure]:
    """ir-measures objects for every (metric, k); ``metrics`` defaults to all five."""
    names = metrics or list(METRIC_FACTORIES)
    bad = [n for n in names if n not in METRIC_FACTORIES]
    if bad or not ks or any(k <= 0 for k in ks):
        raise RagcourtError(f"ir metrics: bad metrics {bad} or cutoffs {ks}")
    return [METRIC_FACTORIES[n] @ k for n in names for k in sorted(set(ks))]


def evaluate(
    run: pl.DataFrame, qrels: pl.DataFrame, ks: list[int], metrics: list[str] | None = None
) -> pl.DataFrame:
    """Per-query values (query_id, measure, value) of ``run`` (retrieval_run) vs ``qrels``
    (query_id, chunk_id, relevance), one row per judged query and measure."""
    measures = measures_for(ks, metrics)
    judged = qrels.filter(pl.col("relevance") > 0)
    if judged.is_empty():
        return pl.DataFrame(schema=OUT_SCHEMA)
    q = [
        ir_measures.Qrel(str(a), str(b), int(c))
        for a, b, c in qrels.select("query_id", "chunk_id", "relevance").iter_rows()
    ]
    judged_ids = set(judged["query_id"].to_list())
    r = [
        ir_measures.ScoredDoc(str(a), str(b), 1.0 / int(c))
        for a, b, c in run.select("query_id", "chunk_id", "rank").iter_rows()
        if a in judged_ids
    ]
    calc = ir_measures.iter_calc(measures, q, r) if r else []
    values = {(m.query_id, str(m.measure)): float(m.value) for m in calc}
    rows = [
        (qid, str(m), values.get((qid, str(m)), 0.0))
        for qid in sorted(judged_ids)
        for m in measures
    ]
    return pl.DataFrame(rows, schema=OUT_SCHEMA, orient="row")


def mean_by_measure(per_query: pl.DataFrame) -> dict[str, float]:
    """Mean over queries of each measure (e.g. mean RR@10 = MRR@10)."""
    agg = per_query.group_by("measure").agg(pl.col("value").mean()).sort("measure")
    return dict(zip(agg["measure"].to_list(), agg["value"].to_list(), strict=True))

"""The ``calibrate`` stage: judge-human agreement and PPI-corrected system scores.

Inputs: the pipeline's ``qa``, ``answers``, ``verdicts``, ``correctness`` (and, optional,
``relevance`` and the tournament's ``pairwise``) tables and the human label files
(``<labels_dir>/*.jsonl``, :mod:`ragcourt.calibration.labels`). The stage runs only when label
files exist (:func:`has_labels`); :func:`run` raises a one-line error otherwise.

Labels are matched to the current data by item and content: a label of an answer (or passage)
whose text has changed since it was labelled is **stale** and not used; items whose labellers
disagree are **conflicts** and not used; "can't tell" answers are not used. All three are
counted in the summary. Human answer labels are Y = 1 (correct) / 0 (incorrect).

Outputs (:class:`CalibrationOutputs`; schemas below):

* ``agreement`` (:data:`ragcourt.calibration.agreement.AGREEMENT_SCHEMA`): per judge (each DAFE
  judge in its role, the final DAFE verdict, correctness at ``correctness_threshold``, passage
  relevance) accuracy, Cohen's kappa and Spearman with bootstrap CIs and n;
* ``ppi_systems`` (:data:`PPI_SYSTEMS_SCHEMA`): per system and predictor (the final DAFE
  verdict ``dafe``, the ``correctness`` score, each primary judge's verdict) the judge-only,
  human-only and PPI estimates of accuracy with (1 − alpha) intervals
  (:mod:`ragcourt.calibration.ppi`);
* ``ppi_pairs`` (:data:`PPI_PAIRS_SCHEMA`): per pair of systems, the accuracy difference
  (PPI on the per-question difference Y_a − Y_b over questions where both answers are
  labelled) and, when the tournament's ``pairwise`` table is given, the DICE win rate of
  system_a (judge: mean ``score_a`` of the valid judgements of the question; human outcome
  (1 + Y_a − Y_b) / 2);
* ``summary`` (:class:`CalibrationSummary`, JSON): label counts, warnings (judge-human kappa
  below ``kappa_warning``, stale labels, strata without labels, ...) and what is and is not
  corrected.

Labelled questions are weighted by post-stratification over the sampling strata
(:func:`ragcourt.calibration.sampling.question_strata`, recomputed from the current verdicts):
w = N_h / m_h, so over-sampled contested questions do not bias the estimates.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from pydantic import BaseModel

from ragcourt.calibration.agreement import (
    AGREEMENT_SCHEMA,
    agreement_frame,
    binary_judge_agreement,
    graded_agreement,
)
from ragcourt.calibration.labels import (
    AnswerLabel,
    PassageLabel,
    UndoRecord,
    label_files,
    load_labels,
    resolve_labels,
)
from ragcourt.calibration.ppi import Estimates, Interval, poststratified_weights, ppi_difference
from ragcourt.calibration.ppi import estimate as ppi_estimate
from ragcourt.calibration.sampling import (
    SampleParams,
    answer_population,
    passage_population,
    question_strata,
    sample_items,
)
from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table, write_json, write_parquet
from ragcourt.core.params import CalibrationParams, Params
from ragcourt.core.schemas import PolarsDtype, empty, frame_schema

log = logging.getLogger("ragcourt.calibration")


PPI_SYSTEMS_SCHEMA: dict[str, PolarsDtype] = frame_schema("calibration_ppi_systems")

PPI_PAIRS_SCHEMA: dict[str, PolarsDtype] = frame_schema("calibration_ppi_pairs")


@dataclass(frozen=True)
class CalibrationInputs:
    """Input paths; ``relevance``/``pairwise`` None (or absent files) skip those parts."""

    labels_dir: Path
    qa: Path
    answers: Path
    verdicts: Path
    correctness: Path
    relevance: Path | None = None
    pairwise: Path | None = None

    @classmethod
    def default(cls, root: Path = Path("."), labels_dir: Path | None = None) -> CalibrationInputs:
        """The catalogued pipeline artifacts under ``root`` and ``root/data/labels``."""
        return cls(
            labels_dir=labels_dir if labels_dir is not None else root / catalog.DEFAULT_LABELS_DIR,
            qa=root / catalog.path("qa"),
            answers=root / catalog.path("answers"),
            verdicts=root / catalog.path("verdicts"),
            correctness=root / catalog.path("correctness"),
            relevance=root / catalog.path("relevance"),
            pairwise=root / catalog.path("pairwise"),
        )


@dataclass(frozen=True)
class CalibrationOutputs:
    """Output paths (Parquet tables and the JSON summary)."""

    agreement: Path
    ppi_systems: Path
    ppi_pairs: Path
    summary: Path

    @classmethod
    def default(cls, root: Path = Path(".")) -> CalibrationOutputs:
        return cls(
            agreement=root / catalog.path("calibration_agreement"),
            ppi_systems=root / catalog.path("calibration_ppi_systems"),
            ppi_pairs=root / catalog.path("calibration_ppi_pairs"),
            summary=root / catalog.path("calibration_summary"),
        )


class LabelCounts(BaseModel):
    """Effective labels of one kind and what became of them."""

    labeled: int = 0  # items with an effective label
    usable: int = 0  # used by agreement / PPI
    cant_tell: int = 0
    conflicting: int = 0  # labellers disagree
    stale: int = 0  # the item changed (or is gone) since it was labelled


class CalibrationSummary(BaseModel):
    """``summary.json`` of the calibrate stage."""

    label_files: list[str]
    labelers: list[str]
    n_records: int
    answers: LabelCounts
    passages: LabelCounts
    alpha: float
    min_labels: int
    kappa_warning: float
    systems: list[str]
    predictors: list[str]
    low_agreement: list[str]  # judges (judge/role) with kappa below kappa_warning
    warnings: list[str]
    corrected: list[str]
    not_corrected: list[str]


@dataclass(frozen=True)
class CalibrationResult:
    agreement: pl.DataFrame
    ppi_systems: pl.DataFrame
    ppi_pairs: pl.DataFrame
    summary: CalibrationSummary


def has_labels(labels_dir: Path) -> bool:
    """True when ``labels_dir`` holds at least one label file (``*.jsonl``)."""
    return bool(label_files(labels_dir))


# ------------------------------------------------------------------ helpers


def _interval_cols(prefix: str, iv: Interval | None) -> dict[str, float | None]:
    if iv is None:
        return {f"{prefix}_mean": None, f"{prefix}_lo": None, f"{prefix}_hi": None}
    return {f"{prefix}_mean": iv.estimate, f"{prefix}_lo": iv.lo, f"{prefix}_hi": iv.hi}


def _est_cols(est: Estimates, notes: Sequence[str]) -> dict[str, Any]:
    ratio = None
    if est.ppi is not None and est.human is not None and est.human.width > 0:
        ratio = est.ppi.width / est.human.width
    return {
        "n_labeled": est.n_labeled,
        "n_unlabeled": est.n_unlabeled,
        "lam": est.lam,
        **_interval_cols("judge", est.judge),
        **_interval_cols("human", est.human),
        **_interval_cols("ppi", est.ppi),
        "width_ratio": ratio,
        "note": "; ".join([*est.notes, *notes]) or None,
    }


def _excludes(iv: Interval | None, value: float) -> bool | None:
    return None if iv is None else not iv.covers(value)


def _weights(
    lab_strata: Sequence[str], pop_strata: Sequence[str]
) -> tuple[np.ndarray[Any, np.dtype[np.float64]] | None, list[str]]:
    if not lab_strata:
        return None, []
    sw = poststratified_weights(lab_strata, pop_strata)
    notes = []
    if sw.uncovered:
        strata = ", ".join(f"{s} ({n})" for s, n in sw.uncovered.items())
        notes.append(
            f"strata without labels, not corrected: {strata}; "
            f"{sw.uncovered_share:.0%} of the judged items"
        )
    return sw.weights, notes


def _predictors(verdicts: pl.DataFrame) -> list[tuple[str, str, pl.Expr]]:
    """(name, role, value expression) of each per-answer predictor over the judge table."""
    out: list[tuple[str, str, pl.Expr]] = [
        ("dafe", "final", pl.col("final_verdict").cast(pl.Float64)),
        ("correctness", "correctness", pl.col("correctness")),
    ]
    used = {"dafe", "correctness"}
    for role in ("primary1", "primary2"):
        names = verdicts[f"{role}_judge"].drop_nulls()
        name = str(names.mode().sort()[0]) if names.len() else role
        if name in used:
            name = f"{name}:{role}"
        used.add(name)
        expr = (
            pl.when(pl.col(f"{role}_error").is_null())
            .then(pl.col(f"{role}_verdict").cast(pl.Float64))
            .otherwise(None)
        )
        out.append((name, role, expr))
    return out


def _judge_table(
    verdicts: pl.DataFrame, correctness: pl.DataFrame, strata: pl.DataFrame
) -> pl.DataFrame:
    roles = ("primary1", "primary2", "arbitrator")
    cols = [f"{r}_{c}" for r in roles for c in ("judge", "verdict", "score", "error")]
    return (
        verdicts.select("system", "question_id", "final_verdict", *cols)
        .join(
            correctness.filter(pl.col("error").is_null()).select(
                "system", "question_id", "correctness"
            ),
            on=["system", "question_id"],
            how="left",
        )
        .join(strata, on="question_id", how="left")
        .with_columns(pl.col("stratum").fill_null("unjudged"))
    )


def _match(labels: pl.DataFrame, population: pl.DataFrame) -> tuple[pl.DataFrame, LabelCounts]:
    """Labels of one kind matched to current items: usable rows and the counts."""
    counts = LabelCounts(labeled=labels.height)
    if labels.height == 0:
        return labels, counts
    cur = population.select("item_id", pl.col("content_sha").alias("_current_sha"))
    m = labels.join(cur, on="item_id", how="left")
    stale = m["_current_sha"].is_null() | (m["_current_sha"] != m["content_sha"])
    m = m.with_columns(stale.alias("_stale"))
    counts.stale = int(m["_stale"].sum())
    fresh = m.filter(~pl.col("_stale"))
    counts.conflicting = int(fresh["conflict"].sum())
    fresh = fresh.filter(~pl.col("conflict"))
    counts.cant_tell = int((fresh["value"] == "cant_tell").sum())
    usable = fresh.filter(pl.col("value") != "cant_tell").drop("_current_sha", "_stale")
    counts.usable = usable.height
    return usable, counts


# ------------------------------------------------------------------ compute


def compute(
    qa: pl.DataFrame,
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    relevance: pl.DataFrame | None,
    pairwise: pl.DataFrame | None,
    records: Sequence[AnswerLabel | PassageLabel | UndoRecord],
    params: CalibrationParams | None = None,
    files: Sequence[str] = (),
) -> CalibrationResult:
    """Agreement, PPI tables and summary from the frames and label records (no I/O)."""
    p = params or CalibrationParams()
    warnings: list[str] = []
    resolved = resolve_labels(records)
    strata = question_strata(verdicts, correctness, p.correctness_threshold)

    a_pop = answer_population(qa, answers, verdicts, correctness, p.correctness_threshold)
    a_lab, a_counts = _match(resolved.filter(pl.col("kind") == "answer"), a_pop)
    a_lab = a_lab.select(
        "system", "question_id", (pl.col("value") == "correct").cast(pl.Float64).alias("y")
    )
    p_lab_all = resolved.filter(pl.col("kind") == "passage")
    if relevance is not None:
        p_lab, p_counts = _match(p_lab_all, passage_population(qa, answers, relevance))
    else:
        p_lab, p_counts = p_lab_all.clear(), LabelCounts(labeled=p_lab_all.height)
        if p_lab_all.height:
            warnings.append(f"{p_lab_all.height} passage label(s) but no relevance table: not used")

    for what, c in (("answer", a_counts), ("passage", p_counts)):
        if c.stale:
            warnings.append(
                f"{c.stale} {what} label(s) are stale (the item changed or is gone since it "
                "was labelled) and are not used; label the current sample again"
            )
        if c.conflicting:
            warnings.append(f"{c.conflicting} {what} item(s) have conflicting labels: not used")

    jt = _judge_table(verdicts, correctness, strata)
    preds = _predictors(verdicts)
    jt = jt.with_columns([expr.alias(f"pred:{name}") for name, _, expr in preds])
    jl = jt.join(a_lab, on=["system", "question_id"], how="left")
    systems = sorted(jt["system"].unique().to_list())

    # ---- agreement
    rows: list[dict[str, Any]] = []
    bs: dict[str, Any] = {
        "n_resamples": p.bootstrap_resamples,
        "seed": p.seed,
        "alpha": p.alpha,
        "kappa_warning": p.kappa_warning,
    }
    labeled = jl.filter(pl.col("y").is_not_null())
    for role in ("primary1", "primary2", "arbitrator"):
        sub = labeled.filter(
            pl.col(f"{role}_verdict").is_not_null() & pl.col(f"{role}_error").is_null()
        )
        names = sub[f"{role}_judge"].drop_nulls()
        name = str(names.mode().sort()[0]) if names.len() else role
        score = sub[f"{role}_score"].to_list()
        rows.append(
            binary_judge_agreement(
                name,
                role,
                (sub["y"] == 1.0).to_list(),
                sub[f"{role}_verdict"].to_list(),
                score if any(s is not None for s in score) else None,
                **bs,
            )
        )
    sub = labeled.filter(pl.col("final_verdict").is_not_null())
    rows.append(
        binary_judge_agreement(
            "dafe", "final", (sub["y"] == 1.0).to_list(), sub["final_verdict"].to_list(), **bs
        )
    )
    sub = labeled.filter(pl.col("correctness").is_not_null())
    rows.append(
        binary_judge_agreement(
            "correctness",
            "correctness",
            (sub["y"] == 1.0).to_list(),
            (sub["correctness"] >= p.correctness_threshold).to_list(),
            sub["correctness"].to_list(),
            **bs,
        )
    )
    if relevance is not None and p_lab.height:
        pj = p_lab.join(
            relevance.filter(pl.col("relevance").is_not_null()).select(
                "question_id", "chunk_id", "relevance"
            ),
            on=["question_id", "chunk_id"],
            how="inner",
        )
        rows.append(
            graded_agreement(
                "relevance",
                "relevance",
                pj["value"].cast(pl.Int64).to_list(),
                pj["relevance"].cast(pl.Int64).to_list(),
                n_resamples=p.bootstrap_resamples,
                seed=p.seed,
                alpha=p.alpha,
                kappa_warning=p.kappa_warning,
            )
        )
    agreement = agreement_frame([r for r in rows if r["n"] > 0])
    low: list[str] = []
    for r in agreement.filter(pl.col("low_agreement")).iter_rows(named=True):
        low.append(f"{r['judge']}/{r['role']}")
        warnings.append(
            f"low judge-human agreement: {r['judge']} ({r['role']}) has Cohen's kappa "
            f"{r['kappa']:.2f} with the human labels (n={r['n']}), below {p.kappa_warning}; "
            "its label-free scores are unreliable on this data, use the PPI estimates"
        )

    # ---- per-system PPI
    sys_rows: list[dict[str, Any]] = []
    for s in systems:
        js = jl.filter(pl.col("system") == s)
        for name, role, _ in preds:
            col = f"pred:{name}"
            pop = js.filter(pl.col(col).is_not_null())
            lab = pop.filter(pl.col("y").is_not_null())
            w, notes = _weights(lab["stratum"].to_list(), pop["stratum"].to_list())
            est = ppi_estimate(
                lab["y"].to_numpy(),
                lab[col].to_numpy(),
                pop[col].to_numpy(),
                alpha=p.alpha,
                weights=w,
                min_labels=p.min_labels,
                power_tuning=p.power_tuning,
            )
            sys_rows.append({"system": s, "predictor": name, "role": role} | _est_cols(est, notes))
    ppi_systems = pl.DataFrame(sys_rows, schema=PPI_SYSTEMS_SCHEMA)
    _warn_uncovered(ppi_systems, warnings)
    wider = ppi_systems.filter(pl.col("width_ratio") > 1.0)
    if wider.height:
        which = ", ".join(f"{r['system']}/{r['predictor']}" for r in wider.iter_rows(named=True))
        warnings.append(
            f"the PPI interval is wider than the human-only one for {which}: that judge's "
            "errors add more noise than its scores add information; prefer the human-only "
            "interval there (or set power_tuning, with 100+ labels)"
        )

    # ---- pairs
    pair_rows: list[dict[str, Any]] = []
    for i, sa in enumerate(systems):
        for sb in systems[i + 1 :]:
            a = jl.filter(pl.col("system") == sa)
            b = jl.filter(pl.col("system") == sb).drop("stratum")
            ab = a.join(b, on="question_id", how="inner", suffix="_b")
            for name, _, _ in preds:
                col = f"pred:{name}"
                pop = ab.filter(pl.col(col).is_not_null() & pl.col(f"{col}_b").is_not_null())
                lab = pop.filter(pl.col("y").is_not_null() & pl.col("y_b").is_not_null())
                w, notes = _weights(lab["stratum"].to_list(), pop["stratum"].to_list())
                est = ppi_difference(
                    lab["y"].to_numpy(),
                    lab["y_b"].to_numpy(),
                    lab[col].to_numpy(),
                    lab[f"{col}_b"].to_numpy(),
                    pop[col].to_numpy(),
                    pop[f"{col}_b"].to_numpy(),
                    alpha=p.alpha,
                    weights=w,
                    min_labels=p.min_labels,
                    power_tuning=p.power_tuning,
                )
                pair_rows.append(_pair_row(sa, sb, "accuracy_diff", name, 0.0, est, notes))
            if pairwise is not None:
                pair_rows.append(_tournament_row(sa, sb, pairwise, a, b, strata, p))
    ppi_pairs = pl.DataFrame(pair_rows, schema=PPI_PAIRS_SCHEMA)

    if a_counts.usable and ppi_systems["ppi_mean"].is_null().all():
        warnings.append(
            f"no system has {p.min_labels} usable answer labels: no PPI estimate yet "
            "(label more items)"
        )
    for w_ in warnings:
        log.warning(w_)

    labelers = sorted({r.labeler for r in records})
    summary = CalibrationSummary(
        label_files=list(files),
        labelers=labelers,
        n_records=len(records),
        answers=a_counts,
        passages=p_counts,
        alpha=p.alpha,
        min_labels=p.min_labels,
        kappa_warning=p.kappa_warning,
        systems=systems,
        predictors=[n for n, _, _ in preds],
        low_agreement=low,
        warnings=warnings,
        corrected=_corrected(pairwise is not None),
        not_corrected=_not_corrected(pairwise is not None),
    )
    return CalibrationResult(agreement, ppi_systems, ppi_pairs, summary)


def _warn_uncovered(ppi_systems: pl.DataFrame, warnings: list[str]) -> None:
    hit = ppi_systems.filter(pl.col("note").str.contains("strata without labels"))
    if hit.height:
        warnings.append(
            f"{hit.height} system/predictor estimate(s) have sampling strata without labels "
            "(see the note column): those strata are not corrected"
        )


def _pair_row(
    sa: str, sb: str, target: str, predictor: str, null: float, est: Estimates, notes: list[str]
) -> dict[str, Any]:
    return {
        "system_a": sa,
        "system_b": sb,
        "target": target,
        "predictor": predictor,
        "null_value": null,
        **_est_cols(est, notes),
        "ppi_excludes_null": _excludes(est.ppi, null),
        "judge_excludes_null": _excludes(est.judge, null),
    }


def _tournament_row(
    sa: str,
    sb: str,
    pairwise: pl.DataFrame,
    a: pl.DataFrame,
    b: pl.DataFrame,
    strata: pl.DataFrame,
    p: CalibrationParams,
) -> dict[str, Any]:
    """PPI of system_a's DICE win rate against system_b (module doc)."""
    judged = (
        pairwise.filter(
            (pl.col("system_a") == sa)
            & (pl.col("system_b") == sb)
            & pl.col("error").is_null()
            & pl.col("score_a").is_not_null()
        )
        .group_by("question_id")
        .agg(pl.col("score_a").mean().alias("shat"))
        .join(strata, on="question_id", how="left")
        .with_columns(pl.col("stratum").fill_null("unjudged"))
    )
    human = (
        a.select("question_id", "y")
        .join(b.select("question_id", pl.col("y").alias("y_b")), on="question_id")
        .filter(pl.col("y").is_not_null() & pl.col("y_b").is_not_null())
        .select("question_id", ((1 + pl.col("y") - pl.col("y_b")) / 2).alias("s"))
    )
    lab = judged.join(human, on="question_id", how="inner")
    w, notes = _weights(lab["stratum"].to_list(), judged["stratum"].to_list())
    est = ppi_estimate(
        lab["s"].to_numpy(),
        lab["shat"].to_numpy(),
        judged["shat"].to_numpy(),
        alpha=p.alpha,
        weights=w,
        min_labels=p.min_labels,
        power_tuning=p.power_tuning,
    )
    if judged.height == 0:
        notes.append("the tournament judged no question of this pair")
    return _pair_row(sa, sb, "win_rate", "tournament", 0.5, est, notes)


def _corrected(with_pairwise: bool) -> list[str]:
    out = [
        "per-system accuracy: PPI over the final DAFE verdict, the correctness score and each "
        "primary judge's verdict (ppi_systems)",
        "per-pair accuracy difference: PPI over the per-question difference of the same "
        "predictors, on questions where both systems' answers are labelled (ppi_pairs, "
        "target accuracy_diff)",
    ]
    if with_pairwise:
        out.append(
            "per-pair DICE win rate of system_a: PPI over the tournament's per-question "
            "score_a, with the human outcome (1 + Y_a - Y_b) / 2 from the two answer labels "
            "(ppi_pairs, target win_rate)"
        )
    return out


def _not_corrected(with_pairwise: bool) -> list[str]:
    out = [
        "Elo, Bradley-Terry ratings and the leaderboard order: they aggregate the "
        "uncorrected pairwise judgements over the Swiss pairings",
        "the DAFE arbitrator alone (it only judges disagreements: agreement table only)",
        "retrieval measures and UDCG (passage labels measure relevance-judge agreement only)",
    ]
    if with_pairwise:
        out.append(
            "the human win-rate outcome is derived from absolute correctness: a tie when both "
            "answers are correct or both wrong, so a judge preferring the better of two "
            "correct answers counts as an error there"
        )
    else:
        out.append("the tournament (no pairwise table given)")
    return out


# ------------------------------------------------------------------ run (I/O)


def _optional(path: Path | None, table: str) -> pl.DataFrame | None:
    if path is None or not path.is_file():
        return None
    return read_table(path, table)


def sample_from_artifacts(sample_params: SampleParams, inputs: CalibrationInputs) -> pl.DataFrame:
    """The labelling sample (:func:`ragcourt.calibration.sampling.sample_items`) of the
    artifacts named by ``inputs`` (``relevance`` optional: no passage items without it)."""
    return sample_items(
        read_table(inputs.qa, "qa"),
        read_table(inputs.answers, "answers"),
        read_table(inputs.verdicts, "verdicts"),
        read_table(inputs.correctness, "correctness"),
        _optional(inputs.relevance, "relevance"),
        sample_params,
    )


def run(
    params: CalibrationParams | None,
    inputs: CalibrationInputs,
    outputs: CalibrationOutputs,
) -> CalibrationSummary:
    """Read the artifacts and label files, :func:`compute`, write the outputs atomically."""
    files = label_files(inputs.labels_dir)
    if not files:
        raise RagcourtError(
            f"{inputs.labels_dir}: no label files (*.jsonl); label items with "
            "`ragcourt label serve` (or export/import a CSV) first"
        )
    records = load_labels(inputs.labels_dir)
    result = compute(
        read_table(inputs.qa, "qa"),
        read_table(inputs.answers, "answers"),
        read_table(inputs.verdicts, "verdicts"),
        read_table(inputs.correctness, "correctness"),
        _optional(inputs.relevance, "relevance"),
        _optional(inputs.pairwise, "pairwise"),
        records,
        params,
        [str(f) for f in files],
    )
    write_parquet(result.agreement, outputs.agreement)
    write_parquet(result.ppi_systems, outputs.ppi_systems)
    write_parquet(result.ppi_pairs, outputs.ppi_pairs)
    write_json(result.summary.model_dump(mode="json"), outputs.summary)
    return result.summary


def no_labels_summary(params: CalibrationParams, labels_dir: Path) -> CalibrationSummary:
    """The summary of a run without label files: nothing is corrected, and it says so."""
    return CalibrationSummary(
        label_files=[],
        labelers=[],
        n_records=0,
        answers=LabelCounts(),
        passages=LabelCounts(),
        alpha=params.alpha,
        min_labels=params.min_labels,
        kappa_warning=params.kappa_warning,
        systems=[],
        predictors=[],
        low_agreement=[],
        warnings=[
            f"no label files under {labels_dir}: the judges are not checked against people "
            "(label a sample with `ragcourt label serve`, or export/import a CSV)"
        ],
        corrected=[],
        not_corrected=["everything: there are no human labels"],
    )


def run_stage(params: Params) -> CalibrationSummary:
    """Stage ``calibrate``: judge-human agreement and PPI estimates from the label files
    under ``calibration.labels_dir``; without label files it writes empty tables and a
    summary that says nothing was calibrated (the stage never fails for lack of labels)."""
    settings = params.calibration
    inputs = CalibrationInputs.default(labels_dir=Path(settings.labels_dir))
    outputs = CalibrationOutputs.default()
    if has_labels(inputs.labels_dir):
        return run(settings, inputs, outputs)
    summary = no_labels_summary(settings, inputs.labels_dir)
    write_parquet(empty("calibration_agreement"), outputs.agreement, "calibration_agreement")
    write_parquet(empty("calibration_ppi_systems"), outputs.ppi_systems, "calibration_ppi_systems")
    write_parquet(empty("calibration_ppi_pairs"), outputs.ppi_pairs, "calibration_ppi_pairs")
    write_json(summary.model_dump(mode="json"), outputs.summary)
    log.info("calibrate: %s", summary.warnings[0])
    return summary


__all__ = [
    "AGREEMENT_SCHEMA",
    "PPI_PAIRS_SCHEMA",
    "PPI_SYSTEMS_SCHEMA",
    "CalibrationInputs",
    "CalibrationOutputs",
    "CalibrationParams",
    "CalibrationResult",
    "CalibrationSummary",
    "compute",
    "has_labels",
    "no_labels_summary",
    "run",
    "run_stage",
    "sample_from_artifacts",
]

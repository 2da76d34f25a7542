"""Report figures: matplotlib (Agg) rendered to base64 PNG so the HTML page is self-contained.

Each function takes the already-loaded frame or typed summary and returns a :class:`Figure`;
it never reads files. Colours: one per embedder / system (tab10), line style per retriever.
"""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import MaxNLocator

from ragcourt.judging.summaries import DafeSection
from ragcourt.reporting.artifacts import StageCalls
from ragcourt.reporting.model import Figure
from ragcourt.tournament.gaps import EloGaps
from ragcourt.tournament.runner import rank_labels
from ragcourt.tournament.summaries import TournamentSummary

RETRIEVER_STYLE = {"dense": "-", "bm25": "--", "hybrid": ":"}
METRIC_TITLES = {"R": "Recall", "RR": "MRR", "nDCG": "nDCG", "P": "Precision", "Success": "Hits"}


def to_figure(fig: MplFigure, alt: str, caption: str = "", name: str = "") -> Figure:
    """``fig`` as a base64 PNG (closed after); ``name`` makes the stage also write it as a file."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return Figure(base64.b64encode(buf.getvalue()).decode("ascii"), alt, caption, name)


def _ci_err(mid: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Matplotlib ``xerr``: rows (mid - lo, hi - mid), clipped at 0, NaN -> 0."""
    err: np.ndarray = np.nan_to_num(
        np.vstack([np.clip(mid - lo, 0, None), np.clip(hi - mid, 0, None)])
    )
    return err


def leaderboard(board: pl.DataFrame, origin: float) -> Figure:
    """Swiss Elo and Bradley-Terry per system with their bootstrap CIs (rank 1 on top); a
    dotted line at the Elo origin (the run's ``tournament.initial_elo``)."""
    b = board.sort("rank", descending=True)
    y = np.arange(b.height)
    fig, axes = plt.subplots(1, 2, figsize=(10, 1.3 + 0.42 * b.height), sharey=True)
    for ax, col, title in ((axes[0], "elo", "Swiss Elo"), (axes[1], "bt", "Bradley-Terry")):
        mid = b[col].cast(pl.Float64).fill_null(np.nan).to_numpy()
        lo = b[f"{col}_lo"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        hi = b[f"{col}_hi"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        ax.errorbar(mid, y, xerr=_ci_err(mid, lo, hi), fmt="o", capsize=4, color="#1f77b4")
        if col == "elo":
            ax.axvline(origin, color="grey", lw=0.6, ls=":")
        ax.set_title(f"{title} with 95% bootstrap CI", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, rank_labels(b))
    fig.tight_layout()
    return to_figure(
        fig, "Leaderboard: Elo and Bradley-Terry with confidence intervals", name="leaderboard"
    )


def elo_gap_matrix(gaps: EloGaps) -> Figure:
    """Heatmap of Elo(row) − Elo(column) over the real systems in rank order; a cell is
    marked * when the bootstrap interval of that gap excludes 0 (resolved)."""
    names = gaps.systems
    n = len(names)
    at = {s: i for i, s in enumerate(names)}
    gap = np.full((n, n), np.nan)
    mark = np.zeros((n, n), dtype=bool)
    for p in gaps.pairs:
        i, j = at[p.better], at[p.worse]
        gap[i, j], gap[j, i] = p.elo_gap, -p.elo_gap
        mark[i, j] = mark[j, i] = bool(p.resolved)
    side = 1.6 + 0.62 * n
    fig, ax = plt.subplots(figsize=(side + 1.6, side))
    lim = float(np.nanmax(np.abs(gap))) if n > 1 and np.isfinite(gap).any() else 1.0
    im = ax.imshow(gap, cmap="RdBu", vmin=-max(lim, 1.0), vmax=max(lim, 1.0))
    size = 9 if n <= 8 else 7
    for i in range(n):
        for j in range(n):
            if i == j or not np.isfinite(gap[i, j]):
                continue
            strong = abs(gap[i, j]) > 0.6 * lim
            ax.text(
                j,
                i,
                f"{gap[i, j]:+.0f}{'*' if mark[i, j] else ''}",
                ha="center",
                va="center",
                fontsize=size,
                color="white" if strong else "black",
                fontweight="bold" if mark[i, j] else "normal",
            )
    labels = [f"{i + 1}. {s}" for i, s in enumerate(names)]
    ax.set_xticks(range(n), labels, rotation=35, ha="right", fontsize=size)
    ax.set_yticks(range(n), labels, fontsize=size)
    ax.set_title("Elo gap: row − column (* = 95% CI excludes 0)", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="Elo gap")
    fig.tight_layout()
    return to_figure(fig, "Elo-gap matrix of the real systems", name="elo_gaps")


def swiss_vs_round_robin(summary: TournamentSummary) -> Figure:
    """Matches and judge calls: Swiss against the exhaustive round-robin (its N(N-1)/2
    formula figures, ``*_computed``, when round-robin was not run)."""
    sw, rr = summary.swiss, summary.round_robin
    ran = rr.enabled
    fig, axes = plt.subplots(1, 2, figsize=(8, 2.8))
    for ax, sw_val, rr_val, title in (
        (axes[0], sw.matches, rr.matches if ran else rr.matches_computed, "Matches"),
        (
            axes[1],
            sw.judge_calls,
            rr.judge_calls if ran else rr.judge_calls_computed,
            "Judge calls",
        ),
    ):
        vals = [float(sw_val or 0), float(rr_val or 0)]
        labels = ["Swiss", "Round-robin" if ran else "Round-robin\n(computed, not run)"]
        bars = ax.bar(labels, vals, color=["#2ca02c", "#7f7f7f"])
        ax.bar_label(bars, labels=[f"{v:,.0f}" for v in vals])
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, max([*vals, 1.0]) * 1.2)
    fig.tight_layout()
    return to_figure(fig, "Swiss vs round-robin cost")


def dafe(dafe_summary: DafeSection) -> Figure:
    """Left: judge calls used by DAFE vs always three judges; right: each judge's agreement
    with the final verdict."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 2.9))
    used = float(dafe_summary.judge_calls)
    three = float(dafe_summary.judge_calls_always_three)
    bars = axes[0].bar(["DAFE", "Always 3 judges"], [used, three], color=["#2ca02c", "#7f7f7f"])
    axes[0].bar_label(bars, labels=[f"{used:,.0f}", f"{three:,.0f}"])
    axes[0].set_ylim(0, max(three, used, 1.0) * 1.2)
    axes[0].set_title("Judge calls", fontsize=10)
    per_judge = dafe_summary.per_judge
    names = list(per_judge)
    vals = [float(per_judge[n].agreement_with_final) for n in names]
    bars = axes[1].barh(names, vals, color="#1f77b4")
    axes[1].bar_label(bars, labels=[f"{v:.2f}" for v in vals])
    axes[1].set_xlim(0, 1.15)
    axes[1].set_title("Agreement with the final verdict", fontsize=10)
    fig.tight_layout()
    return to_figure(fig, "DAFE judge calls and agreement")


def retrieval_vs_chunk_size(summary: pl.DataFrame, k: int, metrics: list[str]) -> Figure:
    """One panel per metric at cutoff ``k``: mean over questions against chunk size; one colour
    per embedder (BM25 has none), one line style per retriever."""
    df = summary.filter(pl.col("k") == k)
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.4 * len(metrics), 3.0), squeeze=False)
    embedders = sorted({e or "-" for e in df["embedder"].to_list()})
    colours = {e: plt.get_cmap("tab10")(i % 10) for i, e in enumerate(embedders)}
    for ax, metric in zip(axes[0], metrics, strict=True):
        sub = df.filter(pl.col("metric") == metric)
        groups = sub.group_by(["embedder", "retriever"], maintain_order=True)
        for (emb, ret), g in sorted(groups, key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
            g = g.sort("chunk_size")
            label = f"{ret}" + (f" · {emb}" if emb else "")
            ax.plot(
                g["chunk_size"].to_list(),
                g["value"].to_list(),
                marker="o",
                ls=RETRIEVER_STYLE.get(str(ret), "-."),
                color=colours[emb or "-"],
                label=label,
            )
        ax.set_title(f"{METRIC_TITLES.get(metric, metric)}@{k}", fontsize=10)
        ax.set_xlabel("chunk size (tokens)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return to_figure(fig, f"Retrieval metrics at {k} vs chunk size per embedder")


def metric_correlation(corr: pl.DataFrame) -> Figure:
    """Spearman of each retrieval metric with answer correctness, ± its standard error."""
    df = corr.sort("spearman", nulls_last=True)
    labels = df["label"].to_list()
    rho = df["spearman"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    se = df["spearman_se"].cast(pl.Float64).fill_null(0.0).to_numpy()
    colours = ["#d62728" if "UDCG" in str(lbl).upper() else "#1f77b4" for lbl in labels]
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.38 * len(labels)))
    ax.barh(labels, np.nan_to_num(rho), xerr=se, color=colours, capsize=3)
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1, 1)
    ax.set_xlabel("Spearman ρ with correctness (± SE)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return to_figure(fig, "Correlation of retrieval metrics with correctness (UDCG in red)")


def counts_bar(counts: dict[str, int], title: str, xlabel: str) -> Figure:
    """Horizontal bars of named counts (e.g. QA rejections by filter)."""
    names = list(counts)
    vals = [int(counts[n]) for n in names]
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.38 * max(len(names), 1)))
    bars = ax.barh(names, vals, color="#ff7f0e")
    ax.bar_label(bars)
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10)
    ax.set_xlim(0, max([*vals, 1]) * 1.2)
    fig.tight_layout()
    return to_figure(fig, title)


def cost_per_stage(stages: list[StageCalls]) -> Figure:
    """Per stage: model calls and cache hits (stacked), and seconds: the summed latency of
    the model calls next to the wall time of the stage's batches."""
    names = [s.stage for s in stages]
    calls = np.array([s.total.model_calls for s in stages], dtype=float)
    hits = np.array([s.total.cache_hits for s in stages], dtype=float)
    model_s = np.array([s.total.model_time_s for s in stages], dtype=float)
    wall_s = np.array([s.wall_time_s for s in stages], dtype=float)
    y = np.arange(len(names))
    fig, axes = plt.subplots(1, 2, figsize=(10, 1.5 + 0.42 * max(len(names), 1)), sharey=True)
    axes[0].barh(y, calls, color="#1f77b4", label="model calls")
    axes[0].barh(y, hits, left=calls, color="#aec7e8", label="cache hits")
    axes[0].set_title("Requests", fontsize=10)
    axes[0].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_xlim(0, max(float((calls + hits).max(initial=0.0)), 1.0) * 1.15)
    h = 0.38
    axes[1].barh(y - h / 2, model_s, h, color="#ff7f0e", label="model time (summed)")
    axes[1].barh(y + h / 2, wall_s, h, color="#9edae5", label="batch wall time")
    axes[1].set_title("Seconds", fontsize=10)
    axes[1].set_xlim(0, max(float(np.maximum(model_s, wall_s).max(initial=0.0)), 1.0) * 1.15)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    for ax in axes:
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    fig.tight_layout()
    return to_figure(fig, "Model calls and seconds per stage", name="cost_per_stage")

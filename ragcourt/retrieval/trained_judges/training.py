"""Fitting the trained judges on train splits (``ragcourt judges train``), deterministically.

Data (:mod:`.squad_data`), per role:

- ``relevance``: SQuAD v1.1 train articles, each one document chunked the way ragcourt chunks
  (the given chunk specs, alternating by article). Per sampled question: its span-relevant chunk
  (positive; the span-overlap rule of :mod:`ragcourt.retrieval.span_relevance`), the two
  non-relevant chunks of the same article that BM25 ranks highest, and one random other chunk of
  the article (negatives). Dev: every chunk of held-out articles.
- ``answerability``: per sampled SQuAD question, its relevant chunk (answerable), the same chunk
  with the answer's sentences cut out and the BM25-hardest other chunk (not answerable), plus
  the SQuAD2 train items of the fitting split (adversarial unanswerables).
- ``correctness``: the STS-B train items of the fitting split (similarity in [0, 1]).

Models: logistic regression (relevance, answerability) and ridge regression (correctness) on
standardised features; thresholds maximise Cohen's kappa on out-of-fold training predictions.
Everything is seeded; weights are rounded (:mod:`.pair_model`), so a rerun writes the same bytes.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import cohen_kappa_score, roc_auc_score
from sklearn.model_selection import KFold, StratifiedKFold

from ragcourt.corpus.chunking import make_splitter, split_with_offsets, token_counter
from ragcourt.corpus.params import ChunkSpec
from ragcourt.retrieval.params import RelevanceRule
from ragcourt.retrieval.span_relevance import overlap_relevant
from ragcourt.retrieval.trained_judges.judges import (
    IDF_FILE,
    lexical_names,
    pair_features,
    save_idf,
    weights_file,
)
from ragcourt.retrieval.trained_judges.pair_model import PairModel, Role, SplitSize, rounded
from ragcourt.retrieval.trained_judges.squad_data import (
    LabelledPair,
    SquadArticle,
    load_squad,
    load_squad2_items,
    load_sts_items,
    stable_split,
)
from ragcourt.retrieval.trained_judges.text_features import (
    IdfTable,
    bm25_of_stems,
    content_stems,
)

log = logging.getLogger("ragcourt.trained_judges")

MINILM = "all-minilm-l6-v2"
MPNET = "all-mpnet-base-v2"
_SENTENCE_SPAN = re.compile(r"[^.!?]+(?:[.!?]+|$)\s*")


@dataclass(frozen=True)
class TrainingConfig:
    """What a training run uses; the defaults build the shipped weights."""

    seed: int = 0
    fit_articles: int = 80
    dev_articles: int = 30
    questions_per_article: int = 10
    article_dev_percent: int = 10  # SQuAD v1.1 articles held out (by title hash)
    item_dev_percent: int = 20  # SQuAD2 / STS-B items held out (by item hash)
    chunkings: tuple[ChunkSpec, ...] = (
        ChunkSpec(size=256, overlap=32),
        ChunkSpec(size=512, overlap=64),
    )
    tokenizer: str = "cl100k_base"
    rule: RelevanceRule = field(default_factory=RelevanceRule)
    pair_embedders: tuple[str, ...] = (MINILM,)
    correctness_embedders: tuple[str, ...] = (MINILM, MPNET)
    folds: int = 5


# ------------------------------------------------------------------ metrics


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """ECE = sum_b (n_b / n) |mean(p_b) - mean(y_b)| over ``bins`` equal-width bins of p."""
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    which = np.minimum((p * bins).astype(int), bins - 1)
    return float(
        sum(
            abs(p[which == b].mean() - y[which == b].mean()) * (which == b).mean()
            for b in range(bins)
            if (which == b).any()
        )
    )


def kappa_threshold(y: np.ndarray, p: np.ndarray) -> float:
    """The threshold on a 0.01 grid maximising Cohen's kappa of ``p >= t`` against ``y``
    (the lowest such threshold on ties)."""
    grid = np.round(np.arange(0.01, 1.0, 0.01), 2)
    kappas = [
        cohen_kappa_score(y, (p >= t).astype(int)) if 0 < (p >= t).sum() < len(p) else -1.0
        for t in grid
    ]
    return float(grid[int(np.argmax(kappas))])


def binary_metrics(y: np.ndarray, p: np.ndarray, threshold: float, prefix: str) -> dict[str, float]:
    """AUC, ECE and kappa at ``threshold`` of probabilities ``p`` for labels ``y`` (none when
    ``y`` lacks a class: an empty split)."""
    if len(set(np.asarray(y).tolist())) < 2:
        return {}
    return {
        f"{prefix}_auc": round(float(roc_auc_score(y, p)), 4),
        f"{prefix}_ece": round(expected_calibration_error(p, y), 4),
        f"{prefix}_kappa": round(float(cohen_kappa_score(y, (p >= threshold).astype(int))), 4),
        f"{prefix}_items": float(len(y)),
    }


# ------------------------------------------------------------------ data


@dataclass(frozen=True)
class ChunkedArticle:
    """An article as one document (paragraphs joined by blank lines), chunked."""

    chunks: list[str]
    spans: list[tuple[int, int]]
    questions: list[tuple[str, int, int]]  # question, answer start and end in the document


def chunk_article(article: SquadArticle, spec: ChunkSpec, tokenizer: str) -> ChunkedArticle:
    text = "\n\n".join(article.paragraphs)
    spans = split_with_offsets(text, make_splitter(spec, tokenizer), spec, token_counter(tokenizer))
    questions, offset = [], 0
    for para, qs in zip(article.paragraphs, article.questions, strict=True):
        questions += [(q.question, offset + q.start, offset + q.start + len(q.answer)) for q in qs]
        offset += len(para) + 2
    return ChunkedArticle([text[a:b] for a, b in spans], spans, questions)


def _bm25_order(question: str, chunks: Sequence[str], idf: IdfTable) -> list[int]:
    """Chunk indices by decreasing BM25 (fixed IDF) of ``question``, ties by index."""
    q_set = set(content_stems(question))
    scores = [bm25_of_stems(q_set, content_stems(c), idf) for c in chunks]
    return sorted(range(len(chunks)), key=lambda i: (-scores[i], i))


def _without_answer(chunk: str, start: int, end: int) -> str:
    """``chunk`` with every sentence that overlaps [start, end) removed."""
    kept = [
        m.group(0) for m in _SENTENCE_SPAN.finditer(chunk) if m.end() <= start or m.start() >= end
    ]
    return "".join(kept).strip()


def squad_pairs(
    articles: Sequence[SquadArticle],
    cfg: TrainingConfig,
    idf: IdfTable,
    rng: random.Random,
    every_chunk: bool,
) -> tuple[list[LabelledPair], list[LabelledPair]]:
    """(relevance pairs, answerability pairs) of ``articles`` (module docstring); with
    ``every_chunk`` the relevance pairs are every chunk of each article (dev)."""
    relevance: list[LabelledPair] = []
    answerability: list[LabelledPair] = []
    for n, article in enumerate(articles):
        doc = chunk_article(article, cfg.chunkings[n % len(cfg.chunkings)], cfg.tokenizer)
        picked = rng.sample(doc.questions, min(cfg.questions_per_article, len(doc.questions)))
        for question, start, end in picked:
            rel = [
                i
                for i, (a, b) in enumerate(doc.spans)
                if overlap_relevant(a, b, start, end, cfg.rule)
            ]
            if not rel:
                continue
            order = [i for i in _bm25_order(question, doc.chunks, idf) if i not in rel]
            hard = order[:2]
            if every_chunk:
                for i, chunk in enumerate(doc.chunks):
                    kind = (
                        "positive"
                        if i in rel
                        else ("bm25_negative" if i in order[:3] else "other_negative")
                    )
                    relevance.append(LabelledPair(question, chunk, float(i in rel), kind))
            else:
                relevance.append(LabelledPair(question, doc.chunks[rel[0]], 1.0, "positive"))
                relevance += [
                    LabelledPair(question, doc.chunks[i], 0.0, "bm25_negative") for i in hard
                ]
                others = order[2:]
                if others:
                    i = rng.choice(others)
                    relevance.append(LabelledPair(question, doc.chunks[i], 0.0, "random_negative"))
            pos = doc.chunks[rel[0]]
            a, _ = doc.spans[rel[0]]
            cut = _without_answer(pos, start - a, end - a)
            answerability.append(LabelledPair(question, pos, 1.0, "positive"))
            if cut and cut != pos:
                answerability.append(LabelledPair(question, cut, 0.0, "answer_removed"))
            if hard:
                answerability.append(
                    LabelledPair(question, doc.chunks[hard[0]], 0.0, "bm25_negative")
                )
    return relevance, answerability


# ------------------------------------------------------------------ fitting


@dataclass
class Fitted:
    """A fitted linear model on standardised features."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def predict(self, x: np.ndarray, logistic: bool) -> np.ndarray:
        z = ((x - self.mean) / self.scale) @ self.coef + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-z)) if logistic else np.clip(z, 0.0, 1.0))


def fit_linear(x: np.ndarray, y: np.ndarray, logistic: bool, seed: int) -> Fitted:
    """Standardise, then L2-regularised logistic (C = 1) or ridge (alpha = 1) regression."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    z = (x - mean) / scale
    if logistic:
        m = LogisticRegression(C=1.0, max_iter=5000, random_state=seed).fit(z, y.astype(int))
        return Fitted(mean, scale, m.coef_[0], float(m.intercept_[0]))
    r = Ridge(alpha=1.0).fit(z, y)
    return Fitted(mean, scale, np.asarray(r.coef_), float(r.intercept_))


def out_of_fold(
    x: np.ndarray,
    y: np.ndarray,
    logistic: bool,
    cfg: TrainingConfig,
    extra: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """k-fold out-of-fold predictions for (x, y); ``extra`` rows join every training fold."""
    folds: KFold | StratifiedKFold = (
        StratifiedKFold(cfg.folds, shuffle=True, random_state=cfg.seed)
        if logistic
        else KFold(cfg.folds, shuffle=True, random_state=cfg.seed)
    )
    out = np.zeros(len(y))
    for tr, te in folds.split(x, y.astype(int) if logistic else y):
        xa, ya = x[tr], y[tr]
        if extra is not None:
            xa, ya = np.vstack([xa, extra[0]]), np.concatenate([ya, extra[1]])
        out[te] = fit_linear(xa, ya, logistic, cfg.seed).predict(x[te], logistic)
    return out


def _model(
    role: Role,
    fitted: Fitted,
    embedders: Sequence[str],
    threshold: float,
    cfg: TrainingConfig,
    splits: dict[str, SplitSize],
    metrics: dict[str, float],
) -> PairModel:
    return PairModel(
        role=role,
        link="clipped_identity" if role == "correctness" else "logistic",
        embedders=list(embedders),
        lexical=list(lexical_names(role)),
        mean=rounded(fitted.mean),
        scale=rounded(fitted.scale),
        coef=rounded(fitted.coef),
        intercept=round(fitted.intercept, 6),
        threshold=threshold,
        seed=cfg.seed,
        splits=splits,
        metrics=metrics,
    )


def _size(source: str, pairs: Sequence[LabelledPair], binary: bool = True) -> SplitSize:
    pos = sum(1 for p in pairs if p.label >= 0.5) if binary else None
    return SplitSize(source=source, items=len(pairs), positives=pos)


Features = Callable[[Role, Sequence[str], Sequence[LabelledPair]], np.ndarray]


def _features_of(idf: IdfTable) -> Features:
    def features(role: Role, embedders: Sequence[str], pairs: Sequence[LabelledPair]) -> np.ndarray:
        return pair_features(
            role, embedders, idf, [p.left for p in pairs], [p.right for p in pairs]
        )

    return features


def _labels(pairs: Sequence[LabelledPair]) -> np.ndarray:
    return np.array([p.label for p in pairs], dtype=float)


@dataclass(frozen=True)
class TrainingData:
    """Every split the judges are fitted and measured on."""

    idf: IdfTable
    relevance_fit: list[LabelledPair]
    relevance_dev: list[LabelledPair]
    answerability_fit: list[LabelledPair]
    answerability_dev: list[LabelledPair]
    squad2_fit: list[LabelledPair]
    squad2_dev: list[LabelledPair]
    sts_fit: list[LabelledPair]
    sts_dev: list[LabelledPair]


def build_training_data(
    squad_path: Path, squad2_path: Path, sts_path: Path, cfg: TrainingConfig
) -> TrainingData:
    """All splits (module docstring); the IDF table comes from the fitting articles only."""
    articles = load_squad(squad_path)
    fit = [a for a in articles if stable_split(a.title, cfg.article_dev_percent) == "fit"]
    dev = [a for a in articles if stable_split(a.title, cfg.article_dev_percent) == "dev"]
    idf = IdfTable.fit(p for a in fit for p in a.paragraphs)
    rng = random.Random(cfg.seed)
    fit_pick = rng.sample(fit, min(cfg.fit_articles, len(fit)))
    dev_pick = rng.sample(dev, min(cfg.dev_articles, len(dev)))
    rel_fit, ans_fit = squad_pairs(fit_pick, cfg, idf, rng, every_chunk=False)
    rel_dev, ans_dev = squad_pairs(dev_pick, cfg, idf, rng, every_chunk=True)
    squad2 = load_squad2_items(squad2_path)
    sts = load_sts_items(sts_path)

    def part(items: list[LabelledPair], want: str) -> list[LabelledPair]:
        return [
            p
            for p in items
            if stable_split(p.left + "\x00" + p.right, cfg.item_dev_percent) == want
        ]

    return TrainingData(
        idf,
        rel_fit,
        rel_dev,
        ans_fit,
        ans_dev,
        part(squad2, "fit"),
        part(squad2, "dev"),
        part(sts, "fit"),
        part(sts, "dev"),
    )


def train_relevance(data: TrainingData, cfg: TrainingConfig, features: Features) -> PairModel:
    x, y = (
        features("relevance", cfg.pair_embedders, data.relevance_fit),
        _labels(data.relevance_fit),
    )
    oof = out_of_fold(x, y, True, cfg)
    fitted = fit_linear(x, y, True, cfg.seed)
    threshold = 0.5
    xd, yd = (
        features("relevance", cfg.pair_embedders, data.relevance_dev),
        _labels(data.relevance_dev),
    )
    pd_ = fitted.predict(xd, True)
    hard = np.array([p.kind in ("positive", "bm25_negative") for p in data.relevance_dev], bool)
    metrics = {
        **binary_metrics(y, oof, threshold, "cv"),
        **binary_metrics(yd, pd_, threshold, "dev_all_chunks"),
        **binary_metrics(yd[hard], pd_[hard], threshold, "dev_hard"),
    }
    if len(set(yd.tolist())) == 2:
        metrics["dev_auc_cosine_only"] = round(float(roc_auc_score(yd, xd[:, 0])), 4)
    splits = {
        "fit": _size(
            "SQuAD v1.1 train, fitting articles (1 positive, 2 BM25, 1 random per question)",
            data.relevance_fit,
        ),
        "dev": _size("SQuAD v1.1 train, held-out articles (every chunk)", data.relevance_dev),
    }
    return _model("relevance", fitted, cfg.pair_embedders, threshold, cfg, splits, metrics)


def train_answerability(data: TrainingData, cfg: TrainingConfig, features: Features) -> PairModel:
    emb = cfg.pair_embedders
    xs, ys = features("answerability", emb, data.answerability_fit), _labels(data.answerability_fit)
    x2, y2 = features("answerability", emb, data.squad2_fit), _labels(data.squad2_fit)
    oof2 = out_of_fold(x2, y2, True, cfg, extra=(xs, ys))
    threshold = kappa_threshold(y2, oof2)
    fitted = fit_linear(np.vstack([xs, x2]), np.concatenate([ys, y2]), True, cfg.seed)
    xd2, yd2 = features("answerability", emb, data.squad2_dev), _labels(data.squad2_dev)
    xds, yds = (
        features("answerability", emb, data.answerability_dev),
        _labels(data.answerability_dev),
    )
    metrics = {
        **binary_metrics(y2, oof2, threshold, "squad2_cv"),
        **binary_metrics(yd2, fitted.predict(xd2, True), threshold, "squad2_dev"),
        **binary_metrics(yds, fitted.predict(xds, True), threshold, "squad_dev"),
    }
    splits = {
        "fit_squad": _size(
            "SQuAD v1.1 train, fitting articles (chunk, answer cut out, BM25 chunk)",
            data.answerability_fit,
        ),
        "fit_squad2": _size("squadv2_train.json, fitting items", data.squad2_fit),
        "dev_squad2": _size("squadv2_train.json, held-out items", data.squad2_dev),
        "dev_squad": _size("SQuAD v1.1 train, held-out articles", data.answerability_dev),
    }
    return _model("answerability", fitted, emb, threshold, cfg, splits, metrics)


def train_correctness(data: TrainingData, cfg: TrainingConfig, features: Features) -> PairModel:
    emb = cfg.correctness_embedders
    x, y = features("correctness", emb, data.sts_fit), _labels(data.sts_fit)
    oof = out_of_fold(x, y, False, cfg)
    fitted = fit_linear(x, y, False, cfg.seed)
    xd, yd = features("correctness", emb, data.sts_dev), _labels(data.sts_dev)
    pd_ = fitted.predict(xd, False)
    threshold = kappa_threshold((y >= 0.6).astype(int), oof)
    metrics = {
        "cv_spearman": round(float(spearmanr(oof, y)[0]), 4),
        "dev_spearman": round(float(spearmanr(pd_, yd)[0]), 4),
        "dev_kappa_similar": round(float(cohen_kappa_score(yd >= 0.6, pd_ >= threshold)), 4),
        "dev_items": float(len(yd)),
        **{
            f"dev_spearman_cosine_{e}": round(float(spearmanr(xd[:, i], yd)[0]), 4)
            for i, e in enumerate(emb)
        },
    }
    splits = {
        "fit": _size("sts_train.json, fitting items", data.sts_fit, binary=False),
        "dev": _size("sts_train.json, held-out items", data.sts_dev, binary=False),
    }
    return _model("correctness", fitted, emb, threshold, cfg, splits, metrics)


def train_judges(
    out_dir: Path,
    squad_path: Path,
    validation_dir: Path,
    cfg: TrainingConfig | None = None,
    roles: Sequence[Role] = ("relevance", "answerability", "correctness"),
) -> dict[Role, PairModel]:
    """Fit ``roles`` on the train splits and write their weights and the IDF table to
    ``out_dir``."""
    cfg = cfg or TrainingConfig()
    data = build_training_data(
        squad_path, validation_dir / "squadv2_train.json", validation_dir / "sts_train.json", cfg
    )
    features = _features_of(data.idf)
    trainers = {
        "relevance": train_relevance,
        "answerability": train_answerability,
        "correctness": train_correctness,
    }
    save_idf(data.idf, out_dir / IDF_FILE)
    models: dict[Role, PairModel] = {}
    for role in roles:
        log.info("trained judges: fitting %s", role)
        models[role] = trainers[role](data, cfg, features)
        models[role].save(weights_file(out_dir, role))
    return models

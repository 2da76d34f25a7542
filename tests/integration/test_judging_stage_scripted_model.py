"""The judge stage end to end in a temp project: real Parquet inputs, real gateway and cache,
real span qrels + ir-measures, with a scripted model for every LLM role (exact replies):
DAFE with lexical primaries and an LLM arbitrator, correctness, relevance dedup, UDCG, the
summary tables, and a re-run that makes no model calls."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from _llm_testing import scripted_model

from ragcourt.calibration.labels import LabelStore, make_label
from ragcourt.calibration.sampling import SampleParams, sample_items
from ragcourt.calibration.stage import run_stage
from ragcourt.core.errors import StageFailed
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import RETRIEVED, frame_schema
from ragcourt.judging import answers_stage, per_question, retrieval_stage, summary
from ragcourt.judging.params import JudgeParams, JudgeSpec, UDCGParams
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[2]

DOCS = {
    "d1": ["The Louisiana Purchase was made in 1803.", "Congress debated the treaty for weeks."],
    "d2": ["The railroad was completed at Promontory Summit.", "A golden spike joined the lines."],
    "d3": [
        "Tariffs were raised on steel.",
        "The Sixteenth Amendment made the income tax permanent.",
    ],
}
# question_id -> (question, reference, keyword a relevant passage holds, (doc, chunk index))
QA = {
    "q1": ("When was the Louisiana Purchase made?", "1803", "1803", ("d1", 0)),
    "q2": ("Where was the railroad completed?", "Promontory Summit", "Promontory", ("d2", 0)),
    "q3": (
        "Which amendment made the income tax permanent?",
        "the Sixteenth Amendment",
        "Sixteenth",
        ("d3", 1),
    ),
}
# (system, question_id) -> (answer or None, error, retrieved chunk ids in rank order)
ANSWERS = {
    ("A", "q1"): ("1803", None, ["d1:0", "d1:1"]),  # both primaries: correct
    ("A", "q2"): ("Promontory", None, ["d2:1", "d2:0"]),  # F1 0.67 vs no containment
    ("A", "q3"): ("NO-RESPONSE", None, ["d3:0"]),  # both: incorrect
    ("B", "q1"): (None, "generator timeout", ["d1:0", "d2:0"]),  # error row, retrieval kept
    ("B", "q2"): ("Utah", None, ["d2:0", "d1:1"]),  # both: incorrect
    ("B", "q3"): ("Sixteenth", None, ["d3:1", "d3:0"]),  # disagreement, arbitrator fails
}
P_NO_RESPONSE = {True: 0.2, False: 0.9}  # scripted P(first token "NO") given relevance


def _offsets() -> dict[str, tuple[str, int, int, str]]:
    out = {}
    for doc, texts in DOCS.items():
        pos = 0
        for i, t in enumerate(texts):
            out[f"{doc}:{i}"] = (doc, pos, pos + len(t), t)
            pos += len(t) + 1
    return out


CHUNKS = _offsets()


def _pad(df: pl.DataFrame, table: str) -> pl.DataFrame:
    """Null columns for the provenance fields of ``table`` this test does not need."""
    return df.with_columns(
        pl.lit(None, dtype=t).alias(c)
        for c, t in frame_schema(table).items()
        if c not in df.columns
    )


def _write_inputs() -> None:
    rows = [
        {
            "chunk_id": f"c256:{cid}",
            "chunking": "c256",
            "doc_id": d,
            "chunk_index": int(cid[-1]),
            "char_start": s,
            "char_end": e,
            "n_tokens": len(t.split()),
            "text": t,
        }
        for cid, (d, s, e, t) in CHUNKS.items()
    ]
    chunks = pl.DataFrame(rows).with_columns(
        pl.col("chunk_index", "n_tokens").cast(pl.Int32), pl.col("char_start", "char_end")
    )
    write_parquet(chunks, "data/chunks/c256.parquet", "chunks")
    qa = pl.DataFrame(
        [
            {
                "question_id": q,
                "question": text,
                "reference_answers": [ref],
                "doc_id": d,
                "char_start": CHUNKS[f"{d}:{i}"][1],
                "char_end": CHUNKS[f"{d}:{i}"][2],
                "context": CHUNKS[f"{d}:{i}"][3],
            }
            for q, (text, ref, _, (d, i)) in QA.items()
        ]
    )
    write_parquet(_pad(qa, "qa"), "data/qa/qa.parquet", "qa")
    answers = pl.DataFrame(
        [
            {
                "system": s,
                "question_id": q,
                "answer": a,
                "abstained": None if a is None else a == "NO-RESPONSE",
                "retrieved": [
                    {
                        "chunk_id": f"c256:{c}",
                        "rank": r,
                        "score": 1.0 / r,
                        "doc_id": CHUNKS[c][0],
                        "char_start": CHUNKS[c][1],
                        "char_end": CHUNKS[c][2],
                        "text": CHUNKS[c][3],
                    }
                    for r, c in enumerate(cids, 1)
                ],
                "query_variants": [],
                "latency_s": 0.1,
                "prompt_tokens": 10,
                "completion_tokens": 2,
                "model": "scripted/gen",
                "error": err,
            }
            for (s, q), (a, err, cids) in ANSWERS.items()
        ],
        schema_overrides={
            "answer": pl.String,
            "abstained": pl.Boolean,
            "retrieved": pl.List(RETRIEVED),
            "query_variants": pl.List(pl.String),
            "error": pl.String,
        },
    )
    write_parquet(_pad(answers, "answers"), "data/answers/answers.parquet", "answers")


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def _keyword_for(question_text: str) -> str:
    return next(kw for text, _, kw, _ in QA.values() if text == question_text)


def reply(messages: list[dict[str, str]]) -> str:
    """Scripted judge model: one reply format per prompt of configs/prompts/judge.yaml
    (a parse-repair turn is answered from the original request, messages[1])."""
    system, user = messages[0]["content"], messages[1]["content"]
    if "impartial judge" in system:  # DAFE arbitrator
        answer = _between(user, "Candidate answer:", "\n\n")
        if answer == "Sixteenth":
            return "I cannot decide."  # no JSON: a judge failure after parse retries
        verdict = "correct" if answer == "Promontory" else "incorrect"
        return json.dumps({"reasoning": "scripted", "verdict": verdict})
    if "student answer" in system:  # RAGalyst correctness
        answer = _between(user, "Student answer:", "\n\n")
        refs = _between(user, "closest one:", "Student answer:")
        score = 1.0 if answer.lower() in refs.lower() and answer != "NO-RESPONSE" else 0.0
        return json.dumps({"rationale": "scripted", "score": score})
    if "relevance annotator" in system:  # RAGElo
        kw = _keyword_for(_between(user, "Question:", "\n"))
        passage = _between(user, "Passage:", "\n\nReply")
        return json.dumps({"reason": "scripted", "relevance": 2 if kw in passage else 0})
    if "only the provided document" in system:  # UDCG: only the first-token probs are read
        return "NO"
    raise AssertionError(f"unexpected prompt: {system[:60]}")


def next_token(messages: list[dict[str, str]]) -> dict[str, float]:
    user = messages[-1]["content"]
    kw = _keyword_for(_between(user, "Question:", "\n"))
    p = P_NO_RESPONSE[kw in _between(user, "Document:", "Question:")]
    return {"NO": p, "The": 1.0 - p}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs/prompts").mkdir(parents=True)
    shutil.copy(ROOT / "configs/prompts/judge.yaml", tmp_path / "configs/prompts/judge.yaml")
    shutil.copy(ROOT / "configs/models.yaml", tmp_path / "configs/models.yaml")
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.llm.max_retries = 0
    params.llm.parse_retries = 1
    params.judge = JudgeParams(
        judges={
            "tf1": JudgeSpec(kind="token_f1", threshold=0.5),
            "em": JudgeSpec(kind="containment"),
            "llm": JudgeSpec(kind="llm"),
        },
        primaries=["tf1", "em"],
        arbitrator="llm",
        # the LLM graders and the v1 judge prompts (params.yaml has the trained ones, v5)
        correctness_mode="rubric",
        relevance_grader="llm",
        prompt_version="v1",
        udcg=UDCGParams(theta_min_pairs=1000),  # too few contexts here: reported, not fitted
    )
    _write_inputs()
    return params


def _judge_all(params: Params) -> None:
    """The three judge stages in pipeline order: judge, judge_retrieval, judge_summary."""
    answers_stage.run(params)
    retrieval_stage.run(params)
    summary.run(params)


def _row(df: pl.DataFrame, system: str, question_id: str) -> dict[str, Any]:
    keep = (pl.col("system") == system) & (pl.col("question_id") == question_id)
    return df.filter(keep).row(0, named=True)


def _udcg(utilities: list[float]) -> float:
    pos = sum(u for u in utilities if u > 0)
    neg = sum(u for u in utilities if u < 0)
    n = len(utilities)
    return 1 / (1 + math.exp(-(pos / n + neg / (3 * n))))


def test_judge_stage_end_to_end_scripted_model(project: Params) -> None:
    with scripted_model("judge", reply, next_token=next_token) as m:
        project.llm.model = m.model
        _judge_all(project)
        calls = len(m.calls)
        # ---- re-run: every reply comes from the cache
        _judge_all(project)
        assert len(m.calls) == calls

    v = read_table("data/judge/verdicts.parquet", "verdicts").sort("system", "question_id")
    got = {
        (r["system"], r["question_id"]): (r["resolution"], r["final_verdict"], r["agree"])
        for r in v.iter_rows(named=True)
    }
    assert got == {
        ("A", "q1"): ("agreement", True, True),
        ("A", "q2"): ("arbitration", True, False),  # arbitrator breaks the tie
        ("A", "q3"): ("agreement", False, True),
        ("B", "q1"): ("error", None, None),  # the answer failed: not judged
        ("B", "q2"): ("agreement", False, True),
        ("B", "q3"): ("error", None, False),  # arbitrator failed: never counted
    }
    b_q1 = _row(v, "B", "q1")
    assert b_q1["error"] == "answer failed: generator timeout" and b_q1["primary1_judge"] is None
    b_q3 = _row(v, "B", "q3")
    assert "arbitrator llm failed" in b_q3["error"] and b_q3["arbitrator_error"]
    assert v["arbitrator_called"].sum() == 2

    c = read_table("data/judge/correctness.parquet", "correctness").sort("system", "question_id")
    assert c.columns == [
        "system", "question_id", "correctness", "rationale", "error", "form", "grading_method"
    ]  # fmt: skip
    assert c["grading_method"].to_list() == ["generated"] * 3 + [None] + ["generated"] * 2
    # the scripted grader gives 1.0 when the answer is a substring of the reference
    assert c["correctness"].to_list() == [1.0, 1.0, 0.0, None, 0.0, 1.0]
    assert c["error"][3] == "answer failed: generator timeout"

    rel = read_table("data/judge/relevance.parquet", "relevance")
    assert rel.height == 8  # 11 retrieved passages, 8 distinct (question, chunk) pairs
    assert set(rel["grading_method"]) == {"generated"}  # the v1 JSON reply
    judged = [mm for mm in m.calls if "relevance annotator" in mm[0]["content"]]
    assert len(judged) == 8
    shared = rel.filter(pl.col("n_systems") == 2).select("question_id", "chunk_id").sort("*")
    assert shared.rows() == [("q1", "c256:d1:0"), ("q2", "c256:d2:0"), ("q3", "c256:d3:0")]

    u = read_table("data/judge/udcg.parquet", "udcg").sort("system", "question_id")
    # A q1: d1:0 relevant (u = 1 - 0.2 = 0.8), d1:1 distractor (u = -(1 - 0.9) = -0.1)
    assert u["udcg"][0] == pytest.approx(_udcg([0.8, -0.1]))
    assert u["utilities"][0].to_list() == pytest.approx([0.8, -0.1])
    assert {m for ms in u["p_methods"].to_list() for m in ms} == {"top_logprobs"}
    # A q3: only the distractor d3:0 -> σ(-(1/3)·0.1)
    assert u["udcg"][2] == pytest.approx(1 / (1 + math.exp(0.1 / 3)))

    per_q = read_table("data/judge/per_question.parquet", "judge_per_question")
    a_q1 = per_q.filter((pl.col("system") == "A") & (pl.col("question_id") == "q1")).row(
        0, named=True
    )
    # span rule: d1:0 is the ground-truth span -> RR 1, recall 1, P@5 = 1/5
    assert (a_q1["rr_at_k"], a_q1["recall_at_k"], a_q1["precision_at_k"]) == (1.0, 1.0, 0.2)
    assert (a_q1["rr1_at5"], a_q1["rr2_at5"], a_q1["outcome"]) == (1.0, 1.0, 2)
    a_q2 = per_q.filter((pl.col("system") == "A") & (pl.col("question_id") == "q2")).row(
        0, named=True
    )
    assert a_q2["rr2_at5"] == 0.5 and a_q2["rr_at_k"] == 0.5
    outcomes = {(r["system"], r["question_id"]): r["outcome"] for r in per_q.iter_rows(named=True)}
    # A q3 abstained and was judged incorrect -> 1; error rows (no final verdict) -> null
    assert (outcomes["A", "q3"], outcomes["B", "q1"], outcomes["B", "q3"]) == (1, None, None)

    ss = read_table("data/judge/system_summary.parquet", "system_summary").sort("system")
    assert ss["accuracy"].to_list() == pytest.approx([2 / 3, 0.0])
    assert ss["verdict_errors"].to_list() == [0, 2]
    corr = read_table("data/judge/metric_correlation.parquet", "metric_correlation")
    assert set(corr["metric"]) >= {"udcg", "ndcg_at_k", "rr1_at5"}

    summary = json.loads(Path("data/judge/summary.json").read_text())
    d = summary["dafe"]
    assert (d["items"], d["arbitrator_calls"], d["disagreements"]) == (5, 2, 2)
    assert d["judge_calls"] == 12 and d["judge_calls_always_three"] == 15
    assert d["llm_judge_calls"] == 2 and d["input_error_rows"] == 1
    assert summary["relevance"]["judgments_saved_by_dedup"] == 3
    assert summary["udcg"]["theta"]["fitted"] is False
    fallbacks = summary["grading_fallbacks"]  # exact labels everywhere: nothing flagged
    assert fallbacks["udcg"] == {
        "rows": 6, "fallback_rows": 0, "share": 0.0, "methods": {"top_logprobs": 6}
    }  # fmt: skip
    assert fallbacks["correctness"]["rows"] == 5 and fallbacks["relevance"]["fallback_rows"] == 0
    assert Path("data/metrics/llm_judge.json").is_file()
    assert Path("data/metrics/llm_judge_retrieval.json").is_file()


def test_judge_stage_missing_input_is_one_line_error(tmp_path: Path) -> None:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "judge"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "ragcourt: error: data/answers/answers.parquet: input artifact not found "
        "(run the stage that makes it)"
    )


def test_answer_for_unknown_question_is_an_error_row_scripted_model(project: Params) -> None:
    answers = read_table("data/answers/answers.parquet", "answers")
    stray = answers.head(1).with_columns(pl.lit("q9").alias("question_id"))
    write_parquet(pl.concat([answers, stray]), "data/answers/answers.parquet", "answers")
    with scripted_model("judge2", reply, next_token=next_token) as m:
        project.llm.model = m.model
        _judge_all(project)
    expected = "question_id 'q9' is not in data/qa/qa.parquet"
    v = _row(read_table("data/judge/verdicts.parquet", "verdicts"), "A", "q9")
    assert (v["resolution"], v["final_verdict"], v["error"]) == ("error", None, expected)
    c = _row(read_table("data/judge/correctness.parquet", "correctness"), "A", "q9")
    assert c["correctness"] is None and c["error"] == expected
    u = _row(read_table("data/judge/udcg.parquet", "udcg"), "A", "q9")
    assert u["udcg"] is None and u["error"] == "question_id is not in data/qa/qa.parquet"
    rel = read_table("data/judge/relevance.parquet", "relevance")
    assert "q9" not in rel["question_id"].to_list()


def test_outcome_is_null_without_a_final_verdict() -> None:
    """An error row stays out of the correlations even when its answer abstained."""
    df = pl.DataFrame(
        {
            "final_verdict": [True, False, False, None, None, True],
            "abstained": [False, False, True, True, None, True],
        },
        schema={"final_verdict": pl.Boolean, "abstained": pl.Boolean},
    )
    out = df.select(per_question.outcome_expr().alias("outcome"))["outcome"].to_list()
    assert out == [2, 0, 1, None, None, 2]


def test_similarity_correctness_reuses_the_dafe_primary_scores_scripted_model(
    project: Params,
) -> None:
    """correctness_mode similarity with the primary 'sim' (real MiniLM): correctness is the
    clipped cosine the DAFE primary recorded, and no rubric request reaches the model."""
    project.judge = JudgeParams(
        judges={
            "tf1": JudgeSpec(kind="token_f1", threshold=0.5),
            "sim": JudgeSpec(kind="embedding_similarity", embedder="minilm", threshold=0.7),
            "llm": JudgeSpec(kind="llm"),
        },
        primaries=["tf1", "sim"],
        arbitrator="llm",
        correctness_mode="similarity",
        correctness_settings={"judge": "sim"},
        relevance_grader="llm",
        prompt_version="v1",
        udcg=UDCGParams(theta_min_pairs=1000),
    )
    with scripted_model("judge3", reply, next_token=next_token) as m:
        project.llm.model = m.model
        _judge_all(project)
        assert not any("student answer" in c[0]["content"].lower() for c in m.calls)
    v = read_table("data/judge/verdicts.parquet", "verdicts")
    c = read_table("data/judge/correctness.parquet", "correctness")
    both = v.join(c, on=["system", "question_id"]).filter(pl.col("error").is_null())
    assert both.height > 0
    for r in both.iter_rows(named=True):
        assert r["correctness"] == pytest.approx(min(1.0, max(0.0, r["primary2_score"])))
    failed = c.filter(pl.col("error").is_not_null())
    assert failed["correctness"].null_count() == failed.height


def test_unreachable_judge_model_fails_each_stage_loudly_scripted_model(project: Params) -> None:
    """Every judge call fails (provider unreachable): each stage writes its error rows, then
    raises StageFailed naming the table (exit 3 under run_entry); nothing is silently 0."""

    def unreachable(messages: list[dict[str, str]]) -> str:
        raise ConnectionError("connection refused")

    with scripted_model("down", unreachable) as m:
        project.llm.model = m.model
        with pytest.raises(StageFailed, match=r"judge: correctness: 6/6 rows failed"):
            answers_stage.run(project)
        with pytest.raises(StageFailed, match=r"judge_retrieval: relevance: \d+/\d+ rows failed"):
            retrieval_stage.run(project)
    correctness = read_table("data/judge/correctness.parquet", "correctness")
    assert correctness["error"].null_count() == 0  # the error rows were written first
    relevance = read_table("data/judge/relevance.parquet", "relevance")
    assert relevance.height > 0 and relevance["error"].null_count() == 0


def test_trained_judges_replace_every_pointwise_llm_call_scripted_model(project: Params) -> None:
    """The offline judging route: trained DAFE primaries, trained correctness, trained relevance
    (and UDCG from its P(relevant)); the scripted model is reached only by the arbitrator, on
    the primaries' disagreements, and the relevant passage of each question outranks the rest."""
    project.judge = JudgeParams(
        judges={
            "tf1": JudgeSpec(kind="token_f1", threshold=0.5),
            "trained": JudgeSpec(kind="trained"),
            "llm": JudgeSpec(kind="llm"),
        },
        primaries=["tf1", "trained"],
        arbitrator="llm",
        correctness_mode="trained",
        relevance_grader="trained",
        prompt_version="v1",
        udcg=UDCGParams(theta_min_pairs=1000),
    )
    with scripted_model("judge_trained", reply, next_token=next_token) as m:
        project.llm.model = m.model
        _judge_all(project)
        prompts = [c[0]["content"] for c in m.calls]
    v = read_table("data/judge/verdicts.parquet", "verdicts")
    assert v["arbitrator_called"].sum() >= 1  # (a parse retry may ask it twice)
    assert prompts and all("impartial judge" in p for p in prompts)
    c = read_table("data/judge/correctness.parquet", "correctness").sort("system", "question_id")
    keys = zip(c["system"], c["question_id"], strict=True)
    scores = dict(zip(keys, c["correctness"], strict=True))
    assert scores[("A", "q1")] > scores[("B", "q2")]  # "1803" vs the wrong "Utah"
    rel = read_table("data/judge/relevance.parquet", "relevance")
    assert set(rel["grading_method"]) == {"trained"} and rel["error"].null_count() == rel.height
    for qid, (_, _, _, (doc, i)) in QA.items():
        mine = rel.filter(pl.col("question_id") == qid)
        gold = mine.filter(pl.col("chunk_id") == f"c256:{doc}:{i}")["relevance_expected"][0]
        others = mine.filter(pl.col("chunk_id") != f"c256:{doc}:{i}")["relevance_expected"]
        assert others.is_empty() or gold > others.max(), qid
    u = read_table("data/judge/udcg.parquet", "udcg")
    assert {m for ms in u["p_methods"].to_list() for m in ms} == {"trained"}
    # PPI unchanged: a person's labels of these answers correct the trained judges' estimates
    project.calibration.min_labels = 3
    sample = sample_items(
        read_table("data/qa/qa.parquet", "qa"),
        read_table("data/answers/answers.parquet", "answers"),
        v,
        c,
        rel,
        SampleParams(n_answer_items=10, n_passage_items=0),
    )
    store = LabelStore(Path(project.calibration.labels_dir), "ann")
    truth = {("A", "q1"): True, ("A", "q2"): True, ("B", "q3"): True}
    for it in sample.iter_rows(named=True):
        ok = truth.get((it["system"], it["question_id"]), False)
        store.append(make_label(it, "correct" if ok else "incorrect", "ann", "web"))
    summary = run_stage(project)
    assert summary.answers.usable == sample.height > 0
    ppi = read_table("data/calibration/ppi_systems.parquet", "calibration_ppi_systems")
    assert {"dafe", "correctness", "trained"} <= set(ppi["predictor"])

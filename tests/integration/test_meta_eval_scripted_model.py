"""The known-order meta-evaluation (benchmarks/meta_eval.py) on a tiny ladder of answers with a
scripted DICE judge: a judge that prefers the answer stating the reference recovers the ladder
(pairwise accuracy 1.0, τ-b 1.0, oracle vs random separated); a constant judge separates
nothing. Real tournament stage, gateway, bootstrap; only the judge model is scripted."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from _llm_testing import Messages, scripted_model
from _tournament_data import answers_frame, qa_frame

from benchmarks import meta_eval as me
from ragcourt.core.params import Params, load_params
from ragcourt.judging.discrimination import NOT_SEPARATED

ROOT = Path(__file__).resolve().parents[2]
N_Q = 20


def _answer(system: str, j: int, refs: list[str]) -> str:
    """oracle always states the reference, dense on 3 of 4 questions, random on 1 of 4;
    shuffled states another question's reference, closed book never answers."""
    right = {
        me.ORACLE: True,
        me.DENSE: j % 4 != 0,
        me.RANDOM: j % 4 == 1,
    }.get(system, False)
    if right:
        return f"As the passages say: {refs[j]}"
    if system == me.SHUFFLED:
        return refs[(j + 1) % len(refs)]
    return "The passages do not say."


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    (tmp_path / "data/answers").mkdir(parents=True)
    (tmp_path / "data/qa").mkdir(parents=True)
    qa = qa_frame(N_Q)
    refs = [r[0] for r in qa["reference_answers"].to_list()]
    systems = [me.ORACLE, me.DENSE, me.RANDOM, me.SHUFFLED, me.NONE]
    answers = answers_frame(systems, N_Q).with_columns(
        pl.struct("system", "question_id")
        .map_elements(
            lambda r: _answer(r["system"], int(r["question_id"][1:]), refs), return_dtype=pl.String
        )
        .alias("answer")
    )
    answers.write_parquet("data/answers/answers.parquet")
    qa.write_parquet("data/qa/qa.parquet")
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.llm.max_retries = 0
    return params


def _fenced(text: str, label: str) -> str:
    """The text enclosed as ``label`` (``ANSWER A``): a ``<<<`` fence, or a tag ``answer_a``."""
    tag = label.lower().replace(" ", "_")
    m = re.search(rf"<<<{label} (\S+)>>>\n(.*?)\n<<<END {label} \1>>>", text, re.S) or re.search(
        rf'<{tag} id="(\S+)">\n(.*?)\n</{tag}>', text, re.S
    )
    assert m is not None, f"no fenced or tagged {label} in the judge prompt"
    return m.group(2)


def _prefers_the_reference(msgs: Messages) -> str:
    """A if only answer A states the reference, B if only B does, else C (tie)."""
    user = msgs[1]["content"]
    ref = _fenced(user, "REFERENCES").removeprefix("- ").strip()
    a, b = (ref in _fenced(user, f"ANSWER {x}") for x in "AB")
    return "A" if a and not b else "B" if b and not a else "C"


def _probs(letter: str) -> dict[str, float]:
    return {x: (0.9 if x == letter else 0.05) for x in "ABC"}


def test_reference_preferring_judge_recovers_the_ladder_scripted_model(project: Params) -> None:
    with scripted_model(
        "meta-good", _prefers_the_reference, lambda msgs: _probs(_prefers_the_reference(msgs))
    ) as m:
        res = me.evaluate(project, "llm", m.model, ns=[5, 10], n_boot=300, seed=0)
    assert res.pairwise_accuracy == 1.0 and all(res.pairs.values())
    assert len(res.pairs) == len(me.KNOWN_PAIRS)
    assert res.kendall_tau_b == 1.0
    assert res.calls.requests > 0 and res.calls.model_calls > 0
    last = [pt for pt in res.curve if pt.questions == N_Q]
    assert {(pt.better, pt.worse) for pt in last} == set(me.CURVE_PAIRS)
    oracle_random = next(pt for pt in last if pt.better == me.ORACLE)
    assert oracle_random.separated and oracle_random.lo is not None and oracle_random.lo > 0
    assert sorted({pt.questions for pt in res.curve}) == [5, 10, N_Q]
    table = me.markdown(
        me.MetaEval(
            corpus="tiny",
            documents=1,
            generation_model="-",
            qa_items=N_Q,
            qagen_attempts=0,
            prepare_wall_s={},
            prepare_calls=res.calls,
            configs=[res],
        )
    )
    assert "| llm | scripted/meta-good | 20 | 1.00 (7/7) | 1.00 |" in table


def test_constant_judge_separates_nothing_scripted_model(project: Params) -> None:
    with scripted_model("meta-const", "A", lambda msgs: _probs("A")) as m:
        res = me.evaluate(project, "llm", m.model, ns=[5, 10], n_boot=300, seed=0)
    # "A" in both presentation orders: every pair ties, no gap is resolved
    pairs = len(me.CURVE_PAIRS)  # per n in ns, then on all N_Q questions
    assert [pt.questions for pt in res.curve] == [5] * pairs + [10] * pairs + [N_Q] * pairs
    assert [pt.separated for pt in res.curve] == [False] * (3 * pairs)
    assert [pt.verdict for pt in res.curve] == [NOT_SEPARATED] * (3 * pairs)
    for pt in res.curve:  # an interval was computed (not "not checked") and it holds 0
        assert pt.lo is not None and pt.hi is not None and pt.lo <= 0 <= pt.hi
    assert res.pairwise_accuracy == 0.0  # equal Elo never counts as the known order


def test_llm_direct_v4_recovers_the_ladder_in_one_call_per_order_scripted_model(
    project: Params,
) -> None:
    """llm-direct: tournament analysis off, prompts v4 (tagged data): one call per order, and a
    judge that prefers the reference recovers the ladder."""
    with scripted_model(
        "meta-direct", _prefers_the_reference, lambda msgs: _probs(_prefers_the_reference(msgs))
    ) as m:
        res = me.evaluate(
            project, "llm-direct", m.model, ns=[5, 10], n_boot=300, seed=0, direct_version="v4"
        )
    assert res.pairwise_accuracy == 1.0 and res.kendall_tau_b == 1.0
    assert m.calls and all(len(c) == 2 for c in m.calls)  # system + one user turn
    assert all('<answer_a id="' in c[1]["content"] for c in m.calls)


def test_make_project_takes_the_quoted_files_and_the_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (corpus / name).write_text(f"text of {name}")
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    params = me.make_project(
        tmp_path / "work", corpus, None, "local/smollm2-135m", cache,
        only_files={"a.txt", "c.txt"}, profile="offline-quality",
    )  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "work/corpus").iterdir()) == ["a.txt", "c.txt"]
    assert params.judge.relevance_model == "local/qwen2.5-coder-1.5b"  # the profile's value
    assert params.llm.model == "local/smollm2-135m"  # generation roles stay
    with pytest.raises(SystemExit, match=r"missing: \['d.txt'\]"):
        me.make_project(tmp_path / "work2", corpus, None, "m", cache, only_files={"a.txt", "d.txt"})

"""Real components: the MiniLM similarity judge, P(NO-RESPONSE) from the embedded local model,
and (slow) the whole judge stage on the embedded model with a cache-only re-run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.io import read_table
from ragcourt.judging import answers_stage, retrieval_stage, summary
from ragcourt.judging.builders import build_judge
from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.udcg import abstention_probabilities
from ragcourt.judging.vocabulary import AnswerItem, JudgeContext
from ragcourt.llm import Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def params(tmp_path: Path) -> Params:
    p = load_params(ROOT / "params.yaml").model_copy(deep=True)
    p.llm.cache_dir = str(tmp_path / "cache")
    p.llm.metrics_dir = str(tmp_path / "metrics")
    return p


def test_minilm_similarity_judge_real_model(params: Params) -> None:
    spec = JudgeSpec(kind="embedding_similarity", embedder="minilm", threshold=0.7)
    judge_ = build_judge("sim", spec, JudgeContext(params))
    out = judge_.judge(
        [
            AnswerItem("", "A man is playing a trumpet.", ("A man plays a trumpet.",)),
            AnswerItem("", "The stock market fell sharply.", ("A man plays a trumpet.",)),
            # the best of several references counts
            AnswerItem(
                "", "A man plays a trumpet.", ("Cats sleep all day.", "A man is playing a trumpet.")
            ),
        ]
    )
    assert [v.verdict for v in out] == [True, False, True]
    assert out[0].score is not None and out[0].score > 0.9
    assert out[1].score is not None and out[1].score < 0.3
    assert "reference 2" in out[2].justification


def test_p_no_response_local_model(params: Params) -> None:
    passages = pl.DataFrame(
        {"question_id": ["q1"], "chunk_id": ["c1"], "text": ["The treaty was signed in 1919."]}
    )
    qa = pl.DataFrame({"question_id": ["q1"], "question": ["When was the treaty signed?"]})
    gw = Gateway(params.llm, stage="test_judging_udcg")
    out = abstention_probabilities(passages, qa, gw, params.llm.model)
    row = out.row(0, named=True)
    assert row["p_error"] is None and row["p_method"] == "logits"
    assert 0.0 <= row["p_no_response"] <= 1.0


@pytest.mark.slow
def test_judge_stage_local_model_rerun_makes_no_calls(
    tmp_path: Path, params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    from integration.test_judging_stage_scripted_model import _write_inputs  # tests/ is on the path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs/prompts").mkdir(parents=True)
    shutil.copy(ROOT / "configs/prompts/judge.yaml", tmp_path / "configs/prompts/judge.yaml")
    shutil.copy(ROOT / "configs/models.yaml", tmp_path / "configs/models.yaml")
    _write_inputs()
    reset_accounts()
    _judge_all(params)  # default config: token_f1 + MiniLM primaries, local LLM arbitrator
    verdicts = read_table("data/judge/verdicts.parquet", "verdicts")
    assert verdicts.height == 6
    assert set(verdicts["resolution"]) <= {"agreement", "arbitration", "degraded", "error"}
    first = json.loads(Path(params.llm.metrics_dir, "llm_judge_retrieval.json").read_text())
    assert first["total"]["model_calls"] > 0
    reset_accounts()
    _judge_all(params)
    for stage in ("judge", "judge_retrieval"):
        again = json.loads(Path(params.llm.metrics_dir, f"llm_{stage}.json").read_text())
        assert again["total"]["model_calls"] == 0, stage
        assert again["total"]["cache_hits"] == again["total"]["requests"]


def _judge_all(params: Params) -> None:
    """The three judge stages in pipeline order: judge, judge_retrieval, judge_summary."""
    answers_stage.run(params)
    retrieval_stage.run(params)
    summary.run(params)


@pytest.mark.parametrize("version", ["v4", "v5"])
def test_shared_passage_prefix_reuses_the_passage_and_changes_nothing_local_model(
    params: Params, version: str
) -> None:
    """judge.yaml v4 and v5: relevance and UDCG requests of one (question, passage) share the
    prompt up to their task, so in one grouped batch the UDCG call evaluates only its task; the
    grades and P(NO-RESPONSE) are exactly those of separate batches without prefix reuse."""
    from ragcourt.judging.relevance import GRADE_LEVELS, relevance_token_requests
    from ragcourt.judging.udcg import NO_RESPONSE, passage_udcg_requests

    passages = pl.DataFrame(
        {
            "question_id": ["q1", "q1", "q2"],
            "chunk_id": ["c1", "c2", "c3"],
            "text": [
                "The treaty of the northern ports was signed in 1919 after four years of talks "
                "between the river towns and the coastal league, and it fixed the tolls.",
                "Wheat is sown in autumn in the valley and harvested in early summer.",
                "The harbour master of Port Elin in 1890 was Anna Ward, who kept the logs.",
            ],
        }
    )
    qa = pl.DataFrame(
        {"question_id": ["q1", "q2"], "question": ["When was the treaty signed?", "Who was it?"]}
    )
    model = params.llm.model
    rel = relevance_token_requests(passages, qa, model, version)
    udcg = passage_udcg_requests(passages, qa, model, version)
    reset_accounts()
    params.llm.cache = False
    params.llm.prefix_reuse = False
    gw_off = Gateway(params.llm, stage="t_v4_off")
    rel_off = gw_off.next_token_probs(rel, list(GRADE_LEVELS))
    udcg_off = gw_off.next_token_probs(udcg, [NO_RESPONSE])
    params.llm.prefix_reuse = True
    gw_on = Gateway(params.llm, stage="t_v4_on")
    rel_on, udcg_on = gw_on.next_token_probs_grouped(
        [(rel, list(GRADE_LEVELS)), (udcg, [NO_RESPONSE])]
    )
    assert all(d.ok for d in rel_off + udcg_off + rel_on + udcg_on)
    assert [d.raw for d in rel_on] == [d.raw for d in rel_off]  # exact floats
    assert [d.raw for d in udcg_on] == [d.raw for d in udcg_off]
    acc = gw_on.account.as_dict()["total"]
    # each UDCG call reuses its passage's relevance prompt up to the task: more than the
    # passage and question tokens of all three pairs are hits
    passage_tokens = sum(len(t.split()) for t in passages["text"].to_list())
    assert acc["prefix_hit_tokens"] > passage_tokens
    reset_accounts()

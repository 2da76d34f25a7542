"""The LLM verdict judge through the real gateway with a scripted model (exact replies):
reason-then-verdict JSON, lenient verdict spellings, unparsable replies as error verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _llm_testing import scripted_model
from pydantic import BaseModel

from ragcourt.judging.builders import build_judge
from ragcourt.judging.llm_judges import VerdictReply
from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.relevance import RelevanceReply
from ragcourt.judging.vocabulary import AnswerItem, JudgeContext
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
REPLIES = {
    "a1": json.dumps({"reasoning": "same fact", "verdict": "correct"}),
    "a2": json.dumps({"reasoning": "wrong year", "verdict": "Incorrect."}),
    "a3": 'Sure! {"reasoning": "matches", "verdict": true} hope this helps',
    "a4": "The answer looks right to me.",  # no JSON at all
    "a5": json.dumps({"reasoning": "?", "verdict": "maybe"}),  # not a verdict
}


@pytest.fixture
def params(tmp_path: Path) -> Params:
    p = load_params(ROOT / "params.yaml").model_copy(deep=True)
    p.llm.cache_dir = str(tmp_path / "cache")
    p.llm.max_retries = 0
    p.llm.parse_retries = 1
    return p


def reply(messages: list[dict[str, str]]) -> str:
    user = messages[1]["content"]  # the original request (a repair turn is appended later)
    answer = user.split("Candidate answer:")[1].split("\n\n")[0].strip()
    return REPLIES[answer]


def test_llm_judge_parses_and_reports_failures_scripted_model(params: Params) -> None:
    with scripted_model("verdicts", reply) as m:
        spec = JudgeSpec(kind="llm", model=m.model)
        judge = build_judge("llm", spec, JudgeContext(params, stage="test_judging"))
        items = [AnswerItem("Q?", a, ("ref one", "ref two")) for a in REPLIES]
        out = judge.judge(items)
    assert [v.verdict for v in out] == [True, False, True, None, None]
    assert out[0].justification == "same fact" and out[0].error is None
    assert out[3].error and "not parsable after 2 attempts" in out[3].error
    assert out[3].justification == REPLIES["a4"]  # the raw reply is kept for inspection
    assert out[4].error and "verdict" in out[4].error
    first = m.calls[0]
    assert "acting as an impartial judge" in first[0]["content"]
    assert "1. ref one\n2. ref two" in first[1]["content"]  # all references, numbered
    # two parse attempts for each of the two bad replies, one call for each good one
    assert len(m.calls) == 3 + 2 * 2


def test_reply_fields_sort_in_generation_order() -> None:
    # a JSON-schema grammar may emit keys sorted by name: the reason must still come first
    assert sorted(VerdictReply.model_json_schema()["properties"]) == ["reasoning", "verdict"]
    assert sorted(RelevanceReply.model_json_schema()["properties"]) == ["reason", "relevance"]


@pytest.mark.parametrize(
    ("model", "reply"),
    [
        (VerdictReply, {"reasoning": "x" * 2000, "verdict": "correct"}),
        (RelevanceReply, {"reason": "x" * 2000, "relevance": 2}),
    ],
)
def test_reason_cap_is_schema_only(model: type[BaseModel], reply: dict[str, object]) -> None:
    """The schema sent to the model caps the reason (and has no docstring description), but
    a longer reason from a hosted model still parses instead of becoming an error."""
    from ragcourt.judging.correctness import CorrectnessReply
    from ragcourt.judging.llm_judges import MAX_REASON_CHARS

    for m in (model, CorrectnessReply):
        schema = m.model_json_schema()
        assert "description" not in schema
        free_text = [f for f in schema["properties"].values() if f.get("type") == "string"]
        caps = [f.get("maxLength") for f in free_text if "enum" not in f]
        assert caps == [MAX_REASON_CHARS]
    model.model_validate(reply)
    CorrectnessReply.model_validate({"rationale": "y" * 2000, "score": 0.5})


def test_judge_requests_carry_the_llm_seed(params: Params) -> None:
    """LLM verdict, correctness and relevance requests send ``llm.seed`` (as qagen does)."""
    from ragcourt.judging.correctness import correctness_requests
    from ragcourt.judging.relevance import relevance_requests

    params.llm.seed = 7
    judge = build_judge("llm", JudgeSpec(kind="llm"), JudgeContext(params, stage="test"))
    assert judge.seed == 7  # type: ignore[attr-defined]
    item = AnswerItem("Q?", "a", ("ref",))
    assert correctness_requests([item], "m", "v1", 0.0, 7)[0].seed == 7
    assert relevance_requests(["Q?"], ["passage"], "m", "v1", 0.0, 7)[0].seed == 7

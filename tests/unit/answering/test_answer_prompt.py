"""Prompt assembly, the abstention rule and variant parsing (pure functions, no model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcourt.answering.generation import build_request, format_passages, is_abstention
from ragcourt.answering.rag_fusion import parse_variants, variant_requests
from ragcourt.answering.system_kinds.builtin import System, builtin_systems
from ragcourt.answering.systems import parse_systems
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"


def _system(**kw: object) -> tuple[System, Params]:
    params = load_params(ROOT / "params.yaml")
    params.controls.kinds = []  # the one system of this file, without control systems
    spec = {"name": "s", "chunking": "c256", "embedder": "minilm", "retriever": "dense", **kw}
    (system,) = builtin_systems(
        parse_systems(
            {"systems": [spec]}, params, "t.yaml", check_models=False, prompts_dir=PROMPTS
        )
    )
    return system, params


def test_prompt_numbers_passages_and_carries_question_and_instruction() -> None:
    system, params = _system(top_k=3, max_tokens=77)
    passages = ["  Alpha text. ", "Beta {braces} stay", "Gamma"]
    req = build_request(system, "Who signed it?", passages, params.llm, PROMPTS)
    (role_s, sys_msg), (role_u, user) = req.messages
    assert (role_s, role_u) == ("system", "user")
    assert "only the numbered passages" in sys_msg and "NO-RESPONSE" in sys_msg
    # passages numbered from 1, in rank order, stripped, blank-line separated
    assert "[1] Alpha text.\n\n[2] Beta {braces} stay\n\n[3] Gamma" in user
    assert user.index("[1] Alpha") < user.index("[2] Beta") < user.index("[3] Gamma")
    assert user.index("[3] Gamma") < user.index("Question: Who signed it?")
    assert user.rstrip().endswith("reply with exactly: NO-RESPONSE")
    assert req.model == params.llm.model
    assert (req.max_tokens, req.temperature, req.seed) == (77, params.llm.temperature, 0)


def test_prompt_without_passages_says_so() -> None:
    system, params = _system()
    req = build_request(system, "Q?", [], params.llm, PROMPTS)
    assert "(no passages were retrieved)" in req.messages[1][1]
    assert "[1]" not in req.messages[1][1]
    assert format_passages(["x"], "v1", PROMPTS) == "[1] x"


@pytest.mark.parametrize(
    ("reply", "flag"),
    [
        ("NO-RESPONSE", True),
        ("no-response", True),
        ("  NO-RESPONSE.", True),
        ('"NO-RESPONSE"', True),
        ("**NO RESPONSE**", True),
        ("No response.", False),  # a space between the words counts only in capitals
        ("NO_RESPONSE", True),
        ("NORESPONSE", True),
        ("NO-RESPONSE: the passages do not say.", True),
        ("The answer is NO-RESPONSE", False),
        ("No response was given by Congress in 1790.", False),  # 'No response' then a word
        ("NO-RESPONSES", False),
        ("Washington signed it.", False),
        ("", False),
    ],
)
def test_abstention_flag(reply: str, flag: bool) -> None:
    assert is_abstention(reply) is flag


def test_parse_variants_strips_numbering_and_drops_repeats() -> None:
    reply = (
        "Here are the queries:\n1. Who signed the treaty?\n2) treaty signatories\n"
        "- Who signed the treaty\n\n* 'When was the treaty signed'\nQuery 5: treaty date\n"
        "extra line"
    )
    got = parse_variants(reply, question="Who signed the treaty?", n=3)
    assert got == ["treaty signatories", "When was the treaty signed", "treaty date"]
    assert parse_variants("", "q", 4) == []


def test_variant_request_asks_for_n_lines() -> None:
    params = load_params(ROOT / "params.yaml")
    (req,) = variant_requests(["What is X?"], 4, "m/x", params.llm, prompts_dir=PROMPTS)
    user = req.messages[-1][1]
    assert "Write 4 different search queries" in user and "Question: What is X?" in user
    assert req.model == "m/x" and req.tag == "answer.variants"

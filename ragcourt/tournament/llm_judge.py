"""The DICE two-stage LLM pairwise judge (spec §6), through the LLM gateway.

Stage I (chat): the judge reads the question, the reference answer(s), the passages each
system retrieved (top ``evidence_passages``, ``evidence_chars`` each) and both answers, and
writes an analysis placing each answer in fully correct > partially correct > insufficient
information > wrong, without a verdict. Stage II (next-token probabilities): the same
conversation plus the analysis as the assistant turn and a question asking for one letter;
the gateway returns the probabilities of the first answer token for the single-token labels
A, B and C (C = tie, since "Tie" is usually two tokens), renormalised over the three.
A failed analysis or verdict call, or a missing/errored answer, is an error verdict.
With ``tournament.analysis: false`` stage I is skipped: the prompt version's ``direct``
template (v3+) shows the same data and asks for the letter at once, one call per order.
From prompt version v2 the question, references, evidence and answers are fenced
(:func:`ragcourt.core.prompts.render`), so an answer cannot address the judge.
Registered as the pairwise judge kind ``llm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ragcourt.core.errors import ConfigError
from ragcourt.core.prompts import has_prompt, prompt, render
from ragcourt.core.provenance import EXTERNAL_MODEL_PREFIX
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, OrderKey, OrderVerdict, PairwiseContext
from ragcourt.tournament.params import TournamentParams
from ragcourt.tournament.scoring import LABELS, Probs

if TYPE_CHECKING:
    from ragcourt.llm.gateway import Gateway
    from ragcourt.llm.types import ChatRequest

AREA = "tournament"
Messages = tuple[tuple[str, str], ...]  # (role, content) turns of one call


@dataclass(frozen=True)
class _Answer:
    text: str
    abstained: bool
    passages: list[str]
    error: str | None
    external: bool = False  # from an answers file / callable / HTTP endpoint, not ragcourt


def _answers_index(answers: pl.DataFrame, k: int) -> dict[tuple[str, str], _Answer]:
    """(system, question_id) -> answer text, abstention flag and top-k passage texts."""
    index: dict[tuple[str, str], _Answer] = {}
    for row in answers.select(
        "system", "question_id", "answer", "abstained", "retrieved", "error", "model"
    ).iter_rows(named=True):
        passages = sorted(
            row["retrieved"] or [], key=lambda p: p["rank"] if p["rank"] is not None else 1 << 30
        )
        index[(row["system"], row["question_id"])] = _Answer(
            row["answer"] or "",
            bool(row["abstained"]),
            [p["text"] or "" for p in passages[:k]],
            row["error"],
            (row["model"] or "").startswith(EXTERNAL_MODEL_PREFIX),
        )
    return index


class LLMPairwiseJudge:
    """DICE judge: one analysis call (unless ``tp.analysis`` is false) and one next-token
    call per presentation order. ``prompts_dir`` overrides ``configs/prompts`` (benchmarks)."""

    name = "llm"

    def __init__(
        self,
        gateway: Gateway,
        model: str,
        answers: pl.DataFrame,
        qa: pl.DataFrame,
        tp: TournamentParams,
        temperature: float = 0.0,
        seed: int | None = 0,
        prompts_dir: Path | None = None,
    ):
        self.gateway, self.model, self.tp = gateway, model, tp
        self.prompts_dir = prompts_dir
        self.temperature, self.seed = temperature, seed
        self._answers = _answers_index(answers, tp.evidence_passages)
        self._qa: dict[str, tuple[str, list[str]]] = {
            q: (text, list(refs or []))
            for q, text, refs in qa.select(
                "question_id", "question", "reference_answers"
            ).iter_rows()
        }
        v = tp.prompt_version
        if not tp.analysis and not has_prompt(AREA, "direct", v, prompts_dir):
            raise ConfigError(
                f"tournament.analysis: false needs a prompt version with a 'direct' template "
                f"(v3 or later); prompt_version '{v}' has none"
            )
        self._ask = "analysis" if tp.analysis else "direct"  # the template of the first user turn
        self._t = {
            name: prompt(AREA, name, v, prompts_dir)
            for name in (
                "system",
                "passage",
                "no_passages",
                "no_contexts_supplied",
                "no_references",
                "abstained_note",
                self._ask,
                "verdict",
            )
        }

    def _evidence(self, passages: list[str], external: bool = False) -> str:
        if not passages:  # an external system that reported no passages is not penalised
            return self._t["no_contexts_supplied" if external else "no_passages"]
        cut = self.tp.evidence_chars
        return "\n".join(
            self._t["passage"].format(n=i, text=" ".join(t.split())[:cut])
            for i, t in enumerate(passages, 1)
        )

    def user_prompt(self, key: OrderKey) -> tuple[str | None, str | None]:
        """(first user message, None) or (None, error) for one presentation order: the
        stage-I analysis ask, or with ``analysis`` off the ``direct`` verdict ask."""
        if key.question_id not in self._qa:
            return None, f"question '{key.question_id}' is not in the QA table"
        question, refs = self._qa[key.question_id]
        sides: list[_Answer] = []
        for system in (key.first, key.second):
            ans = self._answers.get((system, key.question_id))
            if ans is None:
                return None, f"no answer from system '{system}' to '{key.question_id}'"
            if ans.error:
                return None, f"answer of '{system}' to '{key.question_id}' failed: {ans.error}"
            sides.append(ans)
        a, b = sides
        data = {  # untrusted: fenced when the prompt version says so (v2)
            "question": question,
            "references": "\n".join(f"- {r}" for r in refs) if refs else self._t["no_references"],
            "evidence_a": self._evidence(a.passages, a.external),
            "evidence_b": self._evidence(b.passages, b.external),
            "answer_a": a.text,
            "answer_b": b.text,
        }
        plain = {
            "abstained_a": self._t["abstained_note"] if a.abstained else "",
            "abstained_b": self._t["abstained_note"] if b.abstained else "",
        }
        return render(AREA, self._ask, self.tp.prompt_version, data, plain, self.prompts_dir), None

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        verdicts: list[OrderVerdict | None] = [None] * len(keys)
        todo: list[tuple[int, str]] = []
        for i, key in enumerate(keys):
            user, err = self.user_prompt(key)
            if user is None:
                verdicts[i] = OrderVerdict(None, error=err)
            else:
                todo.append((i, user))
        system = self._t["system"]
        # (index, rationale, verdict-call messages) per order that reaches stage II
        stage2: list[tuple[int, str, Messages]] = (
            self._analyse(todo, verdicts)
            if self.tp.analysis
            else [(i, "", (("system", system), ("user", user))) for i, user in todo]
        )
        dists = self.gateway.next_token_probs(
            [self._verdict_request(msgs) for _, _, msgs in stage2],
            candidates=list(LABELS),
            desc="pairwise verdict",
        )
        for (i, analysis, _), dist in zip(stage2, dists, strict=True):
            if not dist.ok:
                verdicts[i] = OrderVerdict(None, analysis, f"verdict call failed: {dist.error}")
                continue
            try:
                verdicts[i] = OrderVerdict(Probs.from_labels(dist.probs), analysis)
            except ValueError as err:
                verdicts[i] = OrderVerdict(None, analysis, f"verdict probabilities unusable: {err}")
        return [v if v is not None else OrderVerdict(None, error="not judged") for v in verdicts]

    def _analyse(
        self, todo: list[tuple[int, str]], verdicts: list[OrderVerdict | None]
    ) -> list[tuple[int, str, Messages]]:
        """Stage I for every order; a failed call becomes its error verdict. Returns the
        stage-II conversation (system, user, analysis as the assistant turn, verdict ask)."""
        from ragcourt.llm.types import ChatRequest

        system = self._t["system"]
        analyses = self.gateway.chat(
            [
                ChatRequest.of(
                    self.model,
                    system,
                    user,
                    max_tokens=self.tp.analysis_max_tokens,
                    temperature=self.temperature,
                    seed=self.seed,
                    tag="tournament.analysis",
                )
                for _, user in todo
            ],
            desc="pairwise analysis",
        )
        out: list[tuple[int, str, Messages]] = []
        for (i, user), res in zip(todo, analyses, strict=True):
            if not res.ok:
                verdicts[i] = OrderVerdict(None, error=f"analysis call failed: {res.error}")
                continue
            messages = (
                ("system", system),
                ("user", user),
                ("assistant", res.text),
                ("user", self._t["verdict"]),
            )
            out.append((i, res.text, messages))
        return out

    def _verdict_request(self, messages: Messages) -> ChatRequest:
        from ragcourt.llm.types import ChatRequest

        return ChatRequest(
            model=self.model,
            messages=messages,
            max_tokens=1,
            temperature=0.0,
            seed=self.seed,
            tag="tournament.verdict",
        )


@PAIRWISE_JUDGES.register("llm")
def _llm(ctx: PairwiseContext) -> LLMPairwiseJudge:
    """The DICE judge on ``tournament.model`` with the context's gateway (its stage's)."""
    if ctx.answers is None or ctx.qa is None:
        raise ConfigError("tournament.judge 'llm' needs the answers and QA tables")
    p = ctx.params
    return LLMPairwiseJudge(
        ctx.gateway,
        p.llm.resolve(p.tournament.model),
        ctx.answers,
        ctx.qa,
        p.tournament,
        p.llm.temperature,
        p.llm.seed,
    )

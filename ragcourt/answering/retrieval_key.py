"""What fixes a built-in system's retrieved passages (SPEC 3): systems with equal
:class:`RetrievalKey` share one retrieval (:mod:`ragcourt.answering.retrieval_groups`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetrievalKey:
    """What fixes a system's retrieved passages: systems with equal keys share one retrieval."""

    chunking: str
    embedder: str | None
    retriever: str
    depth: int  # ranking depth computed; a system keeps its first top_k
    fusion_variants: int  # 0 = no RAG-Fusion
    fusion_model: str | None
    fusion_prompt_version: str | None
    fusion_max_tokens: int | None

    @property
    def label(self) -> str:
        emb = f"__{self.embedder}" if self.embedder else ""
        fus = f"+fusion{self.fusion_variants}" if self.fusion_variants else ""
        return f"{self.chunking}{emb}/{self.retriever}@{self.depth}{fus}"

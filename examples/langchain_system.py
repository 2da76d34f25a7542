"""Route 2, ``kind: python``, with a LangChain Runnable (LCEL).

``chain`` is an ordinary LangChain pipeline: a custom ``BaseRetriever`` (BM25 over the
project's chunks, via :mod:`examples.extractive`) feeding a generation step. To keep the example
offline and instant the generation step is extractive (``RunnableLambda``: the best sentence of
the retrieved passages, no LLM); in your pipeline it would be ``prompt | llm | parser``.

ragcourt sees that ``chain`` has ``ainvoke`` and calls ``await chain.ainvoke(question)``. The
output is a dict with ``answer`` and ``contexts`` (LangChain ``Document`` s: ``page_content``
is the passage, ``metadata`` may carry ``doc_id``, ``score``, ``char_start``, ``char_end``).

    - name: my-langchain
      kind: python
      callable: examples.langchain_system:chain
      inputs: [examples/extractive.py, data/chunks/c256.parquet]
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel, RunnablePassthrough

from examples.extractive import answer_from, shared


class ProjectBM25Retriever(BaseRetriever):
    """LangChain retriever over the project's chunks (``chunking`` None: the first one)."""

    chunking: str | None = None
    k: int = 3

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = shared(self.chunking, self.k).retrieve(query)
        return [
            Document(page_content=h["text"], metadata={k: v for k, v in h.items() if k != "text"})
            for h in hits
        ]


def _generate(inputs: dict[str, Any]) -> dict[str, Any]:
    """Extractive stand-in for ``prompt | llm | StrOutputParser()``."""
    docs: list[Document] = inputs["contexts"]
    return {
        "answer": answer_from(inputs["question"], [d.page_content for d in docs]),
        "contexts": docs,
    }


def build_chain(chunking: str | None = None, k: int = 3) -> Runnable[str, dict[str, Any]]:
    """question -> {"answer", "contexts"}."""
    retrieve = RunnableParallel(
        contexts=ProjectBM25Retriever(chunking=chunking, k=k), question=RunnablePassthrough()
    )
    return retrieve | RunnableLambda(_generate)


chain = build_chain()

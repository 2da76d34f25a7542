"""Judging library (spec §4, 5, 7): the judge stages and what they use.

- ``vocabulary``: the judge vocabulary (kind -> instance -> verdict) for answer judges,
  correctness graders and pairwise judges; the answer-judge and grader registries.
- ``builders``: imports the built-in kinds and builds configured judges and graders.
- ``lexical``: token F1 / containment (DAFE's adapted exact match); ``semantic``: reference
  cosine similarity; ``llm_judges``: binary LLM verdict (reason first, then verdict).
- ``dafe``: dynamic arbitration; ``correctness``: RAGalyst 0-1 rubric and the graders;
  ``relevance``: RAGElo 0/1/2 passage grades and MRR@k; ``udcg``: passage utility, UDCG and
  UDCGθ; ``agreement``: kappa / macro-F1 / Spearman / Kendall with standard errors.
- Stages: ``answers_stage`` (``judge``), ``retrieval_stage`` (``judge_retrieval``),
  ``summary`` (``judge_summary``, with ``per_question`` and ``span_metrics`` analytics and
  the ``summaries`` model of summary.json); ``stage_inputs`` reads what all three share.
"""

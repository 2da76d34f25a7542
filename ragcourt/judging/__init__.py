"""Judging library (SPEC 4, 5, 7), used by ``ragcourt.judging.stage`` and the calibration scripts.

- ``base``: the judge protocol, verdict types and the ``kind`` registry params configure.
- ``lexical``: token F1 / containment (DAFE's adapted exact match); ``semantic``: reference
  cosine similarity; ``llm_judges``: binary LLM verdict (reason first, then verdict).
- ``dafe``: dynamic arbitration; ``correctness``: RAGalyst 0-1 rubric; ``relevance``:
  RAGElo 0/1/2 passage grades and MRR@k; ``udcg``: passage utility, UDCG and UDCGθ;
  ``agreement``: kappa / macro-F1 / Spearman / Kendall with standard errors.
"""

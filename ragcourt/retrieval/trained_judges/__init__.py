"""Trained judges: small classifiers on frozen embedder features plus lexical features, fitted on
human labels (SQuAD v1.1 train, the SQuAD2 and STS-B train items) and shipped as JSON weights.

Three roles, each a pure function of its text pair (no LLM, no batch effects):

- ``relevance``: P(the passage holds the answer to the question), logistic, calibrated on
  held-out SQuAD articles;
- ``answerability``: P(the question is answerable from the chunk alone), logistic;
- ``correctness``: how closely an answer says what a reference says, a [0, 1] score (ridge
  regression on STS-B similarity, clipped).

:mod:`.judges` scores pairs with the shipped weights, :mod:`.training` rebuilds them
(``ragcourt judges train``); the judge registries plug them in under the kind ``trained``.
"""

"""DICE pairwise judging and Swiss tournament (SPEC 6), as small pure modules.

- :mod:`scoring`: hard/soft per-question scores at the probability margin; order combination.
- :mod:`elo`: expected score, Elo update with upset-weighted K.
- :mod:`swiss`: closest-Elo Swiss pairing (no repeats, backtracking, byes) and round-robin.
- :mod:`bradley_terry`: Bradley-Terry fit on fractional wins (logistic regression).
- :mod:`score_matrix`: (pair × question) scores; Elo replays and BT fits on resampled questions.
- :mod:`bootstrap`: confidence intervals over questions for Elo and Bradley-Terry.
- :mod:`pairwise_judges`: the pairwise judge protocol and registry (``llm``,
  ``correctness_margin``) plus the in-process judgement memo shared by all schedules.
- :mod:`llm_judge`: the two-stage DICE LLM judge through the gateway.
- :mod:`simulate`: latent strengths + stochastic oracle, Kendall tau-b vs truth.
- :mod:`single_system`: a new system against high / mid / low reference systems.
"""

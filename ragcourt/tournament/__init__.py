"""DICE pairwise judging and Swiss tournament (spec §6), as small pure modules.

- :mod:`scoring`: hard/soft per-question scores at the probability margin; order combination.
- :mod:`elo`: expected score, Elo update with upset-weighted K.
- :mod:`swiss`: closest-Elo Swiss pairing (no repeats, backtracking, byes) and round-robin.
- :mod:`bradley_terry`: Bradley-Terry fit on fractional wins (logistic regression).
- :mod:`score_matrix`: (pair × question) scores; Elo replays and BT fits on resampled questions.
- :mod:`bootstrap`: confidence intervals over questions for Elo and Bradley-Terry.
- :mod:`pairwise`: the pairwise judge protocol, per-order verdicts and the ``tournament.judge``
  registry; :mod:`builders` builds the configured judge.
- :mod:`llm_judge` (kind ``llm``): the two-stage DICE LLM judge through the gateway;
  :mod:`correctness_margin` (kind ``correctness_margin``): ordered logit on correctness.
- :mod:`memo`: the in-process judgement memo shared by all schedules, per-question rows.
- :mod:`runner`: one tournament (Swiss, round-robin, BT, CIs, leaderboard, summary), no I/O.
- :mod:`stage`: the DVC stage; :mod:`summaries`: the model of its summary.json.
- :mod:`simulate`: latent strengths + stochastic oracle, Kendall tau-b vs truth.
- :mod:`single_system`: a new system against high / mid / low reference systems.
"""

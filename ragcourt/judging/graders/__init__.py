"""Correctness graders: the kinds ``judge.correctness_mode`` may name.

A module here registers its graders with ``@CORRECTNESS_GRADERS.register("kind")``
(:mod:`ragcourt.judging.vocabulary`); the registry imports every module of this package on its
first lookup, so a new grader is one new module (or one more class in :mod:`.builtin`) and
nothing else.
"""

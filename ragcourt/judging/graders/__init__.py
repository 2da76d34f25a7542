"""Correctness graders, one module each: the kinds ``judge.correctness_mode`` may name.

A module here registers its grader with ``@CORRECTNESS_GRADERS.register("kind")``
(:mod:`ragcourt.judging.vocabulary`); the registry imports every module of this package on its
first lookup, so a new grader is one new module and nothing else.
"""

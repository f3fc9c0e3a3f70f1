"""Attention as a learner gets it wrong: the catalogue of one-bug-at-a-time mistakes, each built
from the right and wrong steps of :mod:`attnlab.core.steps` (:mod:`~attnlab.mistakes.catalogue`),
and the diagnosis that names the mistake behind a set of numbers
(:mod:`~attnlab.mistakes.diagnosis`).

May import: core, text and lesson (a diagnosis compares with the lesson's numbers).
"""

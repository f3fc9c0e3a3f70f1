"""Grading what a learner typed: the answer service every front end calls, which reads numbers
with their decimals (:mod:`~attnlab.grading.answers`: ``submit`` to a verdict as data), each
question's answer key, computed once from the lesson
(:mod:`~attnlab.grading.keys`), the one grader that judges against it
(:mod:`~attnlab.grading.grade`), work carried from rounded intermediates
(:mod:`~attnlab.grading.rounding`), a verdict in words (:mod:`~attnlab.grading.reasons`:
``present`` in a language; the slips' words in :mod:`~attnlab.grading.slips`) and ``check``'s
stage questions (:mod:`~attnlab.grading.handcheck`).

May import: core, text, inputs, lesson, mistakes, and the knowledge checks' definitions in
:mod:`attnlab.content.knowledge` (what each exercise asks).
"""

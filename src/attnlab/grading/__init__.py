"""Grading what a learner typed: reading numbers with their decimals
(:mod:`~attnlab.grading.answer_parse`), the one grader (:mod:`~attnlab.grading.grade`), what
rounding allows (:mod:`~attnlab.grading.rounding`), slips and named mistakes
(:mod:`~attnlab.grading.slips`, :mod:`~attnlab.grading.reasons`), ``check``'s stage questions
(:mod:`~attnlab.grading.handcheck`) and the answer service every front end calls
(:mod:`~attnlab.grading.answers`: ``submit`` to a verdict as data, ``present`` in a language).

May import: core, text, inputs, lesson, mistakes, and the knowledge checks' definitions in
:mod:`attnlab.content.knowledge` (what each exercise asks).
"""

"""Grading what a learner typed: reading numbers with their decimals
(:mod:`~attnlab.grading.answer_parse`), each question's answer key, computed once from the lesson
(:mod:`~attnlab.grading.keys`), the one grader that judges against it
(:mod:`~attnlab.grading.grade`), work carried from rounded intermediates
(:mod:`~attnlab.grading.rounding`), the words of slips and named mistakes
(:mod:`~attnlab.grading.slips`, :mod:`~attnlab.grading.reasons`), ``check``'s stage questions
(:mod:`~attnlab.grading.handcheck`) and the answer service every front end calls
(:mod:`~attnlab.grading.answers`: ``submit`` to a verdict as data, ``present`` in a language).

May import: core, text, inputs, lesson, mistakes, and the knowledge checks' definitions in
:mod:`attnlab.content.knowledge` (what each exercise asks).
"""

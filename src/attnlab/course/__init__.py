"""The lesson's 20 sections as content: renderer-neutral blocks built from the lesson's numbers.

Sits above :mod:`attnlab.learn` (each section ends in its knowledge check) and below every front
end: the web lesson renders these blocks as HTML, and other front ends read the same blocks.

Modules:

* :mod:`attnlab.course.blocks`: the block kinds (prose, formula as LaTeX, table, code, figure).
* :mod:`attnlab.course.numbers`: the lesson's numbers gathered for the sections.
* :mod:`attnlab.course.sections_*`: the 20 sections' explanations in Chinese and English.
* :mod:`attnlab.course.intro`: the introduction above section 0 (key question, objectives,
  reading time, study units, the first command to run).
* :mod:`attnlab.course.content`: the sections assembled, in page order (cached per language).
"""

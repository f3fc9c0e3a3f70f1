"""The lesson as a Jupyter notebook (``attnlab notebook``).

* :mod:`~attnlab.notebook.markdown`: course blocks (:mod:`attnlab.content`) as Markdown;
* :mod:`~attnlab.notebook.cells`: the code cells of each section (stages, figures, listings,
  exercises);
* :mod:`~attnlab.notebook.build`: the whole notebook with nbformat, written atomically;
* :mod:`~attnlab.notebook.kernel`: the helpers its cells call (``show_stage``, ``check``).

May import: core, text, inputs, lesson, mistakes, content, grading and figures.
"""

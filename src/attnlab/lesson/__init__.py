"""Every number the lesson shows, computed once through :mod:`attnlab.core.pipeline`.

* :mod:`~attnlab.lesson.numbers`: the one keyed source of lesson numbers (``"weights.A.final"``);
  every script, page, figure, check and test reads them there.
* :mod:`~attnlab.lesson.demos`: what the lesson derives from its head (sections 1, 5, 10, 11, 16).
* :mod:`~attnlab.lesson.experiment`: section 16's scoring layer and one gradient step.
* :mod:`~attnlab.lesson.shapes`, :mod:`~attnlab.lesson.cost`: sections 9 and 17, measured.

Nothing here knows that a learner exists: no text, no grading, no storage.

May import: core and text.
"""

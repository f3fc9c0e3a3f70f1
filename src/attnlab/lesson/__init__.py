"""Every number the lesson shows, computed through :mod:`attnlab.pipeline`.

* :mod:`~attnlab.lesson.numbers`: the one keyed source of lesson numbers (``"weights[1,1,0]"``).
* :mod:`~attnlab.lesson.experiment`: section 16's scoring layer and one gradient step.
* :mod:`~attnlab.lesson.shapes`, :mod:`~attnlab.lesson.cost`: sections 9 and 17, measured.

Nothing here knows that a learner exists: no text, no grading, no storage.
"""

"""Finding mistakes in attention code: the mistakes catalogue (:mod:`~attnlab.debug.catalogue`,
built on the step recipes of :mod:`attnlab.lesson.steps`), the diagnosis that names the mistake
behind a learner's numbers (:mod:`~attnlab.debug.diagnosis`) and the sandboxed auditor of a
learner's module (:mod:`~attnlab.debug.audit`)."""

"""Finding mistakes in attention code: the mistakes catalogue (:mod:`~attnlab.debug.catalogue`,
built on the step recipes of :mod:`attnlab.lesson.steps`) and the sandboxed auditor of a learner's
module (:mod:`~attnlab.debug.audit`)."""

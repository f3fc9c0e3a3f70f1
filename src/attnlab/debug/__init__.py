"""Finding mistakes in attention code: the mistakes catalogue (:mod:`~attnlab.debug.catalogue`),
the step recipes that reproduce each mistake (:mod:`~attnlab.debug.steps`), the diagnosis that
names the mistake behind a learner's numbers (:mod:`~attnlab.debug.diagnosis`) and the sandboxed
auditor of a learner's module (:mod:`~attnlab.debug.audit`)."""

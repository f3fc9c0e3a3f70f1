"""The maths of attention, with torch and nothing of the learner: the lesson's fixed example
(:mod:`~attnlab.core.example`), the one attention code path (:mod:`~attnlab.core.pipeline`), the
lesson's modules and the fused one (:mod:`~attnlab.core.modules`), weight copies to PyTorch's own
attention (:mod:`~attnlab.core.convert`), the steps of attention as a learner writes them, right
and wrong (:mod:`~attnlab.core.steps`: the mistakes' recipes and section 11's 0 fill), the tiled
online-softmax forward (:mod:`~attnlab.core.flash`), and the guards that refuse non-finite stages
or work that cannot fit (:mod:`~attnlab.core.finite`, :mod:`~attnlab.core.memory_guard`).

May import: :mod:`attnlab.text` (for its one-line errors) and torch.
"""

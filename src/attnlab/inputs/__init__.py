"""A learner's own numbers and text, checked before anything runs: the one input model and its
file loader (:mod:`~attnlab.inputs.model`), the explorer form's validator
(:mod:`~attnlab.inputs.explorer`), bounded JSON/TOML reading (:mod:`~attnlab.inputs.safe_load`) and
the length limits of every kind of learner text (:mod:`~attnlab.inputs.text_limits`).

May import: :mod:`attnlab.core` and :mod:`attnlab.text`.
"""

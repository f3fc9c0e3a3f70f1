"""The ten checklist items of the lesson's section 18, judged on an :class:`Audit`.

Each ``item_N`` (1-4 in :mod:`~attnlab.audit.scores_check`, 5 in
:mod:`~attnlab.audit.mask_check`, 6-10 in :mod:`~attnlab.audit.reading_check`) looks
at what it can observe directly (recorded softmax, scores, SDPA calls,
re-runs with changed inputs) and returns a :class:`Verdict`, or None when it saw nothing
decisive; :func:`attnlab.audit.judge.judge` then falls back on the end-to-end comparison with
the reference and on the catalogue mistakes that reproduce the learner's output.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.audit.context import Audit
from attnlab.audit.mask_check import item_5
from attnlab.audit.reading_check import item_6, item_7, item_8, item_9, item_10
from attnlab.audit.scores_check import item_1, item_2, item_3, item_4
from attnlab.audit.verdict import Verdict

ITEMS: dict[int, Callable[[Audit], Verdict | None]] = {
    1: item_1,
    2: item_2,
    3: item_3,
    4: item_4,
    5: item_5,
    6: item_6,
    7: item_7,
    8: item_8,
    9: item_9,
    10: item_10,
}

"""``attnlab audit`` without its processes, for tests whose point is not the sandbox.

``run_audit`` checks its arguments, starts the keeper (which starts the sandboxed learner and the
judge) and turns the keeper's account into a result. :func:`judge_here` replaces only the middle
step: the same judge (:func:`attnlab.audit.runner.audit`) imports the trusted test file in this
process, and its result goes through the same :func:`~attnlab.audit.outcome.result_of` as a
keeper's account. So the CLI's options, the web box, the rendering, ``--figure`` and the exit
codes are tested as they are, in a fraction of the time; the sandbox itself is tested by the
tests marked ``sandbox``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import attnlab.audit
from attnlab.audit.outcome import result_of
from attnlab.audit.processes import Capture
from attnlab.audit.runner import audit, with_names


def _spawn_here(path: Path, name: str, kind: str, timeout: float, memory_mb: int,
                init: str | None = None) -> dict[str, Any]:  # fmt: skip
    """What the keeper would report for a learner that printed nothing and left nothing."""
    result = with_names(audit(path, name, kind, init=init))
    quiet = Capture().summary()
    outcome = {
        "ready": ["learner", "judge"], "timed_out": False, "memory": None,
        "learner_died": False, "returncode": 0, "result": result, "stdout": quiet,
        "stderr": quiet, "judge_stderr": "", "strays": 0, "isolation": None,
    }  # fmt: skip
    return result_of(outcome, timeout)


@pytest.fixture
def judge_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``run_audit`` of the test judges in this process (trusted files only)."""
    monkeypatch.setattr(attnlab.audit, "_spawn", _spawn_here)

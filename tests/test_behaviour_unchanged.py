"""Moving modules into their folders (issue 12) changes nothing a learner sees: the scripts'
documents and texts, `trace --format json`, every figure's drawn data and every web page's
numbers equal the record taken before the move (tests/golden/behaviour.json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN))

import snapshot  # noqa: E402


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads((GOLDEN / "behaviour.json").read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("part", ["scripts", "figures", "web_numbers"])
def test_what_a_learner_sees_is_unchanged(part: str, recorded: dict) -> None:
    now = json.loads(json.dumps(getattr(snapshot, part)(), ensure_ascii=False))
    before = recorded["web" if part == "web_numbers" else part]
    changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
    assert not changed, f"changed since the record: {changed[:10]}"

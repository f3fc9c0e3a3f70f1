"""``attnlab audit`` imports torch once, in the runner: the command's own process stays light
(issue 16: an audit took two torch imports, 2.2-3.0 s; the wall is measured by
``benchmarks/audit_wall.py``, not here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import attnlab
from attnlab.audit.observe import first_diff
from attnlab.audit.runner import with_names

ZOO = Path(__file__).parent / "zoo"

#: Runs ``attnlab audit`` in a fresh interpreter with a stand-in keeper (the runner and its torch
#: import are tested in test_audit*.py), then lists the heavy packages that process imported.
_PARENT = """
import sys
from pathlib import Path
from attnlab import audit
audit.KEEPER = Path(sys.argv[1])
sys.argv = ["attnlab", "--lang", "en", "audit", sys.argv[2]]
from attnlab.cli.main import main
try:
    main()
except SystemExit as exit:
    print("exit", exit.code)
heavy = {m.split(".")[0] for m in sys.modules} & {"torch", "sympy", "numpy", "matplotlib"}
print("heavy", sorted(heavy))
"""


def _outcome() -> dict[str, object]:
    """What the keeper answers for a learner file that forgot the scale (item 4)."""
    items = [
        {"item": n, "status": "PASS", "evidence": {"zh": "好", "en": "fine"}, "mistakes": []}
        for n in range(1, 11)
    ]
    items[3].update(status="FAIL", mistakes=["no_scale"], section=8)
    result = with_names({"status": "ok", "kind": "head", "layout": None, "items": items})
    empty = {"text": "", "bytes": 0, "dropped": 0}
    return {"ready": ["judge", "learner"], "timed_out": False, "memory": None,
            "learner_died": False, "returncode": 0, "result": result, "stdout": empty,
            "stderr": empty, "judge_stderr": "", "strays": 0, "isolation": None}  # fmt: skip


@pytest.mark.process
def test_the_audit_command_never_imports_torch(tmp_path: Path) -> None:
    keeper = tmp_path / "keeper.py"
    keeper.write_text(f"print({json.dumps(json.dumps(_outcome()))}, end='')\n", encoding="utf-8")
    learner = ZOO / "bad" / "no_scale_loop.py"
    done = subprocess.run(
        [sys.executable, "-c", _PARENT, str(keeper), f"{learner}:LoopMHA"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "reproduced by: no_scale (no scaling); reread section 8" in done.stdout, done.stdout
    assert " 4. scale ÷√d_k" in done.stdout, done.stdout
    assert "exit 1" in done.stdout, done.stdout
    assert "heavy []" in done.stdout, done.stdout


def test_items_carry_their_checklist_names_and_mistake_titles() -> None:
    result = with_names(_outcome()["result"])  # type: ignore[arg-type]
    four = result["items"][3]  # type: ignore[index]
    assert four["name"] == {"zh": "缩放 ÷√d_k", "en": "scale ÷√d_k"}
    assert four["mistake_titles"] == [{"zh": "没有缩放", "en": "no scaling"}]


@pytest.mark.process
def test_import_attnlab_is_lazy_and_gives_every_public_name() -> None:
    code = "import sys, attnlab; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stdout + done.stderr
    for name in attnlab.__all__:
        assert getattr(attnlab, name) is not None, name
    with pytest.raises(AttributeError, match="module 'attnlab' has no attribute 'Attention'"):
        _ = attnlab.Attention


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_first_diff_finds_the_largest_difference(shape: list[int], data: st.DataObject) -> None:
    want = torch.zeros(shape)
    flat = data.draw(st.integers(0, want.numel() - 1))
    got = want.clone()
    got.view(-1)[flat] = 1.0
    expected = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), want.shape))
    assert first_diff(got, want) == expected


@pytest.mark.process
def test_first_diff_does_not_import_sympy() -> None:
    """``torch.unravel_index`` imports sympy on its first call: 1.4 s of every audit."""
    code = (
        "import sys, torch; from attnlab.audit.observe import first_diff; "
        "first_diff(torch.ones(2, 3), torch.zeros(2, 3)); print('sympy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stdout + done.stderr

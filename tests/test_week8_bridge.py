"""The course's next week runs on Week 7: a Week-8-style client placed next to each lesson
script imports ``fixed_example`` and ``attend`` from it (issue 14's contract) and reproduces
the lesson's final rows; importing a script prints nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import published
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [ROOT / "week07_attention.py", ROOT / "course_examples" / "week07_attention.py"]

#: Written in the course's Week 8 style: imports, layer norm, residual, one FFN.
CLIENT = """
import json
import torch
from week07_attention import fixed_example, attend

x, wq, wk, wv = fixed_example()
wq = wq.clone().requires_grad_(True)
head, (query, key, value, scaled, masked, weights) = attend(x, wq, wk, wv)
final = head[:, -1]


def layer_norm(t):
    return torch.nn.functional.layer_norm(t, t.shape[-1:])


normed, _ = attend(layer_norm(x), wq, wk, wv)
w_up = torch.full((2, 4), 0.5, dtype=torch.float64)
w_out = torch.full((4, 4), 0.25, dtype=torch.float64)
residual = x + torch.cat([normed, normed], dim=-1)  # [B, T, C]: width 2 -> 4 for the sketch
ffn = residual + torch.relu(residual @ w_out)  # one position-wise layer
ffn.sum().backward()
print(json.dumps({
    "final": final.tolist(),
    "dtypes": [str(t.dtype) for t in (x, wq, wk, wv)],
    "shapes": [list(t.shape) for t in (x, wq, wk, wv, head, weights)],
    "masked_future": masked[0, 0, 1].item(),
    "grad_nonzero": bool(wq.grad.abs().sum() > 0),
    "ffn_shape": list(ffn.shape),
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=["week07_attention.py", "course_examples"])
@pytest.mark.process
def test_a_week8_client_runs_on_the_script(script: Path, tmp_path: Path) -> None:
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "week07_attention.py").write_text(script.read_text(encoding="utf-8"))
    (folder / "week08_bridge.py").write_text(CLIENT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "week08_bridge.py"], cwd=folder, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)  # the import printed nothing else
    assert out["dtypes"] == ["torch.float64"] * 4
    assert out["shapes"] == [[2, 2, 4], [4, 2], [4, 2], [4, 2], [2, 2, 2], [2, 2, 2]]
    assert out["masked_future"] == float("-inf")
    assert out["grad_nonzero"] and out["ffn_shape"] == [2, 2, 4]
    for b, name in enumerate("AB"):
        want = published.row(f"experiment.h.{name}")
        diff = max(abs(g - w) for g, w in zip(out["final"][b], want.value, strict=True))
        assert diff <= want.tolerance, f"final row of {name}: max |diff| = {diff}"


def test_fixed_example_is_the_course_contract() -> None:
    from attnlab.lesson.course_api import fixed_example

    _, _, wk, _ = fixed_example()
    design = [[0.8, 0.0], [0.2, 0.2], [0.0, 0.1], [0.0, 0.0]]
    diff = (wk - 2**0.5 * torch.tensor(design, dtype=wk.dtype)).abs().max()
    assert diff < 1e-15, f"W_K is not the design ·√2: max |diff| = {diff}"

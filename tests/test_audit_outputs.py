"""Outputs the judge cannot compare with a reference are named, in one line, exit 2: complex,
sparse, nested, meta, a single number, far larger than attention returns (issue 33, point 5).

Audited in this process (``runner.audit`` with its in-process learner, as the zoo is): the
same checks run where the output is made and again in the judge, which a sandboxed test in
``test_audit_walls.py`` reaches past a learner's process that skips the first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from learner_files import head_source

from attnlab.audit.outcome import exit_code
from attnlab.audit.runner import audit

CASES = {
    "out + 7j": "a complex tensor (torch.complex64)",
    "out.to_sparse()": "a sparse tensor (torch.sparse_coo)",
    "out[0].to_sparse_csr()": "a sparse tensor (torch.sparse_csr)",
    "torch.nested.nested_tensor(list(out))": "a nested tensor",
    "out.to('meta')": "a tensor on the meta device",
    "out.sum()": "a single number (shape [])",
    "torch.zeros(out.size(0), out.size(1), 2**12)": "a tensor of shape [2, 2, 4096]",
}


@pytest.mark.parametrize("returned", CASES)
def test_an_output_the_audit_cannot_compare_is_named(tmp_path: Path, returned: str) -> None:
    path = tmp_path / "head.py"
    path.write_text(head_source(out=returned), encoding="utf-8")
    result = audit(path, "Head", "auto")
    assert result["status"] == "error" and exit_code(result) == 2, result
    said = result["error"]["en"]  # type: ignore[index]
    assert f"your module returned {CASES[returned]}" in said, said
    assert "the auditor failed" not in said and "\n" not in said
    assert "你的模块返回了" in result["error"]["zh"]  # type: ignore[index]


def test_the_right_output_still_passes(tmp_path: Path) -> None:
    path = tmp_path / "head.py"
    path.write_text(head_source(), encoding="utf-8")
    assert exit_code(audit(path, "Head", "auto")) == 0

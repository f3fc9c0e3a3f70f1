"""``attnlab audit`` locates every output difference at a stage: the first of the learner's
recorded intermediates (q, k, v, scores, weights, heads' outputs, concatenation, output
projection) that differs from the reference, the item that owns it, both values and the line
of the learner's file that made it; what the code does there is named only when it was checked.

The zoo files are audited in this process through the runner's ``audit()``, as in
``tests/test_audit.py``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from attnlab.audit.observe import forward
from attnlab.audit.runner import audit
from attnlab.audit.stages import match_columns

ZOO = Path(__file__).parent / "zoo"
BAD = sorted((ZOO / "bad").glob("*.py"))

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _target(path: Path) -> str:
    src = path.read_text(encoding="utf-8")
    factory = re.search(r"^def (make_\w+)", src, re.M)
    return factory.group(1) if factory else re.findall(r"^class (\w+)", src, re.M)[-1]


def _line_of(path: Path, marker: str) -> int:
    """The number of the last line of ``path`` that contains ``marker``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [n for n, text in enumerate(lines, start=1) if marker in text]
    assert found, f"{marker!r} is not in {path.name}"
    return found[-1]


def _texts(result: dict[str, Any]) -> list[str]:
    entries = [*result["items"], result["overall"]]
    return [e["evidence"][lang] for e in entries for lang in ("zh", "en")]


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_no_verdict_leaves_the_difference_unexplained(path: Path) -> None:
    result = audit(path, _target(path), "auto")
    assert result["status"] == "ok", result
    for text in _texts(result):
        assert "no item explains" not in text and "没有哪一项能解释" not in text, text
    failed = [i for i in result["items"] if i["status"] == "FAIL"]
    whole = result["overall"]
    if whole["status"] == "FAIL" and whole["finding"] == "output_differs" and not failed:
        assert "the difference comes after" in whole["evidence"]["en"], whole


#: file → (item that owns the bug, words of what the code does, a text of the line that made
#: the first differing stage's tensor).
LOCATED = {
    "heads_summed.py": (8, "summed over the head axis", ".sum(dim=1)"),
    "wo_twice.py": (8, "the output layer is applied twice", "return self.proj(y)"),
    "value_from_query.py": (2, "your v equals x @ W_Q", "v = self.W_query(x)"),
    "view_only_split_merge.py": (8, "viewed/reshaped straight to", "q = self.query(x).view"),
    "reshape_merge_no_transpose.py": (8, "without transpose(1, 2) first", ".reshape(B, T, C)"),
    "heads_reversed.py": (8, "in other columns than the split took", "outs[::-1]"),
    "heads_split_merge_mismatch.py": (8, "in other columns than the split took", "self.proj("),
}


@pytest.mark.parametrize("name", LOCATED)
def test_mutant_fails_at_its_stage_with_line_and_description(name: str) -> None:
    path = ZOO / "bad" / name
    item, words, marker = LOCATED[name]
    result = audit(path, _target(path), "auto")
    owner = result["items"][item - 1]
    assert owner["status"] == "FAIL", result["items"]
    en = owner["evidence"]["en"]
    assert words in en, en
    assert f"(line {_line_of(path, marker)})" in en, en
    assert f"（第 {_line_of(path, marker)} 行）" in owner["evidence"]["zh"]
    # Two values at the first differing index, the learner's and the reference's.
    assert re.search(r"= .+, the reference gives .+", en) or "agree with the reference" in en
    if result["overall"]["status"] == "NOT CHECKED":  # W_O unreadable: the located item decides
        assert result["overall"]["finding"] == "partial_reference", result["overall"]
    else:
        assert result["overall"]["status"] == "FAIL"
        assert f"(see item {item})" in result["overall"]["evidence"]["en"]
    # Nothing is named that the code does not do: these files have no torch.cat on time.
    if "torch.cat" not in path.read_text(encoding="utf-8"):
        assert all("torch.cat(..., dim=1)" not in t for t in _texts(result))
        assert all("concat_time_axis" not in i["mistakes"] for i in result["items"])


def test_residual_inside_is_located_after_the_output_projection() -> None:
    path = ZOO / "bad" / "residual_inside.py"
    result = audit(path, "MultiHeadAttention", "multihead")
    assert not [i for i in result["items"] if i["status"] == "FAIL"]
    en = result["overall"]["evidence"]["en"]
    assert "the difference comes after the output projection concat @ W_O" in en, en
    assert "the input is added back" in en, en
    assert f"(line {_line_of(path, 'return x + self.out(y)')})" in en, en
    # The stages seen equal to the reference let their items pass.
    assert result["items"][7]["status"] == "PASS", result["items"][7]


def test_merge_with_torch_cat_on_time_keeps_its_name() -> None:
    result = audit(ZOO / "bad" / "concat_time_mha.py", "MultiHeadAttention", "multihead")
    assert "concat_time_axis" in result["items"][7]["mistakes"], result["items"][7]


def test_no_output_projection_does_not_show_one_number_as_both_values() -> None:
    result = audit(ZOO / "bad" / "no_wo.py", "MultiHeadAttention", "multihead")
    en = result["items"][7]["evidence"]["en"]
    found = re.search(r"= (\[[^\]]*\]), the right value is (\[[^\]]*\])", en)
    assert found is None or found.group(1) != found.group(2), en
    assert "no W_O applied" in en, en


class _Head(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x @ x.transpose(-2, -1) / math.sqrt(x.size(-1))  # marker: scores
        return torch.softmax(s, dim=-1) @ x


def test_recorded_calls_carry_the_line_of_the_learners_file() -> None:
    path = Path(__file__)
    run = forward(_Head(), torch.randn(2, 3, 4), path)
    want = _line_of(path, "# marker" + ": scores")  # split: this line must not match
    matmuls = run.rec.of("matmul")
    assert matmuls[0].line == want, [c.line for c in matmuls]
    assert run.rec.of("softmax")[0].line == want + 1
    outside = forward(_Head(), torch.randn(2, 3, 4), path.with_name("elsewhere.py"))
    assert all(c.line is None for c in outside.rec.calls)


def test_match_columns_finds_a_permutation_and_refuses_a_missing_column() -> None:
    big = torch.randn(6, 5, generator=torch.Generator().manual_seed(3))
    order = [3, 0, 4, 1, 2]
    assert match_columns(big[:, order], big) == order
    assert match_columns(big, big) == list(range(5))
    other = big.clone()
    other[:, 2] += 1.0
    assert match_columns(other, big) is None


PRESCALED = """
import math
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.h = num_heads
        self.query = nn.Linear(embed_dim, embed_dim, bias=False)
        self.key = nn.Linear(embed_dim, embed_dim, bias=False)
        self.value = nn.Linear(embed_dim, embed_dim, bias=False)
        self.proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        d = C // self.h
        layers = (self.query, self.key, self.value)
        q, k, v = (m(x).view(B, T, self.h, d).transpose(1, 2) for m in layers)
        q = q * d ** -0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        s = (q @ k.transpose(-2, -1)).masked_fill(future, float("-inf"))
        y = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
        return {tail}
"""


def test_a_scale_carried_by_q_is_not_a_projection_difference(tmp_path: Path) -> None:
    good = tmp_path / "prescaled.py"
    good.write_text(PRESCALED.format(tail="self.proj(y)"), encoding="utf-8")
    assert audit(good, "MultiHeadAttention", "multihead")["overall"]["status"] == "PASS"
    bad = tmp_path / "prescaled_twice.py"
    bad.write_text(PRESCALED.format(tail="self.proj(self.proj(y))"), encoding="utf-8")
    result = audit(bad, "MultiHeadAttention", "multihead")
    failed = {i["item"]: i["evidence"]["en"] for i in result["items"] if i["status"] == "FAIL"}
    assert list(failed) == [8], failed
    assert "the output layer is applied twice" in failed[8]


def test_stages_hidden_inside_sdpa_name_no_item() -> None:
    """SDPA hides the scores, mask and weights: a difference first seen in its output may start
    in any of them, so the heads' outputs' item does not fail for it."""
    result = audit(ZOO / "bad" / "sdpa_float_mask.py", _target(ZOO / "bad" / "sdpa_float_mask.py"),
                   "auto")  # fmt: skip
    statuses = {i["item"]: i["status"] for i in result["items"]}
    assert statuses[5] == "FAIL" and statuses[7] != "FAIL", result["items"]
    assert "(see item 5)" in result["overall"]["evidence"]["en"]


def test_nan_keeps_its_item_and_a_row_shift_is_no_scale_difference() -> None:
    nan = audit(ZOO / "bad" / "nan_mask_fill.py", _target(ZOO / "bad" / "nan_mask_fill.py"), "auto")
    assert "(see item 5)" in nan["overall"]["evidence"]["en"], nan["overall"]
    assert nan["items"][5]["status"] == "NOT CHECKED", nan["items"][5]
    # exp(s - s.max()): the softmax input is shifted by a constant, which changes nothing.
    path = ZOO / "bad" / "softmax_whole_sum.py"
    whole = audit(path, _target(path), "auto")
    assert whole["items"][3]["status"] != "FAIL", whole["items"][3]
    assert "(see item 6)" in whole["overall"]["evidence"]["en"], whole["overall"]


def test_result_carries_the_stage_tables_for_the_figure() -> None:
    bad = audit(ZOO / "bad" / "heads_summed.py", "MultiHeadAttention", "multihead")
    stage = bad["stage"]
    assert stage["stage"] == "concat" and stage["item"] == 8, stage
    assert stage["line"] == _line_of(ZOO / "bad" / "heads_summed.py", ".sum(dim=1)")
    assert (len(stage["got"]), len(stage["got"][0])) == (5, 4)  # [T, d_head]: heads summed
    assert (len(stage["want"]), len(stage["want"][0])) == (5, 12)  # [T, C]
    good = audit(ZOO / "good" / "lesson_mha.py", "MultiHeadAttention", "multihead")
    assert good["stage"] is None


def test_figure_outlines_exactly_the_cells_that_differ() -> None:
    from attnlab.figures.audit_stage import DIFF_EDGE, plot_stage

    stage = audit(ZOO / "bad" / "zero_fill.py", "AttentionHead", "head")["stage"]
    assert stage["stage"] == "masked_scores", stage
    T = len(stage["want"])
    future = sum(v is None for row in stage["want"] for v in row)
    assert future == T * (T - 1) // 2  # the reference's −∞ cells
    fig = plot_stage(stage, "en")
    mine, ref = fig.axes[:2]
    edge = tuple(int(DIFF_EDGE[i : i + 2], 16) / 255 for i in (1, 3, 5))
    outlined = [p for p in mine.patches if p.get_edgecolor()[:3] == pytest.approx(edge)]
    assert len(outlined) == future  # a 0 where the reference has −∞: every future cell
    assert "line" in mine.get_title() and ref.get_title() == "reference"


@pytest.mark.usefixtures("judge_here")
def test_cli_figure_is_written_or_says_why_not(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    runner = CliRunner()
    out = tmp_path / "stage.png"
    bad = runner.invoke(
        app, ["audit", f"{ZOO / 'bad' / 'zero_fill.py'}:AttentionHead", "--figure", str(out),
              "--lang", "en"],
    )  # fmt: skip
    assert bad.exit_code == 1, bad.output
    assert f"figure written: {out}" in bad.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    none = tmp_path / "none.png"
    good = runner.invoke(
        app, ["audit", f"{ZOO / 'good' / 'lesson_head.py'}:AttentionHead", "--figure", str(none),
              "--lang", "en"],
    )  # fmt: skip
    assert good.exit_code == 0, good.output
    assert "no figure written" in good.output and not none.exists()


SCALED_V = """
import math
import torch
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        v = v / math.sqrt(q.size(-1))  # the scale moved from the scores to the values
        s = (q @ k.transpose(-2, -1)).masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        return s.softmax(-1) @ v
"""


def test_stages_follow_the_data_the_scores_before_the_values(tmp_path: Path) -> None:
    """v is read only by weights @ v: with unscaled scores and scaled values, the first stage
    that differs is the scaled scores (item 4), not v."""
    path = tmp_path / "scaled_v.py"
    path.write_text(SCALED_V, encoding="utf-8")
    result = audit(path, "AttentionHead", "head")
    assert result["stage"]["stage"] == "scaled_scores", result["stage"]
    assert result["items"][3]["status"] == "FAIL", result["items"][3]
    assert result["items"][1]["status"] != "FAIL", result["items"][1]

"""``attnlab mistakes``: the catalogue listed, and one mistake's numbers beside the right ones."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.core.steps import lesson_input
from attnlab.lesson import numbers
from attnlab.mistakes import catalogue, diagnosis

runner = CliRunner()


def test_list_names_every_mistake_in_both_languages() -> None:
    zh = runner.invoke(app, ["mistakes"])
    en = runner.invoke(app, ["--lang", "en", "mistakes"])
    assert zh.exit_code == en.exit_code == 0
    for m in catalogue.CATALOGUE:
        assert m.name in zh.output and m.title["zh"] in zh.output
        assert m.title["en"] in en.output
    data = json.loads(runner.invoke(app, ["mistakes", "--json"]).output)
    assert [d["name"] for d in data] == [m.name for m in catalogue.CATALOGUE]


@pytest.mark.parametrize("m", catalogue.CATALOGUE, ids=lambda m: m.name)
def test_one_mistake_shows_its_own_numbers(m: catalogue.Mistake) -> None:
    result = runner.invoke(app, ["--lang", "en", "mistakes", m.name])
    assert result.exit_code == 0, result.output
    assert f"wrong: {m.code}" in result.output and f"right: {m.fix}" in result.output
    inp = diagnosis.multihead_example() if m.multihead_only else lesson_input()
    out = diagnosis.mistake_stages(m, inp)["output"]
    final_b = ", ".join(f"{v:.4f}" for v in out[1, -1].tolist())
    if not diagnosis.values_match(out, diagnosis.correct_stages(inp)["output"], 1e-9):
        assert f"[{final_b}]" in result.output


def test_no_mask_shows_prompt_a_reading_its_future() -> None:
    # Without the mask, prompt A's first query (我) gives weight to 喜欢, its future: the
    # softmax of its whole scaled row [0.4, 0.2].
    result = runner.invoke(app, ["--lang", "en", "mistakes", "no_mask"])
    weights = diagnosis.mistake_stages("no_mask")["weights"][0, 0]
    assert f"[{weights[0]:.4f}, {weights[1]:.4f}]" in result.output
    unmasked = torch.softmax(numbers.tensor("scaled_scores.A[0]"), dim=-1)
    assert torch.allclose(weights, unmasked, rtol=0, atol=1e-12) and weights[1] > 0


def test_unknown_name_one_line_exit_2() -> None:
    result = runner.invoke(app, ["mistakes", "nope"])
    assert result.exit_code == 2
    assert "no mistake called 'nope'; known: token_ids_as_x" in result.output
    assert len(result.output.strip().splitlines()) == 1

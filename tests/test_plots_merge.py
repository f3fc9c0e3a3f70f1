"""The multi-head end of ``attnlab plot chain``: each head's output, their concatenation, W_O
and the result, drawn from the pipeline and checked against a plain reference computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab.figures import files, input_source, lesson_source, plot_merge
from attnlab.figures.files import make_figures
from attnlab.inputs.model import load_input, parse_input
from attnlab.text.errors import InputError

TWO_HEADS = Path(__file__).resolve().parents[1] / "examples" / "two-heads.toml"


def panels(fig) -> dict[str, np.ndarray]:
    """Each heatmap's drawn array, keyed by the first line of its title."""
    return {
        ax.get_title().splitlines()[0]: ax.images[0].get_array().data
        for ax in fig.axes
        if ax.images and ax.get_label() != "<colorbar>"
    }


def reference(lab) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Each head's causal attention output and ``concat @ W_O``, written out without the
    pipeline: per head, slice the projections, softmax the masked scaled scores."""
    C, H = lab.x.size(-1), lab.num_heads
    d = C // H
    T = lab.x.size(1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    heads = []
    for h in range(H):
        cols = slice(h * d, (h + 1) * d)
        q, k, v = (lab.x @ w[:, cols] for w in (lab.w_q, lab.w_k, lab.w_v))  # [B, T, d]
        scores = (q @ k.transpose(-2, -1) / d**0.5).masked_fill(future, float("-inf"))
        heads.append(scores.softmax(dim=-1) @ v)  # [B, T, d]
    return heads, torch.cat(heads, dim=-1) @ lab.w_o


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_merge_panels_are_heads_concat_w_o_and_output(lang: str) -> None:
    lab = load_input(TWO_HEADS)
    drawn = panels(plot_merge(input_source(lab), b=0, lang=lang))
    heads, output = reference(lab)
    head_titles = {"en": "head {} output", "zh": "Head {} 的输出"}[lang]
    names = [f"10. {head_titles.format(1)}", f"11. {head_titles.format(2)}", "12. concat",
             "13. W_O", "14. output"]  # fmt: skip
    assert list(drawn) == names
    expected = [heads[0][0], heads[1][0], torch.cat([heads[0][0], heads[1][0]], -1), lab.w_o,
                output[0]]  # fmt: skip
    for name, want in zip(names, expected, strict=True):
        diff = np.abs(drawn[name] - want.numpy()).max()
        assert diff < 1e-9, f"{name}: max |diff| = {diff}"
    assert drawn["12. concat"].shape == (3, 4)  # [T, C]
    assert drawn["13. W_O"].shape == (4, 4)  # [C, C]


def test_without_w_o_the_panel_is_the_identity_and_says_so() -> None:
    lab = load_input(TWO_HEADS)
    data = {"x": lab.x.tolist(), "w_q": lab.w_q.tolist(), "w_k": lab.w_k.tolist(),
            "w_v": lab.w_v.tolist(), "num_heads": 2}  # fmt: skip
    fig = plot_merge(input_source(parse_input(data, source="plain.json")), lang="en")
    w_o = next(ax for ax in fig.axes if ax.get_title().startswith("13. W_O"))
    assert np.array_equal(w_o.images[0].get_array().data, np.eye(4))
    assert "identity" in w_o.get_title()
    drawn = panels(fig)
    assert np.array_equal(drawn["14. output"], drawn["12. concat"])


def test_multi_head_chain_ends_with_the_merge_figure() -> None:
    source = input_source(load_input(TWO_HEADS))
    figures = make_figures("chain", source, "en")
    assert [stem for stem, _ in figures] == [
        "chain-two-heads-A-h1",
        "chain-two-heads-A-h2",
        "chain-two-heads-A-merge",
    ]
    assert figures[-1][1].get_suptitle().startswith("Prompt A [我, 喜欢, 猫]: the 2 heads'")


def test_merge_needs_heads() -> None:
    with pytest.raises(ValueError, match="plot_merge needs multi-head stages"):
        plot_merge(lesson_source("en"))


def test_the_merge_counts_towards_the_figure_limit(monkeypatch) -> None:
    monkeypatch.setattr(files, "MAX_FIGURES", 2)
    source = input_source(load_input(TWO_HEADS))  # one prompt, two heads: 2 + the merge
    message = r"chain: 3 figures \(one per prompt and head, plus each prompt's merge\)"
    with pytest.raises(InputError, match=message):
        make_figures("chain", source, "en")

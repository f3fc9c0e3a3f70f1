"""What the figures draw: the image arrays, labels and annotations against the pipeline and the
lesson's published numbers (not just "no exception")."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import published
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.text import Text
from tiers import examples

from attnlab.core.pipeline import causal_mask, lesson_stages, multi_head_stages
from attnlab.figures import (
    cost_data,
    input_source,
    labels,
    lesson_source,
    mask_data,
    plot_chain,
    plot_cost,
    plot_mask,
    plot_scale,
    plot_weights,
    scale_data,
)
from attnlab.figures.effects import ScaleData
from attnlab.figures.files import make_figures
from attnlab.inputs.model import parse_input
from attnlab.text.errors import InputError

FUTURE_2 = ~causal_mask(2).numpy()  # [[False, True], [False, False]]


def heatmap_axes(fig):
    """Axes that hold a heatmap (the colour bar's axes hold none)."""
    return [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]


def assert_image_is(image, expected: torch.Tensor, future: np.ndarray) -> None:
    """The drawn array equals ``expected`` where visible and is masked exactly at ``future``."""
    array = image.get_array()
    assert np.array_equal(np.ma.getmaskarray(array), future), np.ma.getmaskarray(array)
    diff = np.abs(array.data[~future] - expected.numpy()[~future]).max()
    assert diff < 1e-12, f"max |diff| = {diff}"


def cell_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


@pytest.fixture(scope="module")
def weights_zh():
    return plot_weights(lesson_source("zh"), lang="zh")


def test_weights_image_is_the_pipeline_weights(weights_zh) -> None:
    axes = heatmap_axes(weights_zh)
    weights = lesson_stages().weights  # [B, T, T]
    assert len(axes) == 2  # A and B side by side
    for b, ax in enumerate(axes):
        assert_image_is(ax.images[0], weights[b], FUTURE_2)
        assert ax.images[0].norm.vmin == 0.0 and ax.images[0].norm.vmax == 1.0  # shared scale
    assert axes[0].get_position().y0 == pytest.approx(axes[1].get_position().y0)


def test_weights_cells_carry_the_lesson_values(weights_zh) -> None:
    a, b = heatmap_axes(weights_zh)
    assert cell_texts(a) == ["1", "已屏蔽", "0.599", "0.401"]
    assert cell_texts(b) == ["1", "已屏蔽", "0.426", "0.574"]


def test_weights_hatch_exactly_the_future_cells(weights_zh) -> None:
    for ax in heatmap_axes(weights_zh):
        hatched = [p for p in ax.patches if p.get_hatch()]
        corners = sorted((round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in hatched)
        assert corners == [(1, 0)]  # (column, row): key t=1 for query t=0 only


@pytest.mark.parametrize(
    ("lang", "tokens", "masked"),
    [("zh", ["t=0 我", "t=1 喜欢"], "已屏蔽"), ("en", ["t=0 you", "t=1 like"], "masked")],
)
def test_weights_tick_labels_are_the_tokens(lang, tokens, masked) -> None:
    fig = plot_weights(lesson_source(lang), lang=lang)
    ax = heatmap_axes(fig)[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == tokens
    assert [t.get_text() for t in ax.get_yticklabels()] == tokens
    assert masked in cell_texts(ax)


def multi_head_input():
    gen = torch.Generator().manual_seed(3)
    data = {
        "x": torch.randn(2, 3, 4, generator=gen).tolist(),
        **{k: torch.randn(4, 4, generator=gen).tolist() for k in ("w_q", "w_k", "w_v")},
        "num_heads": 2,
        "tokens": [["a", "b", "c"], ["d", "e", "f"]],
    }
    return parse_input(data, source="mine.json")


def test_multi_head_weights_grid_is_batch_by_head() -> None:
    lab = multi_head_input()
    fig = plot_weights(input_source(lab), lang="en")
    expected = multi_head_stages(lab.x, lab.w_q, lab.w_k, lab.w_v, 2).weights  # [B, H, T, T]
    axes = heatmap_axes(fig)
    assert len(axes) == 4
    future = ~causal_mask(3).numpy()
    for i, ax in enumerate(axes):
        b, h = divmod(i, 2)
        assert_image_is(ax.images[0], expected[b, h], future)
        assert ax.get_title().endswith(f"Head {h + 1}") and f"Prompt {'AB'[b]}" in ax.get_title()
    assert [t.get_text() for t in axes[2].get_yticklabels()] == ["t=0 d", "t=1 e", "t=2 f"]


def test_weights_of_a_selected_prompt_only() -> None:
    fig = plot_weights(lesson_source("zh").select([1]), lang="zh")
    (ax,) = heatmap_axes(fig)
    assert_image_is(ax.images[0], lesson_stages().weights[1], FUTURE_2)


def test_chain_draws_every_stage_in_order() -> None:
    s = lesson_stages()
    fig = plot_chain(lesson_source("en"), b=0, lang="en")
    axes = heatmap_axes(fig)
    names = ["x", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights"]
    names.append("output")
    assert [ax.get_title().splitlines()[0] for ax in axes] == [
        f"{i}. {n}" for i, n in enumerate(names, 1)
    ]
    for ax, name in zip(axes, names, strict=True):
        hidden = FUTURE_2 if name in ("masked_scores", "weights") else np.zeros((2, 0), bool)
        expected = getattr(s, name)[0]
        if hidden.size:
            assert_image_is(ax.images[0], expected, hidden)
        else:
            drawn = ax.images[0].get_array()
            assert not np.ma.getmaskarray(drawn).any()
            assert np.abs(drawn.data - expected.numpy()).max() < 1e-12
    assert "[B, T, C]\n= [2, 2, 4]" == axes[0].get_xlabel()
    assert "[B, T_query, T_key]\n= [2, 2, 2]" == axes[7].get_xlabel()
    assert cell_texts(axes[6]) == ["0.4", "−∞", "0.8", "0.4"]  # section 11's masked scores A
    assert cell_texts(axes[7]) == ["1", "0", "0.599", "0.401"]
    assert cell_texts(axes[4])[2] == "1.131"  # section 4: [1,1]·[1.131,0]


def test_chain_of_prompt_b_with_a_head() -> None:
    fig = plot_chain(lesson_source("zh"), b=1, lang="zh")
    axes = heatmap_axes(fig)
    assert cell_texts(axes[7]) == ["1", "0", "0.426", "0.574"]
    assert cell_texts(axes[8])[2:] == ["-0.426", "0.574"]  # section 6: B's final output row
    lab = multi_head_input()
    fig = plot_chain(input_source(lab), b=1, h=1, lang="en")
    expected = multi_head_stages(lab.x, lab.w_q, lab.w_k, lab.w_v, 2)
    assert_image_is(heatmap_axes(fig)[7].images[0], expected.weights[1, 1], ~causal_mask(3).numpy())
    assert fig.get_suptitle().startswith("Prompt B [d, e, f], head 2")


@pytest.fixture(scope="module")
def small_scale() -> ScaleData:
    return scale_data(d_values=(1, 4, 16, 64, 256), tokens=16, samples=64)


def test_scale_unscaled_std_grows_like_sqrt_dk(small_scale) -> None:
    for d, raw, scaled in zip(
        small_scale.d_k, small_scale.raw_std, small_scale.scaled_std, strict=True
    ):
        assert raw / math.sqrt(d) == pytest.approx(1.0, rel=0.15), (d, raw)
        assert scaled == pytest.approx(1.0, rel=0.15), (d, scaled)


def test_scale_unscaled_softmax_heads_to_one_hot(small_scale) -> None:
    unscaled, scaled = small_scale.unscaled_max_weight, small_scale.scaled_max_weight
    assert unscaled == sorted(unscaled) and unscaled[-1] > 0.85
    assert max(scaled) < 0.4 and max(scaled) - min(scaled) < 0.15


def test_scale_figure_plots_the_measured_data(small_scale) -> None:
    fig = plot_scale(small_scale, lang="zh")
    left, right = fig.axes
    assert list(left.lines[0].get_ydata()) == small_scale.raw_std
    assert list(left.lines[1].get_ydata()) == small_scale.scaled_std
    assert list(right.lines[0].get_ydata()) == small_scale.unscaled_max_weight
    assert list(left.lines[0].get_xdata()) == [1, 4, 16, 64, 256]


def test_mask_bars_are_the_lesson_values() -> None:
    data, zero_fill = mask_data(), published.row("mask_demo.zero_fill")
    want = torch.tensor(zero_fill.value, dtype=torch.float64)
    assert torch.allclose(data.zero_fill, want, rtol=0, atol=zero_fill.tolerance)
    assert data.neg_inf_fill.tolist() == published.row("mask_demo.neg_inf_fill").value
    fig = plot_mask(data, lang="en")
    wrong, right = fig.axes
    assert [p.get_height() for p in wrong.patches] == data.zero_fill.tolist()
    assert [p.get_height() for p in right.patches] == [1.0, 0.0]
    assert [t.get_text() for t in wrong.texts] == [published.text(v, 3) for v in zero_fill.value]
    assert [t.get_text() for t in right.texts] == ["1", "0"]
    assert "softmax([0.2, 0])" in wrong.get_title()
    assert "softmax([0.2, −∞])" in right.get_title()


def test_cost_curve_is_b_heads_t_squared() -> None:
    data = cost_data(tokens=(2, 4, 8, 1024, 16384))
    fig = plot_cost(data, lang="en")
    (ax,) = fig.axes
    assert list(ax.lines[0].get_ydata()) == [2 * 2 * t * t for t in (2, 4, 8, 1024, 16384)]
    assert list(ax.lines[1].get_ydata()) == [t * t for t in (2, 4, 8, 1024, 16384)]
    short, long = published.row("cost.elements_short"), published.row("cost.elements_long")
    growth = published.row("cost.growth_short_to_long")
    assert list(ax.lines[2].get_ydata()) == [short.value, long.value]
    texts = [f"T=2: {short.text}", f"T=1000: {long.text}  (×{growth.text})"]
    assert [t.get_text() for t in ax.texts] == texts
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def inside(inner, outer) -> bool:
    return (inner.x0 >= outer.x0 and inner.y0 >= outer.y0
            and inner.x1 <= outer.x1 and inner.y1 <= outer.y1)  # fmt: skip


def test_cost_annotations_stay_inside_the_axes() -> None:
    fig = plot_cost(lang="en")  # the CLI's figure: T up to 16384, the long T=1000 label
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    assert len(ax.texts) == 2
    for note in ax.texts:  # each label with its arrow
        box = note.get_window_extent(renderer)
        assert inside(box, ax.bbox), (note.get_text(), box, ax.bbox)
    drawn = ax.get_tightbbox(renderer)  # everything the axes draw: ticks, labels, legend
    assert inside(drawn, fig.bbox), (drawn, fig.bbox)


def test_english_figures_use_ascii_brackets_and_punctuation(small_scale) -> None:
    wide = {c for c in "（）【】：，；、。" if unicodedata.east_asian_width(c) in "FW"}
    assert len(wide) == 9  # the check below would see them
    for key, value in labels._TEXT["en"].items():
        assert not any(unicodedata.east_asian_width(c) in "FW" for c in value), key
    for fig in (plot_weights(lesson_source("en"), lang="en"), plot_chain(lesson_source("en"),
                lang="en"), plot_scale(small_scale, lang="en"), plot_mask(lang="en"),
                plot_cost(lang="en")):  # fmt: skip
        drawn = "".join(t.get_text() for t in fig.findobj(Text))
        assert not {c for c in drawn if unicodedata.east_asian_width(c) in "FW"}, drawn


def random_input(B: int, T: int, C: int, heads: int | None, seed: int):
    gen = torch.Generator().manual_seed(seed)
    width = C if heads else 2
    data = {
        "x": torch.randn(B, T, C, generator=gen).tolist(),
        **{k: torch.randn(C, width, generator=gen).tolist() for k in ("w_q", "w_k", "w_v")},
    }
    if heads:
        data["num_heads"] = heads
    return parse_input(data, source="random.json")


@given(
    B=st.integers(1, 2),
    T=st.integers(1, 5),
    heads=st.sampled_from([None, 1, 2]),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=examples(6))
def test_every_panel_is_the_pipeline_and_masks_exactly_the_future(B, T, heads, seed) -> None:
    lab = random_input(B, T, 4, heads, seed)
    source = input_source(lab)
    fig = plot_weights(source, lang="en")
    weights = lab.stages().weights  # [B, T, T] or [B, n_head, T, T]
    panels = [weights[b] for b in range(B)] if heads is None else [
        weights[b, h] for b in range(B) for h in range(heads)]  # fmt: skip
    future = ~causal_mask(T).numpy()
    axes = heatmap_axes(fig)
    assert len(axes) == len(panels)
    for ax, expected in zip(axes, panels, strict=True):
        assert_image_is(ax.images[0], expected, future)
        assert cell_texts(ax).count("masked") == int(future.sum())


def test_too_wide_or_too_many_panels_are_refused() -> None:
    with pytest.raises(InputError, match=r"x is \[B, T, C\] = \[1, 2, 33\], too large to draw"):
        input_source(random_input(1, 2, 33, None, 0))
    many = input_source(random_input(9, 2, 4, 2, 0))  # 9 prompts × 2 heads = 18 panels
    with pytest.raises(InputError, match=r"18 panels .*at most 16.*--prompt"):
        make_figures("weights", many, "en")
    assert len(make_figures("weights", many.select([3]), "en")) == 1

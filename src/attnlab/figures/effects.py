"""Two effects the lesson argues for, measured and drawn: ÷√d_k (§8) and the −∞ fill (§11)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from matplotlib.figure import Figure

from attnlab.core.pipeline import attend
from attnlab.figures.heatmap import MASKED_FILL, MASKED_HATCH, new_figure
from attnlab.figures.labels import text, token_labels
from attnlab.lesson import numbers
from attnlab.text.fmt import cell

#: Head widths measured by the scale figure: 1, 2, 4, ..., 512.
SCALE_D_K: tuple[int, ...] = tuple(2**i for i in range(10))
#: Dark blue and dark orange (ColorBrewer Dark2-like): distinct in colour and in greyscale;
#: the two series also differ in marker and line style.
UNSCALED_STYLE: dict[str, Any] = {"color": "#08519c", "marker": "o", "linestyle": "-"}
SCALED_STYLE: dict[str, Any] = {"color": "#d95f02", "marker": "s", "linestyle": "--"}
REFERENCE_STYLE: dict[str, Any] = {"color": "#777777", "linestyle": ":", "linewidth": 1.5}
THEORY_STYLE: dict[str, Any] = {
    "color": "#c6c6c6",
    "linewidth": 8,
    "solid_capstyle": "round",
    "zorder": 1,
}
#: A future key that still receives weight (the 0-fill mistake).
LEAK_COLOUR = "#d95f02"


@dataclass(frozen=True)
class ScaleData:
    """Section 8 measured on random unit-variance q and k, one entry per ``d_k``.

    ``*_std`` is the standard deviation of all scores; ``*_max_weight`` is the mean (over
    samples) of the largest softmax weight of the last query row, which sees ``tokens`` keys.
    """

    d_k: list[int]
    raw_std: list[float]
    scaled_std: list[float]
    unscaled_max_weight: list[float]
    scaled_max_weight: list[float]
    tokens: int
    samples: int


def scale_data(
    d_values: tuple[int, ...] = SCALE_D_K, tokens: int = 16, samples: int = 256, seed: int = 0
) -> ScaleData:
    """Measure score spread and softmax peakiness with and without ÷√d_k, via the pipeline."""
    gen = torch.Generator().manual_seed(seed)
    rows: list[tuple[float, float, float, float]] = []
    for d in d_values:
        q = torch.randn(samples, tokens, d, generator=gen, dtype=torch.float64)  # [N, T, d_k]
        k = torch.randn(samples, tokens, d, generator=gen, dtype=torch.float64)  # [N, T, d_k]
        scaled = attend(q, k, k)
        # Multiplying q by √d_k cancels the pipeline's ÷√d_k, so this softmax sees raw scores.
        unscaled = attend(q * math.sqrt(d), k, k)
        rows.append(
            (
                float(scaled.raw_scores.std()),
                float(scaled.scaled_scores.std()),
                float(unscaled.weights[:, -1].amax(dim=-1).mean()),  # last query row
                float(scaled.weights[:, -1].amax(dim=-1).mean()),
            )
        )
    raw_std, scaled_std, unscaled_max, scaled_max = (list(col) for col in zip(*rows, strict=True))
    return ScaleData(list(d_values), raw_std, scaled_std, unscaled_max, scaled_max, tokens, samples)


def plot_scale(data: ScaleData | None = None, lang: str = "zh") -> Figure:
    """Left: score std against d_k (raw grows like √d_k, scaled stays near 1). Right: the mean
    largest softmax weight (raw heads to one-hot, scaled stays put)."""
    data = scale_data() if data is None else data
    fig = new_figure(11.0, 4.6)
    left, right = fig.subplots(1, 2)
    d = data.d_k
    left.plot(d, data.raw_std, label=text("raw_std", lang), **UNSCALED_STYLE)
    left.plot(d, data.scaled_std, label=text("scaled_std", lang), **SCALED_STYLE)
    # A wide pale band under the measured line: theory and measurement should coincide.
    left.plot(d, [math.sqrt(v) for v in d], label=text("sqrt_theory", lang), **THEORY_STYLE)
    left.set_yscale("log", base=2)
    left.set_yticks([1, 2, 4, 8, 16, 32], labels=["1", "2", "4", "8", "16", "32"])
    left.set_ylabel(text("score_std", lang))
    left.set_title(text("scale_left", lang))
    right.plot(d, data.unscaled_max_weight, label=text("raw_softmax", lang), **UNSCALED_STYLE)
    right.plot(d, data.scaled_max_weight, label=text("scaled_softmax", lang), **SCALED_STYLE)
    right.axhline(1.0 / data.tokens, label=text("uniform", lang, T=data.tokens), **REFERENCE_STYLE)
    right.set_ylim(0, 1.05)
    right.set_ylabel(text("max_weight", lang, T=data.tokens))
    right.set_title(text("scale_right", lang))
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(d, labels=[str(v) for v in d])
        ax.set_xlabel("d_k")
        ax.grid(True, color="#dddddd", linewidth=0.8)
        ax.legend(fontsize=9, loc="upper left")
    fig.suptitle(text("scale_title", lang, N=data.samples), fontsize=12)
    return fig


@dataclass(frozen=True)
class MaskData:
    """Section 11: the scaled row at t=0 and its softmax with the future filled by 0 or −∞."""

    row: torch.Tensor  # [T_key]
    future: torch.Tensor  # [T_key] bool, True where the key lies in the query's future
    zero_fill: torch.Tensor  # [T_key] softmax with future scores set to 0 (the mistake)
    neg_inf_fill: torch.Tensor  # [T_key] softmax with future scores set to −∞ (the pipeline's way)


def mask_data() -> MaskData:
    """Section 11's row (query t=0) and its two fills, from :mod:`attnlab.lesson.numbers`."""
    return MaskData(
        row=numbers.tensor("mask_demo.row"),
        future=numbers.tensor("mask_demo.future"),
        zero_fill=numbers.tensor("mask_demo.zero_fill"),
        neg_inf_fill=numbers.tensor("mask_demo.neg_inf_fill"),
    )


def plot_mask(data: MaskData | None = None, lang: str = "zh") -> Figure:
    """Bars of the two softmax results: a 0 fill still hands weight to the future, −∞ does not."""
    data = mask_data() if data is None else data
    fig = new_figure(9.0, 4.2)
    axes = fig.subplots(1, 2, sharey=True)
    labels = [
        f"{label}\n({text('future_key' if hidden else 'visible_key', lang)})"
        for label, hidden in zip(token_labels(None, data.row.numel()), data.future, strict=True)
    ]
    cases = (("zero_fill", data.zero_fill, "0"), ("neg_inf_fill", data.neg_inf_fill, "−∞"))
    for ax, (key, weights, fill) in zip(axes, cases, strict=True):
        filled = [fill if hidden else cell(float(s)) for s, hidden in
                  zip(data.row, data.future, strict=True)]  # fmt: skip
        bars = ax.bar(range(len(labels)), weights.tolist(), color="#3182bd", width=0.6)
        for bar, hidden, w in zip(bars, data.future, weights, strict=True):
            if hidden and float(w) > 0:  # weight leaking into the future: the mistake, in orange
                bar.set(facecolor=LEAK_COLOUR, edgecolor="white", hatch="///")
            elif hidden:
                bar.set(facecolor=MASKED_FILL, edgecolor=MASKED_HATCH, hatch="///")
        ax.bar_label(bars, labels=[cell(float(w)) for w in weights], fontsize=11, padding=3)
        ax.set_xticks(range(len(labels)), labels=labels)
        ax.set_ylim(0, 1.15)
        ax.set_title(text(key, lang) + f"\nsoftmax([{', '.join(filled)}])", fontsize=11)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel(text("weight", lang))
    row = ", ".join(cell(float(s)) for s in data.row)
    fig.suptitle(text("mask_title", lang, row=row), fontsize=12)
    fig.supxlabel(text("mask_caption", lang), fontsize=10, color="#444444")
    return fig

"""The issue's performance bars, read off one run's rows (reported, never asserted in tests)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.bench.results import BenchRow
from attnlab.bench.runner import BenchResult
from attnlab.bench.workloads import FORWARD, FORWARD_BACKWARD

BAR_T = 4096  # the sweep length the tiled kernel's time bars are set at


@dataclass(frozen=True)
class Bar:
    """One bar: what is compared (``{"zh": ..., "en": ...}``), this run's value, the limit, and
    whether it holds (``ok`` is None when this run did not measure it, or when the value is only
    reported)."""

    what: dict[str, str]
    value: float | None
    limit: str
    ok: bool | None


def _ok_row(rows: list[BenchRow], section: str, impl: str, mode: str, T: int | None = None):
    """The measured row of ``impl`` (at ``T`` if given), or None if absent or not measured."""
    for row in rows:
        if (row.section, row.impl, row.mode) == (section, impl, mode) and T in (None, row.T):
            return row if row.status == "ok" else None
    return None


def _ratio_bar(what: dict[str, str], row: BenchRow | None, limit: float) -> Bar:
    ratio = row.ratio_to_sdpa if row else None
    return Bar(what, ratio, f"≤ {limit:g}", None if ratio is None else ratio <= limit)


def _speed_bar(result: BenchResult) -> Bar:
    fused = _ok_row(result.rows, "standard", "csa_sdpa", FORWARD)
    weights = _ok_row(result.rows, "standard", "torch_mha_weights", FORWARD)
    ratio = None
    if fused and weights and fused.median_ms and weights.median_ms:
        ratio = fused.median_ms / weights.median_ms
    return Bar(
        {
            "zh": "CausalSelfAttention(sdpa) ÷ nn.MultiheadAttention(need_weights=True)，标准形状，"
            "forward",
            "en": "CausalSelfAttention(sdpa) / nn.MultiheadAttention(need_weights=True), standard, "
            "forward",
        },
        ratio,
        "< 1",
        None if ratio is None else ratio < 1,
    )


def _memory_bars(result: BenchResult) -> list[Bar]:
    low, high = result.config.fit_range
    bars = []
    for fit in result.fits:
        if fit.impl not in ("tiled", "explicit"):
            continue
        p = fit.memory_exponent
        where = f"T={low}..{high}, {fit.mode}"
        what = {
            "zh": f"{fit.impl} 峰值内存增长指数，{where}",
            "en": f"{fit.impl} peak-memory exponent, {where}",
        }
        if fit.impl == "tiled":
            bars.append(Bar(what, p, "≤ 1.15", None if p is None else p <= 1.15))
        else:  # the dense path's exponent is reported, not judged: it should be near 2
            bars.append(Bar(what, p, "≈ 2", None))
    return bars


def check_bars(result: BenchResult) -> list[Bar]:
    """Every bar of the issue, with this run's figure."""
    rows = result.rows
    bars = [
        _ratio_bar(
            {
                "zh": f"CausalSelfAttention(sdpa) ÷ F.sdpa 层，标准形状，{mode}",
                "en": f"CausalSelfAttention(sdpa) / F.sdpa layer, standard shape, {mode}",
            },
            _ok_row(rows, "standard", "csa_sdpa", mode),
            1.1,
        )
        for mode in (FORWARD, FORWARD_BACKWARD)
    ]
    bars.append(_speed_bar(result))
    for mode, limit in ((FORWARD, 1.5), (FORWARD_BACKWARD, 2.0)):
        row = _ok_row(rows, "sweep", "tiled", mode, BAR_T)
        what = {
            "zh": f"tiled ÷ SDPA，T={BAR_T}，{mode}",
            "en": f"tiled / SDPA kernel at T={BAR_T}, {mode}",
        }
        bars.append(_ratio_bar(what, row, limit))
    return bars + _memory_bars(result)

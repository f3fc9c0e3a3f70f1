"""attnlab's performance bars (the limits its implementations aim for), read off one run's rows:
reported, never asserted in tests."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.bench.results import BenchRow
from attnlab.bench.rss import ratio_to_reference
from attnlab.bench.runner import FULL, BenchResult
from attnlab.bench.workloads import FORWARD, FORWARD_BACKWARD

#: tiled ÷ SDPA time at the bar shape, (quiet, next to one busy process); None: reported only.
TILED_LIMITS = {FORWARD: (1.2, 1.5), FORWARD_BACKWARD: (1.3, None)}

#: RSS growth of MultiHeadAttention's forward ÷ that of its heads run one at a time.
MHA_RSS_LIMIT = 1.6

#: RSS growth (MiB) of the explicit backend's forward, judged at the full run's standard shape.
EXPLICIT_RSS_LIMIT_MIB = 1100.0


@dataclass(frozen=True)
class Bar:
    """One bar: what is compared (``{"zh": ..., "en": ...}``), this run's value, the limit, and
    whether it holds (``ok`` is None when this run did not measure it, or when the value is only
    reported)."""

    what: dict[str, str]
    value: float | None
    limit: str
    ok: bool | None


def _ok_row(rows: list[BenchRow], section: str, impl: str, mode: str) -> BenchRow | None:
    """The measured row of ``impl``, or None if absent or not measured."""
    for row in rows:
        if (row.section, row.impl, row.mode) == (section, impl, mode):
            return row if row.status == "ok" else None
    return None


def _ratio_bar(what: dict[str, str], row: BenchRow | None, limit: float | None) -> Bar:
    return _limit_bar(what, row.ratio_to_sdpa if row else None, limit)


def _limit_bar(what: dict[str, str], value: float | None, limit: float | None) -> Bar:
    if limit is None:
        return Bar(what, value, "—", None)
    return Bar(what, value, f"≤ {limit:g}", None if value is None else value <= limit)


def _tiled_bars(result: BenchResult) -> list[Bar]:
    """tiled ÷ SDPA at the bar shape: the CausalSelfAttention backends, then the kernels."""
    s, busy = result.config.bar, result.competitor is not None
    layer = f"CausalSelfAttention({s.C}, {s.n_head}, {s.T})"
    load = {"zh": "，另有一个忙碌进程" if busy else "", "en": ", one busy process" if busy else ""}
    bars = []
    for mode, limits in TILED_LIMITS.items():
        tiled = _ok_row(result.rows, "bar", "csa_tiled", mode)
        sdpa = _ok_row(result.rows, "bar", "csa_sdpa", mode)
        ratio = None
        if tiled and sdpa and tiled.median_ms and sdpa.median_ms:
            ratio = tiled.median_ms / sdpa.median_ms
        what = {
            "zh": f"{layer} tiled ÷ sdpa，{mode}{load['zh']}",
            "en": f"{layer} tiled / sdpa, {mode}{load['en']}",
        }
        bars.append(_limit_bar(what, ratio, limits[busy]))
        what = {
            "zh": f"tiled_attention ÷ F.sdpa，T={s.T}，{mode}{load['zh']}",
            "en": f"tiled_attention / F.sdpa kernel at T={s.T}, {mode}{load['en']}",
        }
        bars.append(_ratio_bar(what, _ok_row(result.rows, "bar", "tiled", mode), limits[busy]))
    return bars


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


def _rss_bars(result: BenchResult) -> list[Bar]:
    """The RSS table's bars: MultiHeadAttention against its heads one at a time, and the
    explicit backend's growth (judged only at the full run's shape, where the limit applies)."""
    s = result.config.standard
    shape = f"B={s.B}, T={s.T}, C={s.C}, n_head={s.n_head}"
    mha = _limit_bar(
        {
            "zh": f"MultiHeadAttention ÷ 逐个运行的头，RSS 增长，no_grad 前向，{shape}",
            "en": f"MultiHeadAttention / its heads one at a time, RSS growth, no_grad, {shape}",
        },
        ratio_to_reference(result.memory, "mha"),
        MHA_RSS_LIMIT,
    )
    explicit = next(
        (r.rss_mib for r in result.memory if r.case == "csa_explicit" and r.status == "ok"), None
    )
    what = {
        "zh": f"CausalSelfAttention(explicit) RSS 增长 MiB，no_grad 前向，{shape}",
        "en": f"CausalSelfAttention(explicit) RSS growth MiB, no_grad, {shape}",
    }
    judged = s == FULL.standard
    return [mha, _limit_bar(what, explicit, EXPLICIT_RSS_LIMIT_MIB if judged else None)]


def check_bars(result: BenchResult) -> list[Bar]:
    """Every performance bar, with this run's figure."""
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
    return bars + _tiled_bars(result) + _memory_bars(result) + _rss_bars(result)

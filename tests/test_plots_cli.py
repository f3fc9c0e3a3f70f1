"""``attnlab plot``: the files it writes, the paths it prints, its one-line errors, and a CJK
font that renders Chinese without missing glyphs."""

from __future__ import annotations

import io
import json
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.figures import input_source, lesson_source, plot_chain, plot_mask, plot_weights
from attnlab.figures.files import make_figures
from attnlab.figures.fonts import use_cjk_font
from attnlab.inputs.model import load_input

runner = CliRunner()
TWO_HEADS = {
    "x": [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]],
    "w_q": [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]],
    "w_k": [[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]],
    "w_v": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    "num_heads": 2,
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def plot(*args: str):
    return runner.invoke(app, ["plot", *args])


def glyph_warnings(fig: Figure) -> list[str]:
    """Render ``fig`` and return every missing-glyph warning it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png", dpi=40)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_chinese_figures_render_without_missing_glyphs() -> None:
    for fig in (
        plot_weights(lesson_source("zh"), lang="zh"),
        plot_chain(lesson_source("zh"), b=1, lang="zh"),
        plot_mask(lang="zh"),
    ):
        assert glyph_warnings(fig) == []


def test_the_glyph_check_catches_a_font_without_chinese() -> None:
    use_cjk_font()
    fig = Figure()
    FigureCanvasAgg(fig)
    fig.text(0.5, 0.5, "喜欢", family="DejaVu Sans")  # DejaVu has no CJK glyphs
    found = glyph_warnings(fig)
    assert found and "Glyph" in found[0]


def test_weights_png_is_named_printed_and_valid(tmp_path: Path) -> None:
    result = plot("weights", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    path = tmp_path / "weights-A-B.png"
    assert result.stdout.split() == [str(path)]
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 20_000, len(data)


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["chain", "--prompt", "b"], ["chain-B.png"]),
        (["weights", "--prompt", "A"], ["weights-A.png"]),
        (["mask"], ["mask.png"]),
        (["cost"], ["cost.png"]),
    ],
)
def test_file_names_are_predictable(tmp_path: Path, args: list[str], names: list[str]) -> None:
    result = plot(*args, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == [str(tmp_path / n) for n in names]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)  # no leftovers


def test_figure_names_for_every_prompt_and_head(tmp_path: Path) -> None:
    assert [stem for stem, _ in make_figures("chain", lesson_source("zh"), "zh")] == [
        "chain-A",
        "chain-B",
    ]
    source = tmp_path / "mine.json"
    source.write_text(json.dumps(TWO_HEADS))
    mine = input_source(load_input(source))
    assert [stem for stem, _ in make_figures("chain", mine, "en")] == [
        "chain-mine-A-h1",
        "chain-mine-A-h2",
        "chain-mine-A-merge",
    ]
    assert [stem for stem, _ in make_figures("weights", mine, "en")] == ["weights-mine-A"]


def test_svg_is_xml_with_an_svg_root(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--lang", "en", "plot", "mask", "--format", "svg",
                                 "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 0, result.output
    path = tmp_path / "mask.svg"
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg") and path.stat().st_size > 10_000


def test_input_file_with_heads(tmp_path: Path) -> None:
    source = tmp_path / "mine.toml"
    source.write_text(
        "num_heads = 2\n"
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in TWO_HEADS.items() if k != "num_heads")
    )
    result = plot("weights", "--input", str(source), "--prompt", "A", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == [str(tmp_path / "weights-mine-A.png")]


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_too_large_input_suggests_cost_or_json(tmp_path: Path) -> None:
    doc = {"x": [[[0.1, 0.2]] * 33], "w_q": [[1], [0]], "w_k": [[1], [0]], "w_v": [[1], [0]]}
    source = tmp_path / "big.json"
    source.write_text(json.dumps(doc))
    out = tmp_path / "out"
    line = one_line_error(plot("weights", "--input", str(source), "--out", str(out)))
    assert "T <= 32" in line and "attnlab cost" in line and "trace --format json" in line
    assert not out.exists()  # nothing half written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["heatmap"],
            "KIND must be one of weights, chain, scale, mask, cost, bench, got 'heatmap'",
        ),
        (["weights", "--prompt", "C"], "--prompt: expected one of A, B or all, got 'C'"),
        (["weights", "--format", "jpg"], "--format must be one of png, svg, got 'jpg'"),
        (["cost", "--input", "x.json"], "--input applies to weights and chain, not cost"),
        (["mask", "--csv", "b.csv"], "--csv applies to bench, not mask"),
        (["bench"], "bench: expected --csv FILE"),
        (["bench", "--csv", "none.csv"], "--csv: file not found: none.csv"),
        (["weights", "--input", "missing.json"], "file not found"),
    ],
)
def test_bad_options_give_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    line = one_line_error(plot("--lang", "en", *args, "--out", str(tmp_path / "out")))
    assert message in line
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("")
    line = one_line_error(plot("mask", "--out", str(target)))
    assert "expected a directory" in line


def bench_rows():
    from attnlab.bench import BenchRow

    rows = []
    for mode in ("forward", "forward+backward"):
        for impl, power in (("sdpa", 1), ("explicit", 2)):
            for t in (256, 512, 1024):
                rows.append(
                    BenchRow("sweep", impl, f"{impl} label", "kernel", mode, 1, t, 512, 8, 64,
                             median_ms=(t / 256) ** power, peak_mib=2.0 * (t / 256) ** power)
                )  # fmt: skip
    rows.append(BenchRow("standard", "sdpa", "sdpa label", "kernel", "forward", 8, 1024, 768, 12,
                         64, median_ms=99.0))  # fmt: skip
    return rows


def test_bench_figure_draws_the_csv_rows(tmp_path: Path) -> None:
    from attnlab.bench import write_csv
    from attnlab.figures.bench_plot import load_bench_rows, plot_bench

    path = tmp_path / "attnlab-bench.csv"
    write_csv(path, bench_rows())
    rows = load_bench_rows(path)
    assert {r.section for r in rows} == {"sweep"}  # the standard-shape row is not a T sweep
    fig = plot_bench(rows, lang="en")
    time_fwd, memory_fwd, time_bwd, _ = fig.axes
    explicit = time_fwd.lines[1]
    assert list(explicit.get_xdata()) == [256, 512, 1024]
    assert list(explicit.get_ydata()) == [1.0, 4.0, 16.0]
    assert explicit.get_label() == "kernel · explicit label   time T^2.00, memory T^2.00"
    assert explicit.get_linestyle() == "--"  # kernels dashed, layers solid
    assert list(memory_fwd.lines[0].get_ydata()) == [2.0, 4.0, 8.0]
    assert time_bwd.get_title() == "forward+backward: median time (ms)"
    result = plot("bench", "--csv", str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == [str(tmp_path / "out" / "bench.png")]


def test_bench_csv_of_another_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    line = one_line_error(plot("bench", "--csv", str(path), "--out", str(tmp_path / "out")))
    assert "is not a CSV written by `attnlab bench`" in line

"""Issue 22's "right to the letter" items about the lesson's text, in every channel and both
languages: no unfilled ``{NAME}`` template, §16 says what one gradient step promises and no
more, and §5's wrong-axis text says what each wrong axis of [B,T,T] does."""

from __future__ import annotations

import html
import io
import re
from contextlib import redirect_stdout

import pytest
from fastapi.testclient import TestClient

from attnlab.cli._scripts import run
from attnlab.content import knowledge, plain
from attnlab.core.example import SECTION_IDS
from attnlab.notebook.build import build_notebook
from attnlab.web.app import create_app

LANGS = ("zh", "en")
TEMPLATE = re.compile(r"(?<![A-Za-z])\{[A-Z][A-Z_]{2,}\}")  # not LaTeX: \\operatorname{FFN}


def _script(kind: str, lang: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        run(kind, ["--lang", lang])
    return out.getvalue()


@pytest.fixture(scope="module")
def channels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every channel's text in both languages: the sections rendered as the scripts show them,
    both scripts, the web lesson page, the notebook's cells and the knowledge checks."""
    client = TestClient(create_app(data_dir=tmp_path_factory.mktemp("web")),
                        base_url="http://127.0.0.1")  # fmt: skip
    texts = {}
    for lang in LANGS:
        texts[f"sections.{lang}"] = "\n".join(plain.render_section(s, lang) for s in SECTION_IDS)
        texts[f"lesson_script.{lang}"] = _script("lesson", lang)
        texts[f"grad_script.{lang}"] = _script("grad", lang)
        texts[f"web.{lang}"] = html.unescape(client.get(f"/lesson?lang={lang}").text)
        notebook = build_notebook(lang)
        texts[f"notebook.{lang}"] = "\n".join(cell.source for cell in notebook.cells)
        texts[f"checks.{lang}"] = "\n".join(
            f"{s.question}\n{s.answer}\n{s.mistake}\n{s.summary}" for s in knowledge.sections(lang)
        )
    return texts


def test_no_channel_shows_an_unfilled_template(channels: dict[str, str]) -> None:
    for name, text in channels.items():
        assert not TEMPLATE.findall(text), f"{name}: {TEMPLATE.findall(text)[:3]}"


def test_the_rule_sees_an_unfilled_template() -> None:
    assert TEMPLATE.findall("（第 {CHAIN_SECTION}、{EXPERIMENT_SECTION} 节）")
    assert not TEMPLATE.findall(r"f'{x}' {T} \\operatorname{FFN}")  # code, LaTeX


def test_section_16_says_what_one_step_promises(channels: dict[str, str]) -> None:
    for lang in LANGS:
        text = channels[f"sections.{lang}"] + channels[f"web.{lang}"]
        assert "保证总体变好" not in text and "promises a better total" not in text
    assert "学习率足够小" in channels["sections.zh"]
    assert "small enough learning rate" in channels["sections.en"]


def test_section_5_says_what_each_wrong_axis_does() -> None:
    zh, en = knowledge.section(5, "zh").mistake, knowledge.section(5, "en").mistake
    assert "dim=0" in en and "prompts of the batch" in en and "dim=1" in en and "column" in en
    assert "dim=0" in zh and "提示" in zh and "dim=1" in zh and "列" in zh
    assert "a column instead of a row" not in en


@pytest.mark.parametrize("lang", LANGS)
def test_the_notebooks_section_1_cell_prints_each_prompts_row(lang: str) -> None:
    """It printed A's and B's rows flattened, [0.5000, 0.5000, 0.5000, 0.5000], just before
    asking for B's mean vector."""
    from attnlab.lesson import numbers
    from attnlab.notebook.cells import extra_cell
    from attnlab.text.fmt import vec

    out = io.StringIO()
    with redirect_stdout(out):
        exec(extra_cell(1, lang) or "", {"numbers": numbers, "vec": vec})
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ["A", "B"]
    assert "0.5000, 0.5000, 0.5000" not in out.getvalue()


def test_a_prompts_tokens_are_never_glued(channels: dict[str, str]) -> None:
    """The course's English edition keeps its vocabulary (you=0 ... we=4); a prompt is written
    with its tokens apart: "you like", never "youlike"."""
    from attnlab.core import example

    assert example.vocab("en") == ("you", "like", "AI", "study", "we")
    for name in ("sections.en", "web.en", "notebook.en", "grad_script.en"):
        assert "youlike" not in channels[name] and "welike" not in channels[name], name
    assert "you like" in channels["sections.en"] and "we like" in channels["sections.en"]


@pytest.mark.parametrize(
    ("section", "zh", "en"),
    [
        (7, "第 4 周", "Week 4's shared variables"),
        (7, "先能指出梯度在哪里分叉", "first be able to point at where the gradient branches"),
        (16, "不是上一周那个 4 维输出层", "not the same weights as last week's 4-dimensional"),
        (16, "偏置为 0", "a bias of 0"),
        (16, "不是训练日志", "not a training log"),
        (16, "同时更新所有参与计算的参数", "updates all the parameters taking part, at once"),
    ],
)
def test_the_pages_remarks_are_in_every_channel(
    channels: dict[str, str], section: int, zh: str, en: str
) -> None:
    for lang, needle in (("zh", zh), ("en", en)):
        for channel in ("sections", "web", "notebook"):
            text = " ".join(channels[f"{channel}.{lang}"].split())
            assert needle in text, f"{channel}.{lang} lacks {needle!r} (section {section})"


def test_w_k_shows_its_design_next_to_the_decimals(channels: dict[str, str]) -> None:
    """The page writes W_K as 0.8√2, 0.2√2, 0.1√2; the decimals 1.131/0.283/0.141 alone hide
    the design."""
    import torch

    from attnlab.core import example

    design = torch.tensor(example.W_K_DESIGN, dtype=torch.float64)
    assert torch.equal(design * 2**0.5, example.lesson_w_k())
    for lang in LANGS:
        text = channels[f"sections.{lang}"]
        assert "W_K = √2" in text and "0.8" in text and "1.131" in text


@pytest.mark.parametrize("lang", LANGS)
def test_shapes_keep_their_letter_form_next_to_the_measured_one(
    lang: str, channels: dict[str, str]
) -> None:
    text = channels[f"sections.{lang}"]
    assert "P:[B,T,T] @ V:[B,T,d_head] → O:[B,T,d_head]" in text
    assert "[2,2,2] @ [2,2,2] → [2,2,2]" in text


def test_chinese_figure_labels_are_chinese() -> None:
    """zh figures said "Attention Weights", "Prompt A" and "Scaled Row"."""
    from attnlab.figures import labels

    zh = " ".join(str(v) for v in labels._TEXT["zh"].values())
    for english in ("Attention Weight", "Prompt", "Scaled Row", "Batch"):
        assert english not in zh, english


def test_chinese_tables_have_chinese_headers(channels: dict[str, str]) -> None:
    """zh output showed "Tensor / Shape / axes" headers; the code names in the cells stay."""
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    shapes = CliRunner().invoke(app, ["shapes"]).output
    for text in (channels["sections.zh"], channels["lesson_script.zh"], shapes):
        headers = [line for line in text.splitlines() if "各轴含义" in line or " 轴" in line]
        for line in headers:
            assert "Tensor" not in line and "Shape" not in line and "shape" not in line, line


def test_chinese_calls_a_prompt_提示_in_prose_and_tables(channels: dict[str, str]) -> None:
    """One name per thing: the zh prose said 提示 A while its tables said Prompt A. What the
    listings' code prints (``Prompt A output: ...``) is the code's output and stays as printed."""
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    printed = re.compile(r"^\s+Prompt [AB] (weights|output):")
    runner = CliRunner()
    texts = {name: channels[name] for name in ("sections.zh", "lesson_script.zh", "grad_script.zh")}
    for argv in (
        ["trace"],
        ["trace", "--format", "markdown"],
        ["mistakes"],
        ["mistakes", "no_scale"],
    ):
        texts[" ".join(argv)] = runner.invoke(app, argv).output
    for name, text in texts.items():
        named = [ln for ln in text.splitlines() if "Prompt" in ln and not printed.match(ln)]
        assert not named, f"{name}: {named[:3]}"

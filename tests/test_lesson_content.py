"""Issue 14's lesson content: the introduction, section 7's W_V gradient, section 8's softmax
shift, and the additions to sections 9, 10, 14, 16 and 18, checked in the course blocks, on the
web page, in the scripts' text and in the --json document (both languages)."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from fastapi.testclient import TestClient
from published import row
from typer.testing import CliRunner
from web_support import ORIGIN

from attnlab.cli.main import app
from attnlab.cli.walk import WALK_SECTIONS, render_lesson
from attnlab.cli.walk_grad import render_experiment
from attnlab.content import intro, sections
from attnlab.content.blocks import Block
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.text.fmt import num, tiny, vec
from attnlab.text.i18n import pick
from attnlab.web.app import create_app

LANGS = ("zh", "en")
P6 = 6


def _text(blocks: tuple[Block, ...] | list[Block]) -> str:
    """Everything a reader sees in ``blocks``, as one string."""
    parts = []
    for b in blocks:
        parts += [b.text, *b.headers, *b.items, *(cell for r in b.rows for cell in r)]
    return "\n".join(parts)


def _table(section_id: int, lang: str, key: str) -> Block:
    tables = [b for b in sections.section(section_id, lang).blocks if b.data.get("key") == key]
    assert len(tables) == 1, f"section {section_id} ({lang}) has {len(tables)} tables {key!r}"
    return tables[0]


def _page_text(html: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    app_ = create_app(tmp_path_factory.mktemp("web"), figures_on=False)
    return TestClient(app_, base_url=ORIGIN, raise_server_exceptions=True)


# --- section 7: W_V[0,0], the content path -------------------------------------------------


def _reference_loss(w_q: torch.Tensor, w_v: torch.Tensor) -> torch.Tensor:
    """Section 16's mean loss written with torch's own attention, not attnlab's pipeline."""
    x = example.lesson_x()
    q, k, v = x @ w_q, x @ example.lesson_w_k(), x @ w_v  # [B, T, d_head]
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, T, d_head]
    logits = out[:, -1, :] @ example.lesson_w_vocab()  # [B, V_vocab]
    return F.cross_entropy(logits, example.lesson_targets())


def test_value_gradient_three_ways_agree_and_match_torch() -> None:
    g = numbers.value_gradient()
    assert g.param == example.VALUE_GRAD_PARAM
    assert abs(g.autograd - g.closed_form) < 1e-12, f"max |diff| {abs(g.autograd - g.closed_form)}"
    assert abs(g.autograd - g.finite_difference) < 1e-8
    assert abs(g.autograd) > 0.1  # the section-16 loss really depends on W_V[0,0]
    w_q = example.lesson_w_q().requires_grad_(True)
    w_v = example.lesson_w_v().requires_grad_(True)
    _reference_loss(w_q, w_v).backward()
    assert w_v.grad is not None and w_q.grad is not None
    (i, c), (qi, qj) = g.param, example.EXPERIMENT_PARAM
    assert abs(float(w_v.grad[i, c]) - g.autograd) < 1e-12
    assert abs(float(w_q.grad[qi, qj]) - numbers.get("experiment.grad")) < 1e-12
    published = row("experiment.grad")
    assert abs(numbers.get("experiment.grad_closed") - published.value) <= published.tolerance
    assert abs(numbers.get("experiment.grad_fd") - published.value) <= published.tolerance


@pytest.mark.parametrize("lang", LANGS)
def test_section_7_shows_both_paths_and_both_gradients(lang: str) -> None:
    paths = _table(7, lang, "grad-paths")
    assert any("O → V" in r[1] for r in paths.rows)
    assert any("O → P" in r[1] and "S" in r[1] and "Q" in r[1] for r in paths.rows)
    three = _table(7, lang, "grad-three-ways")
    keys = {
        "W_V[0,0]": ("grad_wv", "grad_wv_fd", "grad_wv_closed"),
        "W_Q[1,0]": ("grad", "grad_fd", "grad_closed"),
    }
    assert [r[0] for r in three.rows] == list(keys)
    for r in three.rows:
        assert list(r[2:]) == [num(numbers.get(f"experiment.{k}"), P6) for k in keys[r[0]]]
    text = _text(sections.section(7, lang).blocks)
    assert num(numbers.get("experiment.wv_reads.A"), P6) in text  # the closed form's factors
    assert num(numbers.get("experiment.dloss_dh.A[0]"), P6) in text


# --- section 8: a constant added to a row ----------------------------------------------------


def test_softmax_shift_leaves_the_weights_alone() -> None:
    base = numbers.tensor("shift.base")
    assert torch.equal(base, numbers.tensor("weights.A.final"))
    weights, rows = numbers.tensor("shift.weights"), numbers.tensor("shift.rows")
    assert len(weights) == len(example.SHIFT_CONSTANTS) >= 3
    shift = rows - numbers.tensor("scaled_scores.A.final")
    assert torch.allclose(shift, numbers.tensor("shift.constants")[:, None].expand_as(shift))
    diff = (weights - base).abs().max()
    assert diff < 1e-15, f"max |diff| {diff}"


@pytest.mark.parametrize("lang", LANGS)
def test_section_8_shows_the_shift_and_the_caveat(lang: str) -> None:
    table = _table(8, lang, "shift")
    want = [
        vec(numbers.tensor(f"shift.weights[{i}]"), 6) for i in range(len(example.SHIFT_CONSTANTS))
    ]
    assert [r[2] for r in table.rows] == want
    assert [r[3] for r in table.rows] == [tiny(d) for d in numbers.tensor("shift.max_diff")]
    assert pick(lang, "局部斜率", "local slope") in _text(sections.section(8, lang).blocks)


# --- sections 9, 10, 14, 16, 18 ----------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_sections_9_10_14_16_18_additions(lang: str) -> None:
    st = numbers.stages()
    s9 = sections.section(9, lang).blocks
    assert any(r[0] == "K.transpose(-2,-1)" for r in _table(9, lang, "axes").rows)
    assert any(b.kind == "math" and r"K.\operatorname{transpose}(-2,-1)" in b.text for b in s9)
    mask_t4 = row("causal_mask_t4").value
    tex_rows = r"\\".join("&".join(str(v) for v in r) for r in mask_t4)
    assert tex_rows in _text(sections.section(10, lang).blocks)  # the T=4 matrix, from numbers
    s14 = _text(sections.section(14, lang).blocks)
    assert r"X:[2,2,4]\ @\ W_Q:[4,2]\rightarrow Q:[2,2,2]" in s14
    assert st.q.shape == (2, 2, 2) and r"Q_A=X_AW_Q=\begin{bmatrix}0.5&0.5\\1&1" in s14
    shapes = _table(16, lang, "typical-shapes")
    assert [r[1] for r in shapes.rows] == [
        "[B,n_head,T,T]",
        "[B,T,C]",
        "[B,T,V_vocab]",
        "[B,T,V_vocab]",
    ]
    assert [r[2] for r in shapes.rows][1:3] == ["[2,2,4]", "[2,2,5]"]
    assert intro.GRAD_COMMAND in _text(sections.section(16, lang).blocks)
    s18 = sections.section(18, lang).blocks
    titles = [i for i, b in enumerate(s18) if b.kind == "h"]
    assert len(titles) == 1 and "10" in s18[titles[0]].text
    assert s18[titles[0] + 1].kind == "flow" and len(s18[titles[0] + 1].items) == 10


# --- the introduction and section 0 ------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_introduction_blocks(lang: str) -> None:
    blocks = intro.intro(lang)
    text = _text(blocks)
    assert str(intro.READING_MINUTES) in text and intro.RUN_COMMAND in text
    assert [b.kind for b in blocks].count("h") == 4
    objectives = [b for b in blocks if b.kind == "flow"]
    assert len(objectives) == 1 and len(objectives[0].items) == 5
    plan = [b for b in blocks if b.data.get("key") == "study-plan"]
    assert len(plan) == 1 and [r[1] for r in plan[0].rows] == [f"§{a}–§{b}" for a, b in intro.UNITS]
    for name in ("A", "B"):  # what to look for after running the script
        assert row(f"weights.{name}.final").text in text
    context = _text(sections.section(0, lang).blocks)
    first, last = intro.MINIGPT_WEEKS
    for week in (f"Week {intro.WEEK_BEFORE}", f"Week {intro.WEEK_AFTER}", f"{first}–{last}"):
        assert week in context


@pytest.mark.parametrize("lang", LANGS)
def test_introduction_on_the_lesson_and_section_0_pages(client: TestClient, lang: str) -> None:
    lesson = client.get(f"/lesson?lang={lang}").text
    head = lesson[: lesson.index('id="s-0"')]
    assert 'data-intro="lesson"' in head and intro.title(lang) in head
    shown = _page_text(head)
    assert f"{intro.READING_MINUTES}" in shown and intro.RUN_COMMAND in shown
    assert row("weights.B.final").text in shown
    assert 'data-intro="section"' in client.get(f"/section/0?lang={lang}").text
    assert "data-intro" not in client.get(f"/section/1?lang={lang}").text
    s7 = _page_text(client.get(f"/section/7?lang={lang}").text)
    assert num(numbers.get("experiment.grad_wv"), P6) in s7
    assert 'data-table="shift"' in client.get(f"/section/8?lang={lang}").text


# --- the scripts: order, W_V gradient, JSON ------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_walk_follows_the_page_order_and_says_so(lang: str) -> None:
    out = render_lesson(lang)
    heads = [int(n) for n in re.findall(r"^== §(\d+)", out, flags=re.M)]
    assert heads == list(WALK_SECTIONS) == sorted(WALK_SECTIONS)
    header = " ".join(f"§{n}" for n in WALK_SECTIONS)
    assert header in out.splitlines()[3]
    assert "§10" in out and "[ 1  1  1  1 ]" in out  # section 10's T=4 mask, the page's matrix
    assert "K.transpose(-2,-1)" in out
    for i in range(len(example.SHIFT_CONSTANTS)):
        assert vec(numbers.tensor(f"shift.weights[{i}]").tolist(), 6) in out


@pytest.mark.parametrize("lang", LANGS)
def test_grad_text_and_json_carry_the_w_v_gradient(lang: str) -> None:
    out = render_experiment(lang)
    g = numbers.value_gradient()
    for value in (g.autograd, g.finite_difference, g.closed_form, float(g.reads[0])):
        assert num(value, P6) in out
    assert "O → V → W_V" in out and pick(lang, "W_Q、W_K", "W_Q, W_K") in out
    result = CliRunner().invoke(app, ["--lang", lang, "grad", "--json"])
    assert result.exit_code == 0, result.output
    path = json.loads(result.stdout)["experiment"]["content_path"]
    assert path["param"] == "W_V[0,0]"
    assert path["grad_wv_0_0"] == g.autograd and path["grad_closed_form"] == g.closed_form


def test_readme_states_the_walk_order() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert " ".join(f"§{n}" for n in WALK_SECTIONS) in readme

"""Issue 35: the lesson right to the letter. Each restored fact or corrected model answer is read
from the rendered web page (both languages), and where it states a computation, the computation
is run here with PyTorch so the sentence cannot drift from the maths."""

from __future__ import annotations

import html as html_lib
import re

import pytest
import torch
from fastapi.testclient import TestClient
from published import row
from web_support import ORIGIN

from attnlab.core import example
from attnlab.core.modules import CausalSelfAttention, MultiHeadAttention
from attnlab.lesson import numbers, shapes
from attnlab.web.app import create_app

LANGS = ("zh", "en")


def _page_text(html: str) -> str:
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", "", html)))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    app_ = create_app(tmp_path_factory.mktemp("web"), figures_on=False)
    return TestClient(app_, base_url=ORIGIN, raise_server_exceptions=True)


def _section(client: TestClient, sid: int, lang: str) -> str:
    response = client.get(f"/section/{sid}?lang={lang}")
    assert response.status_code == 200
    return _page_text(response.text)


# --- section 18: what a wrong softmax axis really does -------------------------------------------


def test_a_wrong_softmax_axis_keeps_masked_zeros_or_gives_nan() -> None:
    """The facts section 18's model answer states, computed on the lesson's masked scores."""
    masked = numbers.tensor("masked_scores")  # [B, T, T], −∞ above the diagonal
    future = torch.triu(torch.ones_like(masked[0], dtype=torch.bool), diagonal=1)  # [T, T]
    over_queries = torch.softmax(masked, dim=-2)  # [B, T, T]
    assert torch.all(over_queries[:, future] == 0), "dim=-2 leaves masked places at 0"
    column_sums, row_sums = over_queries.sum(dim=-2), over_queries.sum(dim=-1)  # [B, T] each
    assert torch.allclose(column_sums, torch.ones_like(column_sums)), "each column sums to 1"
    assert not torch.allclose(row_sums, torch.ones_like(row_sums)), "the rows do not"
    over_batch = torch.softmax(masked, dim=0)  # [B, T, T]
    assert torch.isnan(over_batch[:, future]).all(), "dim=0 gives NaN at masked places"


@pytest.mark.parametrize("lang", LANGS)
def test_section_18_answer_says_what_a_wrong_axis_does(client: TestClient, lang: str) -> None:
    page = _section(client, 18, lang)
    if lang == "zh":
        assert "沿 Query 轴（dim=-2）归一化，被屏蔽处仍是 0" in page
        assert "沿批次轴（dim=0）" in page and "NaN" in page
        assert "重新得到权重" not in page
    else:
        assert "over the query axis (dim=-2) they still get 0" in page
        assert "over the batch axis (dim=0)" in page and "NaN" in page
        assert "gives masked columns weight again" not in page


# --- section 1: fixed ratios are 1/n, not always a half; dense decimal vectors -------------------


def test_uniform_ratios_are_one_over_the_visible_count() -> None:
    ratios = numbers.tensor("uniform.weights_t4")  # [T=4, T=4]
    for t in range(ratios.shape[0]):
        assert torch.allclose(
            ratios[t, : t + 1], torch.full((t + 1,), 1 / (t + 1), dtype=ratios.dtype)
        )
    mean = numbers.tensor("uniform.mean")  # [B, T, C]
    assert not torch.equal(mean[0, -1], mean[1, -1]), "A's and B's means differ"


@pytest.mark.parametrize("lang", LANGS)
def test_section_1_states_the_ratio_rule_and_real_vectors(client: TestClient, lang: str) -> None:
    page = _section(client, 1, lang)
    if lang == "zh":
        assert "看得到 n 个位置" in page and "1/n" in page
        assert "稠密小数" in page and "一半一半" not in page
        assert "总是每个可见位置各一半" not in page
    else:
        assert "sees n positions gives each 1/n" in page
        assert "dense decimal vectors" in page and "same half and half" not in page
        assert "always gives each visible position an equal share" not in page


# --- section 15b: which module's convention the shape question asks for --------------------------


def test_15b_answer_is_the_fused_modules_head_tensor() -> None:
    check = {**example.SHAPE_CHECK, "heads": 4}
    fused = shapes.run_shape_check(**check).head_outputs  # [B, n_head, T, d_head]
    assert list(fused.shape) == numbers.tensor("shapes.head_outputs_h4").tolist()
    b, t, c = check["batch"], check["tokens"], check["embed"]
    x = torch.randn(b, t, c, dtype=torch.float32)  # [B, T, C]
    listed = MultiHeadAttention(embed_dim=c, num_heads=4, context_length=8)
    assert [list(h(x).shape) for h in listed.heads] == [[b, t, c // 4]] * 4
    assert CausalSelfAttention(embed_dim=c, num_heads=4, context_length=8)(x).shape == x.shape


@pytest.mark.parametrize("lang", LANGS)
def test_15b_names_both_conventions(client: TestClient, lang: str) -> None:
    page = _section(client, 15, lang)
    assert "[B, n_head, T, d_head]" in page and "CausalSelfAttention" in page
    assert "[B, T, d_head]" in page


# --- shapes by axis names (core goal, section 9, section 7, section 16) --------------------------


def _named(page: str, axes: str, shape: torch.Size | tuple[int, ...]) -> bool:
    return f"[{axes}]=[{','.join(str(s) for s in shape)}]" in page


@pytest.mark.parametrize("lang", LANGS)
def test_core_goal_and_section_9_name_every_axis(client: TestClient, lang: str) -> None:
    st = numbers.stages()
    b, t, c = st.x.shape
    heads = c // st.q.size(-1)
    for sid in (0, 9):
        page = _section(client, sid, lang)
        assert _named(page, "B,T,C", st.x.shape), sid
        assert _named(page, "B,T,d_head", st.q.shape), sid
        assert _named(page, "B,T,T", st.weights.shape), sid
        assert _named(page, "B,n_head,T,T", (b, heads, t, t)), sid


@pytest.mark.parametrize("lang", LANGS)
def test_section_7_writes_the_score_shapes(client: TestClient, lang: str) -> None:
    html = client.get(f"/section/7?lang={lang}").text
    assert r"Q:[B,T,d_k]\ @\ K^\top:[B,d_k,T]\rightarrow S:[B,T,T]" in html_lib.unescape(html)


@pytest.mark.parametrize("lang", LANGS)
def test_section_16_flow_writes_symbols_then_the_example_sizes(
    client: TestClient, lang: str
) -> None:
    page = _section(client, 16, lang)
    st = numbers.stages()
    b, t, c = st.x.shape
    assert "X [B,T,C]" in page and "Logits [B,T,V_vocab]" in page
    assert not re.search(r"\[\d+,\d+,[A-Za-z]", page), "a shape that mixes sizes and symbols"
    vocab = numbers.experiment().before.logits.size(-1)
    assert _named(page, "B,T,C", (b, t, c)) and _named(page, "B,T,V_vocab", (b, t, vocab))


# --- section 4: the one-hot x, the row it reads, k in √2 form -----------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_section_4_shows_x_the_row_and_k_as_multiples_of_root_2(
    client: TestClient, lang: str
) -> None:
    st = numbers.stages()
    x = st.x[0, -1]
    assert torch.equal(x, torch.nn.functional.one_hot(x.argmax(), x.numel()).to(x.dtype))
    row = int(x.argmax())
    design = example.W_K_DESIGN[row]
    assert torch.allclose(st.k[0, -1], torch.tensor(design, dtype=st.k.dtype) * 2**0.5)
    page = _section(client, 4, lang)
    assert f"x=[{', '.join(str(int(v)) for v in x.tolist())}]" in page
    assert f"k=[{design[0]}√2, {design[1]}√2]" in page
    assert (f"W 下标为 {row} 的那一行" if lang == "zh" else f"picks row {row} of W") in page


# --- section 5: why the exps have four decimals where the course prints three -------------------


@pytest.mark.parametrize("lang", LANGS)
def test_section_5_explains_the_rounded_exp_sum(client: TestClient, lang: str) -> None:
    scaled = numbers.tensor("scaled_scores")[0, -1]  # prompt A's final row
    exps = scaled.exp()
    rounded_sum = sum(round(float(e), 3) for e in exps)
    exact = float(exps.sum())
    assert f"{rounded_sum:.3f}" == row("exp_sum.A.final").text
    assert [f"{round(float(e), 3):.3f}" for e in exps] == [
        f"{v:.3f}" for v in row("exp.A.final").value
    ]
    assert f"{exact:.3f}" != f"{rounded_sum:.3f}", "the two roundings differ, as the note says"
    page = _section(client, 5, lang)
    for text in (*(f"{round(float(e), 3):.3f}" for e in exps), f"{rounded_sum:.3f}"):
        assert text in page
    assert f"{exact:.4f}" in page and f"{exact:.3f}" in page


# --- section 10: the training target is the input moved one place on ---------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_section_10_names_the_target_sequence(client: TestClient, lang: str) -> None:
    words = example.vocab(lang)
    me, like, cat = words[0], words[1], words[4]  # IDs 0, 1, 4 of the course's vocabulary
    page = _section(client, 10, lang)
    assert f"[{me}, {like}]" in page and f"[{like}, {cat}]" in page

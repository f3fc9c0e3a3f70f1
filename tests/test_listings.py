"""The copyable listings of sections 12, 13 and 15 (``attnlab code``, the web lesson): the exact
text shown is run in a fresh interpreter and prints the published numbers; the classes compute
what attnlab's own modules compute and pass ``attnlab audit``; the web page and the CLI show that
same text, byte for byte.
"""

from __future__ import annotations

import contextlib
import html as html_lib
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from published import row
from typer.testing import CliRunner

from attnlab.audit.runner import audit
from attnlab.cli.main import app
from attnlab.content import listings
from attnlab.core import example, modules
from attnlab.core.example import LANGS
from attnlab.lesson import numbers

# Runs each file given as a learner would (``python FILE``), with a marker line before each.
RUN_EACH = (
    "import runpy, sys\n"
    "for path in sys.argv[1:]:\n"
    "    print('@@', path, flush=True)\n"
    "    runpy.run_path(path, run_name='__main__')\n"
)
FINAL = re.compile(r"^Prompt (\w) (weights|output): +\[(.*)\]$", re.M)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Every listing in every language, written to a file named as its docstring says."""
    root = tmp_path_factory.mktemp("listings")
    written = {}
    for lang in LANGS:
        (root / lang).mkdir()
        for name in listings.NAMES:
            path = root / lang / listings.FILES[name]
            path.write_text(listings.listing(name, lang), encoding="utf-8")
            written[name, lang] = path
    return written


def _run_as_shown(files: dict[tuple[str, str], Path]) -> dict[tuple[str, str], str]:
    """What each listing prints, run in one fresh interpreter per language (both at once)."""
    procs = {
        lang: subprocess.Popen(
            [sys.executable, "-c", RUN_EACH, *(str(files[n, lang]) for n in listings.NAMES)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for lang in LANGS
    }
    out = {}
    for lang, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        parts = stdout.split("@@ ")[1:]
        for name, part in zip(listings.NAMES, parts, strict=True):
            assert part.startswith(str(files[name, lang])), part[:200]
            out[name, lang] = part
    return out


def _final_rows(text: str) -> dict[str, list[float]]:
    return {
        f"{kind}.{p}": [float(v) for v in vals.split(",")] for p, kind, vals in FINAL.findall(text)
    }


def _assert_published(rows: dict[str, list[float]], where: str) -> None:
    """Each printed row (its first columns: the lesson head's) against the published one."""
    for key, values in rows.items():
        published = row(f"{key}.final")
        values = values[: len(published.value)]
        diff = max(abs(a - b) for a, b in zip(values, published.value, strict=True))
        assert diff <= published.tolerance, f"{where} {key}: {values}, max |diff| {diff}"


@pytest.mark.process
def test_every_listing_runs_as_shown_and_prints_the_published_rows(
    files: dict[tuple[str, str], Path],
) -> None:
    """One test for all six runs, so the two interpreters start once even under xdist."""
    printed = _run_as_shown(files)
    for lang in LANGS:
        script = printed["script", lang]
        for stage in ("Q", "K", "V", "Raw scores", "Scaled scores", "Masked scores"):
            assert f"\n{stage} [2, 2, 2]:\ntensor(" in script, stage
        assert "-inf" in script and "Attention weights [2, 2, 2]" in script
        assert set(_final_rows(script)) == {"weights.A", "weights.B", "output.A", "output.B"}
        for name in listings.NAMES:
            text = printed[name, lang]
            _assert_published(_final_rows(text), f"{name} ({lang})")
            # The lines the web page shows under the listing are the ones it prints.
            assert [ln for ln in text.splitlines() if FINAL.match(ln)] == listings.expected_lines(
                name
            )


@contextlib.contextmanager
def _global_torch_state() -> Iterator[None]:
    """The script sets torch's default dtype and print options: put them back afterwards."""
    dtype = torch.get_default_dtype()
    try:
        yield
    finally:
        torch.set_default_dtype(dtype)
        torch.set_printoptions(profile="default")


@pytest.mark.parametrize("lang", LANGS)
def test_script_writes_the_example_exactly_and_w_k_as_its_design(lang: str) -> None:
    text = listings.listing("script", lang)
    ns: dict[str, Any] = {"__name__": "script"}
    with _global_torch_state(), contextlib.redirect_stdout(io.StringIO()):
        exec(compile(text, "attention_by_hand.py", "exec"), ns)
    for name, want in [
        ("x", example.lesson_x()),
        ("w_q", example.lesson_w_q()),
        ("w_k", example.lesson_w_k()),
        ("w_v", example.lesson_w_v()),
    ]:
        assert torch.equal(ns[name], want), f"{name}: {ns[name]} vs {want}"
    assert torch.allclose(ns["weights"], numbers.stages().weights, atol=1e-15)
    w_k_lines = re.search(r"w_k = torch.tensor\(\n(.*?)\n\)", text, re.S)
    assert w_k_lines is not None
    assert re.findall(r"([\d.]+) \* SQRT2", w_k_lines.group(1)) == ["0.8", "0.2", "0.2", "0.1"]
    assert listings.w_k_design() == ["0.8·√2", "0.2·√2", "0.1·√2"]
    words = example.vocab(lang)
    assert f"# {words[0]}" in text and f"# {words[4]}" in text  # token labels in the language


def _classes(name: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": f"listing_{name}"}  # not __main__: the demo stays out
    exec(compile(listings.listing(name, "en"), f"{name}.py", "exec"), ns)
    return ns


def _load_lesson_weights(head: torch.nn.Module) -> None:
    with torch.no_grad():
        head.query.weight.copy_(example.lesson_w_q().T)
        head.key.weight.copy_(example.lesson_w_k().T)
        head.value.weight.copy_(example.lesson_w_v().T)


def test_head_listing_computes_the_lesson_and_what_attnlab_computes() -> None:
    Head = _classes("head")["AttentionHead"]
    head = Head(4, 2, context_length=8).double()
    _load_lesson_weights(head)
    out = head(example.lesson_x())
    diff = (out - numbers.stages().output).abs().max().item()
    assert diff <= 1e-12, f"max |diff| {diff} against the pipeline"
    ours = modules.AttentionHead(4, 2, 8).double()
    ours.load_state_dict(head.state_dict())  # same names: query, key, value, causal_mask
    x = torch.randn(3, 5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    diff = (head(x) - ours(x)).abs().max().item()
    assert diff <= 1e-12, f"max |diff| {diff} against attnlab.core.modules.AttentionHead"
    assert "causal_mask" in dict(head.named_buffers()) and len(list(head.parameters())) == 3
    with pytest.raises(ValueError, match="sequence length T=9 exceeds context_length=8"):
        head(torch.zeros(1, 9, 4, dtype=torch.float64))


def test_multihead_listing_computes_what_attnlab_computes() -> None:
    ns = _classes("multihead")
    torch.manual_seed(0)
    mha = ns["MultiHeadAttention"](4, 2, context_length=8).double()
    ours = modules.MultiHeadAttention(4, 2, 8).double()
    ours.load_state_dict(mha.state_dict())
    x = torch.randn(2, 6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    diff = (mha(x) - ours(x)).abs().max().item()
    assert diff <= 1e-12, f"max |diff| {diff} against attnlab.core.modules.MultiHeadAttention"
    _load_lesson_weights(mha.heads[0])
    with torch.no_grad():
        mha.output_projection.weight.copy_(torch.eye(4))
    lesson = mha(example.lesson_x())[..., :2]
    diff = (lesson - numbers.stages().output).abs().max().item()
    assert diff <= 1e-12, f"max |diff| {diff}: head 1 through W_O = I"
    with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads, got 5 and 2"):
        ns["MultiHeadAttention"](5, 2, 8)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    ("name", "cls"), [("head", "AttentionHead"), ("multihead", "MultiHeadAttention")]
)
def test_module_listings_pass_the_audit(
    files: dict[tuple[str, str], Path], name: str, cls: str, lang: str
) -> None:
    result = audit(files[name, lang], cls, name)
    assert result["status"] == "ok", result
    failed = [i for i in result["items"] if i["status"] == "FAIL"]
    assert failed == [] and result["overall"]["status"] == "PASS", (failed, result["overall"])


@pytest.mark.process
def test_listings_follow_the_projects_lint_and_format(files: dict[tuple[str, str], Path]) -> None:
    config = Path(__file__).resolve().parents[1] / "pyproject.toml"
    paths = [str(p) for p in files.values()]
    for args in (["check"], ["format", "--check"]):
        ruff = [sys.executable, "-m", "ruff", *args, "--config", str(config), *paths]
        done = subprocess.run(ruff, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", listings.NAMES)
def test_cli_prints_the_listing_exactly(name: str, lang: str) -> None:
    result = CliRunner().invoke(app, ["code", name, "--lang", lang])
    assert result.exit_code == 0, result.output
    assert result.stdout == listings.listing(name, lang)
    assert "\x1b[" not in result.stdout  # plain text: safe to redirect into a .py file


@pytest.mark.parametrize(
    ("lang", "message"),
    [
        ("en", "code: expected one of script, head, multihead, got 'heads'"),
        ("zh", "code：名称应为"),
    ],
)
def test_cli_unknown_listing_is_one_line_exit_2(lang: str, message: str) -> None:
    result = CliRunner().invoke(app, ["--lang", lang, "code", "heads"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


@pytest.mark.parametrize("lang", LANGS)
def test_web_sections_show_the_listings_and_their_output(
    web_client_factory: Any, tmp_path: Path, lang: str
) -> None:
    client = web_client_factory(tmp_path)
    for name, section in listings.SECTIONS.items():
        html = client.get(f"/section/{section}?lang={lang}").text
        block = re.search(
            rf'<figure class="code listing" data-listing="{name}">(.*?)</figure>', html, re.S
        )
        assert block is not None, f"section {section} shows no {name} listing"
        pre = re.search(r"<pre>(.*)</pre>", block.group(1), re.S)
        assert pre is not None
        shown = html_lib.unescape(re.sub(r"<[^>]+>", "", pre.group(1)))
        assert shown == listings.listing(name, lang), f"section {section}: shown text differs"
        command = f"attnlab code {name}" + (" --lang en" if lang == "en" else "")
        assert f'<code class="path">{command}</code>' in block.group(1)
        for line in listings.expected_lines(name):
            assert html_lib.escape(line, quote=False) in html, line
        # Only a listing has a copy button: package source (a method, a function) pasted into a
        # file would not run.
        assert html.count('class="copy"') == html.count('class="code listing"') == 1


@pytest.mark.usefixtures("judge_here")
def test_attnlab_audit_command_passes_the_multihead_listing(
    files: dict[tuple[str, str], Path],
) -> None:
    """The sandboxed command a learner runs: exit 0, every item and the output check PASS."""
    target = f"{files['multihead', 'zh']}:MultiHeadAttention"
    result = CliRunner().invoke(app, ["audit", target, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"]["status"] == "PASS" and "FAIL" not in {
        i["status"] for i in data["items"]
    }


@pytest.mark.parametrize("name", listings.NAMES)
def test_the_chinese_listings_comment_in_chinese(name: str) -> None:
    """Every comment that is a sentence is in Chinese in the zh listing; comments that are only
    shapes or code (``# [B, T, T]``, ``# d_head = C / n_head``) stay the same, as does the code."""
    words = re.compile(r"\b[a-z]{3,}\b \b[a-z]{2,}\b")  # two English words in a row: a sentence
    zh = listings.listing(name, "zh")
    for comment in re.findall(r"# (.+)$", zh, re.M):
        english = words.search(comment.replace("nn.Linear", "").replace(".to(device)", ""))
        assert not english, f"{name}: untranslated comment {comment!r}"
    strip = re.compile(r'\s*#.*$|""".*?"""', re.M | re.S)
    assert strip.sub("", zh).count("\n") == strip.sub("", listings.listing(name, "en")).count("\n")

"""``attnlab audit`` on a zoo of learner files: broken ones fail the right item, correct ones
pass, and code that raises, loops, exits or crashes gives a clean report with exit code 2.

The zoo's good and bad files are audited in this process through the runner's ``audit()`` (the
checks are the same; only the sandbox is skipped) to keep the suite fast; the sandbox itself is
tested end to end on the broken files, all started at once.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attnlab.audit import run_audit
from attnlab.audit.context import build_audit
from attnlab.audit.judge import judge
from attnlab.audit.remote import local_target
from attnlab.audit.report import render
from attnlab.audit.runner import audit
from attnlab.cli.main import app
from attnlab.core import modules
from attnlab.core.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.mistakes import catalogue

ZOO = Path(__file__).parent / "zoo"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


runner = CliRunner()


def _target(path: Path) -> str:
    src = path.read_text(encoding="utf-8")
    factory = re.search(r"^def (make_\w+)", src, re.M)
    return factory.group(1) if factory else re.findall(r"^class (\w+)", src, re.M)[-1]


def _expect(path: Path) -> tuple[int, str]:
    """``# expect: item=N mistake=NAME`` (``-``: no catalogue mistake); item 0 is the output
    check next to the ten items, with ``finding=...``."""
    found = re.search(
        r"^# expect: item=(\d+) mistake=(\w+|-)", path.read_text(encoding="utf-8"), re.M
    )
    assert found, f"{path.name} has no '# expect:' line"
    return int(found.group(1)), found.group(2)


def _finding(path: Path) -> str | None:
    found = re.search(r"^# expect: .* finding=(\w+)", path.read_text(encoding="utf-8"), re.M)
    return found.group(1) if found else None


BAD = sorted((ZOO / "bad").glob("*.py"))
GOOD = sorted((ZOO / "good").glob("*.py"))


def _failures(result: dict[str, Any]) -> dict[int, list[str]]:
    return {i["item"]: i["mistakes"] for i in result["items"] if i["status"] == "FAIL"}


def test_zoo_covers_every_catalogue_mistake() -> None:
    assert len(BAD) >= 40 and len(GOOD) >= 20
    covered = {_expect(p)[1] for p in BAD} - {"-"}
    assert covered == {m.name for m in catalogue.CATALOGUE}


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_bad_file_fails_on_its_item_naming_its_mistake(path: Path) -> None:
    item, name = _expect(path)
    result = audit(path, _target(path), "auto")
    assert result["status"] == "ok", result
    # Judged on what it computes: a bug never leaves the output check PASS.
    assert result["overall"]["status"] != "PASS", result["overall"]
    if item == 0:  # the output check itself: non-determinism, or a difference after the last stage
        assert result["overall"]["status"] == "FAIL", result["overall"]
        assert result["overall"]["finding"] == _finding(path), result["overall"]
        return
    failed = _failures(result)
    assert item in failed, f"item {item} did not fail: {failed}"
    if name == "-":  # a bug outside the catalogue: caught, and no mistake claims it
        assert all(names == [] for names in failed.values()), failed
        return
    assert name in failed[item], f"item {item} names {failed[item]}, not {name}"
    # Any other FAIL is a consequence of the same bug, and says so.
    assert all(name in names for names in failed.values()), failed
    assert min(failed) <= item


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_good_file_has_no_fail(path: Path) -> None:
    result = audit(path, _target(path), "auto")
    assert result["status"] == "ok", result
    assert _failures(result) == {}, [i for i in result["items"] if i["status"] == "FAIL"]
    statuses = [i["status"] for i in result["items"]]
    assert [i["item"] for i in result["items"]] == list(range(1, 11))
    # Equal to the reference on the lesson input and on every random probe.
    assert result["overall"]["status"] == "PASS", result["overall"]
    assert statuses.count("PASS") >= 6, statuses


def test_evidence_names_indices_and_lesson_numbers() -> None:
    result = audit(ZOO / "bad" / "zero_fill.py", "AttentionHead", "head")
    item5 = next(i for i in result["items"] if i["item"] == 5)
    assert re.search(
        r"weights\[\d,\d,\d\] = 0\.\d{3} but position \d is in the future of "
        r"position \d",
        item5["evidence"]["en"],
    ), item5
    assert item5["section"] == 11
    good = audit(ZOO / "good" / "lesson_head.py", "AttentionHead", "head")
    item3 = next(i for i in good["items"] if i["item"] == 3)
    assert item3["evidence"]["en"] == "raw_scores[0,1,0] = 1.131, as in the lesson"


IN_PROCESS = {
    "raises_import.py:X": ("import", "RuntimeError: I have not finished this file yet"),
    "raises_forward.py:AttentionHead": ("call", "NameError: name 'keys' is not defined"),
    "exits.py:X": ("import", "sys.exit(3)"),
    "wrong_signature.py:AttentionHead": (
        "build",
        "expected (embed_dim, head_size|num_heads, context_length) or parameters with such "
        "meanings, found (embed_dim)",
    ),
    "not_a_module.py:make_head": ("build", "must give an nn.Module, got function"),
    "k_dot_T.py:AttentionHead": (
        "call",
        "(the auditor fed x of shape [3, 5, 6]; to reproduce: m = AttentionHead(6, 3, 8).eval(); "
        "m(torch.randn(3, 5, 6)))",
    ),
    "../good/lesson_head.py:Missing": (
        "import",
        "has no class or function called Missing (found: AttentionHead)",
    ),
}
SANDBOX = {
    "loops.py:AttentionHead": ("timeout", "did not finish within 2 s"),
    "os_exit.py:AttentionHead": ("exit", "exited with code 7"),
    "segfault.py:AttentionHead": ("crash", "SIGSEGV"),
    "memory_hog.py:AttentionHead": ("build", "can't allocate memory"),
    "exits.py:X": ("import", "sys.exit(3)"),
    "wrong_signature.py:AttentionHead": ("build", "found (embed_dim)"),
}
LOOPS = "loops.py:AttentionHead"
GOOD_SPEC = "../good/sdpa_fused.py:FastAttention"
#: Only the output check fails here (the input is added after W_O, no item owns it): exit code 1.
DIFFERS_SPEC = "../bad/residual_inside.py:MultiHeadAttention"


@pytest.mark.parametrize("spec", IN_PROCESS)
def test_learner_errors_become_one_line_reports(spec: str) -> None:
    file, name = spec.split(":")
    result = audit((ZOO / "broken" / file).resolve(), name, "auto")
    where, message = IN_PROCESS[spec]
    assert result["status"] == "error" and result["where"] == where, result
    assert message in result["error"]["en"], result["error"]
    assert result["error"]["zh"] and "\n" not in result["error"]["en"]


@pytest.mark.sandbox
def test_sandbox_survives_learner_code() -> None:
    """All sandboxed audits start at once (one test, so pytest-xdist never runs them twice):
    the learner's endless loop, os._exit, segfault, memory hog, sys.exit and wrong signature
    each give a clean one-line report and exit code 2; a correct file in the batch exits 0."""

    def one(spec: str) -> dict[str, Any]:
        # Only the endless loop meets its time limit: the others end by themselves, so a busy
        # machine that slows their start gives no "did not finish" in place of their reason.
        return run_audit(str(ZOO / "broken" / spec), timeout=2 if spec == LOOPS else 120)

    specs = [*SANDBOX, GOOD_SPEC, DIFFERS_SPEC]
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        results = dict(zip(specs, pool.map(one, specs), strict=True))
    for spec, (where, message) in SANDBOX.items():
        result = results[spec]
        assert result["exit_code"] == 2 and result["status"] == "error", (spec, result)
        assert result["where"] == where, (spec, result)
        assert message in result["error"]["en"], (spec, result["error"])
        assert "\n" not in result["error"]["en"] and result["error"]["zh"]
    differs = results[DIFFERS_SPEC]
    assert differs["exit_code"] == 1, differs
    assert not any(i["status"] == "FAIL" for i in differs["items"]), differs["items"]
    assert "the output differs from the reference: on the lesson example output[" in render(
        differs, "en"
    )
    good = results[GOOD_SPEC]
    assert good["exit_code"] == 0, good
    text = render(good, "en")
    assert re.search(r"^ 5\. causal mask\s+PASS", text, re.M), text
    assert "result: 0 FAIL" in text


@pytest.mark.usefixtures("judge_here")
def test_cli_json_exit_1_and_rendered_report() -> None:
    bad = runner.invoke(app, ["audit", str(ZOO / "bad" / "no_scale_loop.py:LoopMHA"), "--json"])
    assert bad.exit_code == 1, bad.output
    data = json.loads(bad.output)
    assert _failures(data) == {4: ["no_scale"]}
    assert "复现它的错误：no_scale（没有缩放）；重读第 8 节" in render(data, "zh")
    assert "reproduced by: no_scale (no scaling); reread section 8" in render(data, "en")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.py:X"], "file not found: nope.py"),
        (["tests"], "expected FILE.py:NAME"),
        (
            [f"{ZOO / 'good' / 'lesson_head.py'}:X", "--kind", "tail"],
            "--kind must be one of auto, head, multihead",
        ),
        (
            [f"{ZOO / 'good' / 'lesson_head.py'}:X", "--timeout", "0"],
            "--timeout must be between 0 and 600",
        ),
    ],
)
def test_bad_arguments_one_line_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["audit", *args])
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("factory", "kind"),
    [
        (AttentionHead, "head"),
        (MultiHeadAttention, "multihead"),
        (CausalSelfAttention, "multihead"),
        (lambda c, h, t: CausalSelfAttention(c, h, t, backend="explicit"), "multihead"),
    ],
    ids=["AttentionHead", "MultiHeadAttention", "CausalSelfAttention-sdpa", "-explicit"],
)
def test_attnlab_own_modules_pass_every_checked_item(factory: Any, kind: str) -> None:
    path = Path(modules.__file__)
    a = build_audit(local_target(factory, path), kind, path)
    items = judge(a)
    assert a.matches_ref and a.reproduced_by == []
    statuses = {i["item"]: i["status"] for i in items}
    assert "FAIL" not in statuses.values(), items
    assert all(s == "PASS" for n, s in statuses.items() if n != 8 or kind == "multihead"), items


@pytest.mark.parametrize(
    ("spec", "kind", "other"),
    [
        ("lesson_mha.py:MultiHeadAttention", "head", "multihead"),
        ("lesson_head.py:AttentionHead", "multihead", "head"),
        ("num_head_arg.py:MultiHead", "head", "multihead"),
    ],
)
def test_wrong_kind_is_named_with_the_kind_to_use(spec: str, kind: str, other: str) -> None:
    file, name = spec.split(":")
    result = audit(ZOO / "good" / file, name, kind)
    assert result["status"] == "error" and result["where"] == "kind", result
    assert f"audit it with --kind {other}" in result["error"]["en"], result["error"]
    assert f"--kind {other}" in result["error"]["zh"]


@pytest.mark.parametrize("stem", ["nan_mask_fill", "off_by_one"])
def test_nan_fails_where_it_appears_and_nothing_later_passes(stem: str) -> None:
    result = audit(ZOO / "bad" / f"{stem}.py", "AttentionHead", "head")
    statuses = {i["item"]: i["status"] for i in result["items"]}
    assert statuses[5] == "FAIL" and "nan" in result["items"][4]["evidence"]["en"]
    assert all(statuses[n] != "PASS" for n in range(6, 11)), statuses


def test_dropout_in_eval_is_its_own_finding_not_a_leak() -> None:
    result = audit(ZOO / "bad" / "dropout_in_eval.py", "AttentionHead", "head")
    assert result["overall"]["finding"] == "nondeterministic"
    assert "dropout" in result["overall"]["evidence"]["en"]
    assert not any(i["status"] == "FAIL" for i in result["items"]), result["items"]


def test_fused_row_order_is_found_and_reported() -> None:
    result = audit(ZOO / "good" / "nanogpt_kqv_rows.py", "CausalSelfAttention", "auto")
    assert "your c_attn rows are k, q, v" in result["layout"], result["layout"]
    assert result["overall"]["status"] == "PASS"


def test_the_report_joins_mistakes_and_a_refusal_the_languages_way() -> None:
    item = {"item": 5, "name": {"zh": "因果掩码", "en": "causal mask"}, "status": "FAIL",
            "evidence": {"zh": "未来位置有权重", "en": "the future has weight"},
            "mistakes": ["no_mask", "mask_inverted"], "section": 10,
            "mistake_titles": [{"zh": "没有掩码", "en": "no mask"},
                               {"zh": "掩码反了", "en": "mask inverted"}]}  # fmt: skip
    result = {"status": "ok", "kind": "module", "items": [item]}
    assert "复现它的错误：no_mask（没有掩码）；mask_inverted（掩码反了）；重读第 10 节" in render(
        result, "zh"
    )
    assert "reproduced by: no_mask (no mask); mask_inverted (mask inverted); reread section 10" in (
        render(result, "en")
    )
    refused = {"status": "error", "error": {"zh": "找不到文件", "en": "no such file"}}
    assert "\n无法审计：找不到文件\n" in render(refused, "zh")
    assert "\ncannot audit: no such file\n" in render(refused, "en")

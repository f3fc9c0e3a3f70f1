"""``attnlab audit`` on classes as their repositories publish them: built by the meaning of their
constructor's parameter names (config objects, rasbt's and the annotated transformer's
signatures), called as their ``forward`` asks (query/key/value, a causal mask in the module's
own convention, ``hidden_states``).

The zoo in ``tests/zoo/real`` holds real-style files: ``good/`` must pass with no item FAILed,
``bad/`` one-bug variants must FAIL the item named on their ``# expect:`` line. Most audits run
in this process through the runner's ``audit()``; the CLI and the sandbox are run once each.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from attnlab.audit import run_audit
from attnlab.audit.call_probe import settle
from attnlab.audit.calling import Convention, plan
from attnlab.audit.configs import LessonConfig
from attnlab.audit.construct import BuildError, arguments
from attnlab.audit.loader import LearnerError
from attnlab.audit.package import dotted_name, package_files, package_root
from attnlab.audit.param_names import Symbol, kind_of, parse_init, values
from attnlab.audit.remote import build, local_target
from attnlab.audit.report import render
from attnlab.audit.runner import audit, with_names
from attnlab.cli.main import app

REAL = Path(__file__).parent / "zoo" / "real"
GOOD = sorted((REAL / "good").glob("*.py"))
BAD = sorted((REAL / "bad").glob("*.py"))

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _name(path: Path) -> str:
    return re.findall(r"^class (\w+)", path.read_text(encoding="utf-8"), re.M)[-1]


def _expect(path: Path) -> str:
    found = re.search(r"^# expect: (.*)$", path.read_text(encoding="utf-8"), re.M)
    assert found, f"{path.name} has no '# expect:' line"
    return found.group(1)


def _init(path: Path) -> str | None:
    found = re.search(r"\binit=(.*)$", _expect(path))
    return found.group(1) if found else None


def _audit(path: Path) -> dict[str, Any]:
    return with_names(audit(path, _name(path), "auto", init=_init(path)))


def _fails(result: dict[str, Any]) -> dict[int, list[str]]:
    return {i["item"]: i["mistakes"] for i in result["items"] if i["status"] == "FAIL"}


def test_zoo_has_good_and_bad_real_files() -> None:
    assert len(GOOD) >= 8 and len(BAD) >= 10


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_real_class_passes_as_published(path: Path) -> None:
    result = _audit(path)
    assert result["status"] == "ok", result
    assert _fails(result) == {}, render({**result, "target": path.name}, "en")
    assert result["overall"]["status"] == "PASS", result["overall"]
    call = result["call"]
    style = re.search(r"\bcall=(\w+)", _expect(path))
    forward = call["forward"]["en"]
    if style:  # the mask convention the module itself uses was found
        words = {
            "keep_bool": "bool, True = may attend",
            "additive_inf": "additive, 0 / -inf",
            "blocked_bool": "bool, True = blocked",
            "lengths": "valid lengths",
        }
        assert words[style.group(1)] in forward, forward
    built = re.search(r"\bbuild=(\w+)", _expect(path))
    if built:  # the file's own config class, sizes replaced
        assert re.search(rf"\b\w+={built.group(1)}\(", call["build"]), call
        if "n_embd" in call["build"]:
            assert "n_embd=4" in call["build"] and "n_head=2" in call["build"], call


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_real_one_bug_variant_fails_its_item(path: Path) -> None:
    found = re.match(r"item=(\d+) mistake=(\w+|-)", _expect(path))
    assert found, path
    item, mistake = int(found.group(1)), found.group(2)
    result = _audit(path)
    assert result["status"] == "ok", result
    fails = _fails(result)
    assert item in fails, render({**result, "target": path.name}, "en")
    if mistake != "-":
        assert mistake in fails[item], fails
    assert result["overall"]["status"] == "FAIL"
    text = render({**result, "target": path.name}, "en")
    assert "no item explains" not in text


def test_mask_no_convention_makes_causal_is_said_and_item_5_fails() -> None:
    path = REAL / "bad" / "annotated_mask_ignored.py"
    result = _audit(path)
    assert "no mask convention tried made the module causal" in result["call"]["forward"]["en"]
    assert result["call"]["forward"]["zh"]
    assert 5 in _fails(result)


def test_time_first_module_is_found_and_a_batch_first_one_never_taken_for_it() -> None:
    """A batch-first attention fed [T, B, C] attends across the batch: probing must not take a
    buggy batch-first module for a time-first one (its bug would show as batch mixing)."""
    good = _audit(REAL / "good" / "labml_time_first.py")
    assert "x passed time first, [T, B, C]" in good["call"]["forward"]["en"]
    assert "M [T, T, 1]" in good["call"]["forward"]["en"]
    for stem in ("annotated_mask_ignored", "additive_mask_after_softmax", "blocked_zero_fill"):
        bad = _audit(REAL / "bad" / f"{stem}.py")
        assert "time first" not in bad["call"]["forward"]["en"], bad["call"]
        assert 9 not in _fails(bad), stem


def test_hf_attention_mask_is_left_to_the_module() -> None:
    """An optional ``attention_mask`` is HF's padding mask: a module without its own causal
    mask is not made causal by the auditor's mask."""
    result = _audit(REAL / "good" / "hf_hidden_states.py")
    assert "attention_mask is a padding mask" in result["call"]["forward"]["en"]
    assert result["kind"] == "multihead"
    assert 5 in _fails(_audit(REAL / "bad" / "hf_no_causal_bias.py"))


def test_unknown_constructor_names_exit_2_naming_the_parameter_and_init() -> None:
    path = REAL / "good" / "unknown_names.py"
    result = audit(path, "Attn", "auto")
    assert result["status"] == "error" and result["where"] == "build", result
    en = result["error"]["en"]
    assert "cannot tell what parameter a of Attn(a, b, c) means" in en
    assert '--init "a=?, b=?, c=?"' in en and "factory" in en
    assert "\n" not in en and result["error"]["zh"]


class Unknown:
    def __init__(self, a: int, b: int, c: int) -> None:
        raise AssertionError("never called by guesswork")


class Rasbt:
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):  # type: ignore[no-untyped-def]
        pass


class Annotated:
    def __init__(self, h, d_model, dropout=0.1):  # type: ignore[no-untyped-def]
        pass


class Lucid:
    def __init__(self, dim, heads=8, dim_head=64, dropout=0.0):  # type: ignore[no-untyped-def]
        pass


class OneHead:
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):  # type: ignore[no-untyped-def]
        pass


class Hf:
    def __init__(self, config, is_cross_attention=False, layer_idx=None):  # type: ignore[no-untyped-def]
        pass


@pytest.mark.parametrize(
    ("target", "kind", "want"),
    [
        (Rasbt, "multihead",
         {"d_in": 12, "d_out": 12, "context_length": 8, "dropout": 0.0, "num_heads": 3}),
        (Annotated, "head", {"h": 3, "d_model": 12, "dropout": 0.0}),
        (Lucid, "multihead", {"dim": 12, "heads": 3, "dim_head": 4, "dropout": 0.0}),
        (OneHead, "head", {"d_in": 12, "d_out": 3, "context_length": 8, "dropout": 0.0}),
        (OneHead, "multihead", {"d_in": 12, "d_out": 12, "context_length": 8, "dropout": 0.0}),
    ],
    ids=["rasbt", "annotated", "lucid", "one-head", "one-head-as-multihead"],
)  # fmt: skip
def test_parameters_are_set_by_meaning(target: Any, kind: str, want: dict[str, Any]) -> None:
    plan_ = arguments(target, kind, (12, 3, 8))
    assert plan_.args == [] and plan_.kwargs == want


def test_config_parameter_gets_an_object_with_every_common_name() -> None:
    plan_ = arguments(Hf, "head", (12, 3, 8))
    assert plan_.config_slot == "config" and plan_.kwargs == {}
    config = plan_.configs[-1][0]
    assert isinstance(config, LessonConfig)
    assert (config.n_embd, config.hidden_size, config.d_model) == (12, 12, 12)
    assert (config.n_head, config.num_attention_heads) == (3, 3)
    assert (config.block_size, config.max_position_embeddings) == (8, 8)
    assert config.attn_pdrop == config.resid_pdrop == config.dropout == 0.0
    assert config["emb_dim"] == 12 and config.get("nope", 5) == 5
    assert getattr(config, "nope", None) is None
    with pytest.raises(AttributeError, match="the auditor's config has no attribute 'nope'"):
        config.nope  # noqa: B018


def test_init_sets_config_attributes_the_auditor_does_not_know() -> None:
    config = arguments(Hf, "head", (12, 3, 8), parse_init("rotary_dim=D, theta=1e4")).configs
    assert (config[-1][0].rotary_dim, config[-1][0].theta) == (4, 1e4)
    assert config[-1][1].endswith("rotary_dim=4, theta=10000.0)")
    with pytest.raises(AttributeError, match=re.escape('--init "rotary_dim=..."')):
        arguments(Hf, "head", (12, 3, 8)).configs[-1][0].rotary_dim  # noqa: B018


def test_unknown_names_are_never_called_positionally() -> None:
    with pytest.raises(BuildError, match="cannot tell what parameter a of Unknown"):
        arguments(Unknown, "multihead", (12, 3, 8))
    plan_ = arguments(Unknown, "head", (12, 3, 8), parse_init("a=C, b=H, c=T"))
    assert plan_.kwargs == {"a": 12, "b": 3, "c": 8}
    with pytest.raises(BuildError, match="--init names z, expected one of Unknown's"):
        arguments(Unknown, "head", (12, 3, 8), parse_init("z=C"))


def test_signature_without_a_head_size_or_count_is_named() -> None:
    def only(embed_dim):  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(BuildError, match=r"found \(embed_dim\): none gives the head count"):
        arguments(only, "head", (12, 3, 8))
    with pytest.raises(BuildError, match=r"found \(\)"):
        arguments(lambda: None, "head", (12, 3, 8))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("d_model=C, h=H", {"d_model": "C", "h": "H"}),
        ("dim = 16 , drop=0.1, causal=True, name='x'", {"dim": 16, "drop": 0.1, "causal": True,
                                                       "name": "x"}),
        ("", {}),
    ],
)  # fmt: skip
def test_parse_init(text: str, want: dict[str, Any]) -> None:
    found = parse_init(text)
    assert found == want
    assert all(isinstance(v, Symbol) for k, v in found.items() if want[k] in ("C", "H"))


@pytest.mark.parametrize("text", ["d_model", "1x=C", "d=foo", "d=[1"])
def test_parse_init_refuses_malformed_pairs(text: str) -> None:
    with pytest.raises(ValueError, match="--init"):
        parse_init(text)


def test_kind_from_names() -> None:
    assert kind_of(["config"]) == "multihead"
    assert kind_of(["d_in", "d_out", "context_length", "dropout", "num_heads"]) == "multihead"
    assert kind_of(["embed_dim", "head_size", "context_length"]) == "head"
    assert kind_of(["d_in", "d_out"]) is None
    assert values(["a"], "head", (12, 3, 8), parse_init("b=H"))["H"] == 3


def _params(fn: Any) -> list[list[Any]]:
    sig = inspect.signature(fn)
    return [[p.name, p.kind.name, p.default is not p.empty] for p in sig.parameters.values()]


def test_forward_call_plans() -> None:
    def qkv(query, key, value, mask=None):  # type: ignore[no-untyped-def]
        pass

    def hf(hidden_states, layer_past=None, attention_mask=None, head_mask=None):  # type: ignore[no-untyped-def]
        pass

    def needs(x, lengths_table):  # type: ignore[no-untyped-def]
        pass

    def rotary(x, freqs_cos, freqs_sin, mask=None):  # type: ignore[no-untyped-def]
        pass

    def keywords(*, query, key, value, mask=None):  # type: ignore[no-untyped-def]
        pass

    assert plan(_params(qkv)) == Convention(qkv=True, mask_name="mask", optional=True)
    assert plan(_params(hf)) == Convention(
        mask_name="attention_mask", optional=True, left_out="attention_mask"
    )
    by_name = plan(_params(keywords))
    assert by_name.inputs == ("query", "key", "value") and by_name.mask_name == "mask"
    assert by_name.python() == "query=x, key=x, value=x"
    with pytest.raises(LearnerError, match="needs lengths_table, which the auditor cannot give"):
        plan(_params(needs))
    turned = plan(_params(rotary))  # rotary tables are given (at angle 0), not refused
    assert turned.positions == ("freqs_cos", "freqs_sin") and turned.mask_name == "mask"


def test_a_forward_x_module_is_probed_for_its_layout_only() -> None:
    """forward(x) gets no mask: it is called batch first unless only time first makes it
    causal with its prompts apart (a causal module fed the other layout reads prompt 0 from
    prompt 1)."""
    for stem, time_first in (("good/time_first_buffer", True), ("good/nanogpt_config", False),
                             ("bad/time_first_buffer_no_scale", True),
                             ("bad/nanogpt_mask_inverted", False)):  # fmt: skip
        result = _audit(REAL / f"{stem}.py")
        forward = result["call"]["forward"]
        assert ("x passed time first, [T, B, C]" in forward["en"]) == time_first, (stem, forward)
        assert ("时间在前" in forward["zh"]) == time_first
        assert forward["en"].startswith("forward(x)") and "M [" not in forward["en"]


def test_masks_in_each_convention() -> None:
    keep = Convention(mask_name="m", style="keep_bool", dims="1TT").mask(2, 3)
    assert keep is not None and keep.shape == (1, 3, 3) and bool(keep[0, 2, 0])
    add = Convention(mask_name="m", style="additive_inf", dims="11TT").mask(2, 3)
    assert add is not None and add.shape == (1, 1, 3, 3) and float(add[0, 0, 0, 1]) == -float("inf")
    lengths = Convention(mask_name="valid_lens", style="lengths").mask(2, 3)
    assert lengths is not None and lengths.tolist() == [[1, 2, 3], [1, 2, 3]]


@pytest.mark.usefixtures("judge_here")
def test_cli_init_and_bad_init(tmp_path: Path) -> None:
    runner = CliRunner()
    path = REAL / "good" / "unknown_names.py"
    bad = runner.invoke(app, ["audit", f"{path}:Attn", "--init", "a C"])
    assert bad.exit_code == 2 and "--init expects name=value pairs" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    refused = runner.invoke(app, ["audit", f"{path}:Attn", "--json"])
    assert refused.exit_code == 2, refused.output
    assert "cannot tell what parameter a" in json.loads(refused.output)["error"]["en"]
    done = runner.invoke(app, ["audit", f"{path}:Attn", "--init", "a=C, b=H, c=T", "--lang", "en"])
    assert done.exit_code == 0, done.output
    assert "built as: Attn(4, 2, 8)" in done.output


@pytest.mark.sandbox
def test_sandboxed_audit_calls_with_the_module_mask() -> None:
    result = run_audit(f"{REAL / 'good' / 'annotated_qkv_mask.py'}:MultiHeadedAttention")
    assert result["exit_code"] == 0, result
    text = render(result, "zh")
    assert "构造：MultiHeadedAttention(h=2, d_model=4, dropout=0.0)" in text
    assert "调用：forward(x, x, x, mask=M)，M [1, T, T]" in text


@pytest.mark.parametrize(
    "stem", ["labml_tf_softmax_heads", "labml_tf_softmax_batch", "masked_softmax_heads"]
)
def test_softmax_off_the_keys_is_item_6_not_the_mask(stem: str) -> None:
    """Under the causal mask, NaN at every query with a masked key and a finite last query is
    the softmax's doing (item 6), found by probing in either layout; item 5 is not failed."""
    result = _audit(REAL / "bad" / f"{stem}.py")
    forward = result["call"]["forward"]
    assert "the weights are not normalised over the keys (see item 6)" in forward["en"], forward
    assert "M [T, T" in forward["en"] and "no mask convention" not in forward["en"], forward
    assert "权重不是沿 Key 轴归一化的" in forward["zh"]
    fails = _fails(result)
    assert 6 in fails and 5 not in fails, fails
    six = next(i for i in result["items"] if i["item"] == 6)["evidence"]
    assert "gives NaN and only the last query (no key masked) a finite value" in six["en"]
    assert re.search(r"softmax ran over dim=\d of a \[\d, \d, \d, \d\] tensor", six["en"]), six
    assert "while a query has T = 5 keys" in six["en"] and "Softmax 沿形状" in six["zh"]
    assert "(see item 6)" in result["overall"]["evidence"]["en"], result["overall"]


@pytest.mark.parametrize("stem", ["masked_softmax_heads_big", "labml_tf_softmax_heads_big"])
def test_finite_fill_with_softmax_off_the_keys_is_item_6(stem: str) -> None:
    """A −1e9 fill leaves no NaN: the softmax input, blocked exactly at the future under the
    tried mask (in either layout), is what shows the mask's convention; the future weights
    are item 6's."""
    result = _audit(REAL / "bad" / f"{stem}.py")
    assert "the softmax input blocks exactly the future" in result["call"]["forward"]["en"]
    fails = _fails(result)
    assert 6 in fails and 5 not in fails, fails
    five = next(i for i in result["items"] if i["item"] == 5)
    assert five["status"] == "PASS" or "blocks exactly the future" in five["evidence"]["en"], five


class _KeysOffByOne(torch.nn.Module):
    """Softmax over the keys, but the mask also blocks the diagonal: row 0 is NaN."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores = x @ x.transpose(-2, -1)  # [B, T, T]
        scores = scores.masked_fill(mask.tril(-1) == 0, float("-inf"))
        return torch.softmax(scores, dim=-1) @ x  # [B, T, C]


class _HeadsAxis(torch.nn.Module):
    """Scores [B, 2, T, T] normalised over the two copies (the heads axis)."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores = torch.stack([x @ x.transpose(-2, -1), 2 * x @ x.transpose(-2, -1)], 1)
        scores = scores.masked_fill(mask == 0, float("-inf"))  # [B, 2, T, T]
        return (torch.softmax(scores, dim=1) @ x.unsqueeze(1)).sum(1)  # [B, T, C]


def test_nan_only_at_row_0_is_never_taken_for_the_softmax_axis() -> None:
    params = [["x", "POSITIONAL_OR_KEYWORD", False], ["mask", "POSITIONAL_OR_KEYWORD", False]]
    for module, want in ((_KeysOffByOne(), None), (_HeadsAxis(), "nan")):

        def make(embed_dim: int, head_size: int, context_length: int) -> torch.nn.Module:
            return module  # noqa: B023

        mirror = build(local_target(make, Path(__file__)), "head", (4, 2, 8), Path(__file__))
        conv = settle(mirror, params, Path(__file__), 4)
        assert conv.off_keys == want, (type(module).__name__, conv)


PACKAGES = REAL / "packages"


@pytest.mark.parametrize(
    ("file", "name"),
    [("mingpt/model.py", "CausalSelfAttention"), ("mingpt/models/attention.py", "Attention")],
)
def test_a_file_inside_a_package_imports_its_own_package(file: str, name: str) -> None:
    """minGPT's ``from mingpt.utils import CfgNode`` (and a relative import two packages
    deep): the folder above the package root goes on the learner's sys.path."""
    assert package_root(PACKAGES / file) == (PACKAGES / "mingpt").resolve()
    result = with_names(audit(PACKAGES / file, name, "auto"))
    assert result["status"] == "ok", result
    assert _fails(result) == {} and result["overall"]["status"] == "PASS", result["overall"]


def test_package_root_and_name(tmp_path: Path) -> None:
    (tmp_path / "top" / "inner").mkdir(parents=True)
    for folder in (tmp_path / "top", tmp_path / "top" / "inner"):
        (folder / "__init__.py").write_text("")
    (tmp_path / "top" / "inner" / "m.py").write_text("")
    (tmp_path / "loose.py").write_text("")
    assert package_root(tmp_path / "top" / "inner" / "m.py") == (tmp_path / "top").resolve()
    assert dotted_name(tmp_path / "top" / "inner" / "m.py") == "top.inner.m"
    assert package_root(tmp_path / "loose.py") is None
    assert dotted_name(tmp_path / "loose.py") is None
    assert [p.name for p in package_files(tmp_path / "top" / "inner" / "m.py")] == [
        "__init__.py", "__init__.py", "m.py"
    ]  # fmt: skip


#: Appended to the copied mingpt/model.py: what the learner's process can see, printed once.
_LOOK = """
import json as _json, os as _os
if not _os.environ.get("_ATTNLAB_LOOKED"):
    _os.environ["_ATTNLAB_LOOKED"] = "1"
    print("SEEN " + _json.dumps({{name: _os.path.exists(p) for name, p in {paths!r}.items()}}))
"""


def test_sandbox_shows_the_package_tree_read_only_and_nothing_else(
    tmp_path: Path, isolated: None
) -> None:
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(PACKAGES / "mingpt", repo / "mingpt")
    (repo / "mingpt" / "notes.txt").write_text("not code")
    (repo / "README.md").write_text("outside the package")
    paths = {
        "utils": str(repo / "mingpt" / "utils.py"),
        "deep": str(repo / "mingpt" / "models" / "attention.py"),
        "notes": str(repo / "mingpt" / "notes.txt"),
        "readme": str(repo / "README.md"),
    }
    model = repo / "mingpt" / "model.py"
    model.write_text(model.read_text() + _LOOK.format(paths=paths))
    result = run_audit(f"{model}:CausalSelfAttention")
    assert result["exit_code"] == 0 and result["isolated"], result
    line = next(
        ln for ln in result["output"]["stdout"]["text"].splitlines() if ln.startswith("SEEN ")
    )
    seen = json.loads(line.removeprefix("SEEN "))
    assert seen == {"utils": True, "deep": True, "notes": False, "readme": False}, seen


SCRIPT = REAL / "scripts" / "gpt.py"
_RUNS_CODE = "the file runs code when imported; put the class in its own file, or that code under "


@pytest.mark.sandbox
def test_a_script_that_reads_its_data_at_import_stops_with_one_line() -> None:
    result = audit(SCRIPT, "Head", "auto")
    assert result["status"] == "error" and result["where"] == "import", result
    en, zh = result["error"]["en"], result["error"]["zh"]  # type: ignore[index]
    assert "FileNotFoundError" in en and "(gpt.py:15: with open(" in en, en
    assert en.endswith(_RUNS_CODE + '`if __name__ == "__main__":`'), en
    assert "这个文件在被导入时就运行代码" in zh and "\n" not in en + zh
    done = CliRunner().invoke(app, ["--lang", "en", "audit", f"{SCRIPT}:Head"])
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output and _RUNS_CODE in done.output


def test_a_failing_import_statement_is_not_called_code_run_at_import(tmp_path: Path) -> None:
    (tmp_path / "uses.py").write_text("import torch\nimport not_installed_anywhere\n")
    result = audit(tmp_path / "uses.py", "Head", "auto")
    en = result["error"]["en"]  # type: ignore[index]
    assert result["status"] == "error" and en.startswith(
        "your code imports not_installed_anywhere (uses.py:2: import not_installed_anywhere)"
    ), en
    assert "runs code when imported" not in en and "torch, numpy" in en, result


def test_a_missing_library_in_a_sibling_module_names_the_sibling_line(tmp_path: Path) -> None:
    """minimind's LMConfig.py imports transformers: the line named is the sibling's import, not
    the line of the audited file that imports the sibling; the zh reason reads as Chinese."""
    pkg = tmp_path / "mini"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "LMConfig.py").write_text("import math\nfrom transformers import PretrainedConfig\n")
    (pkg / "model.py").write_text("import torch\nfrom .LMConfig import PretrainedConfig\n")
    result = audit(pkg / "model.py", "Attention", "auto")
    en, zh = result["error"]["en"], result["error"]["zh"]  # type: ignore[index]
    assert en.startswith(
        "your code imports transformers (LMConfig.py:2: from transformers import "
        "PretrainedConfig) while importing the file"
    ), en
    assert "导入了 transformers（LMConfig.py:2: from transformers import PretrainedConfig）" in zh
    assert "torch、numpy" in zh and "\n" not in en


@pytest.mark.sandbox
def test_a_script_that_trains_at_import_runs_out_of_time_importing(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text("import torch\nstep = 0\nwhile True:\n    step += 1\n")
    result = run_audit(f"{path}:Head", timeout=1)
    assert result["exit_code"] == 2 and result["where"] == "import", result
    assert result["error"]["en"] == (
        "your file did not finish importing within 1 s: " + _RUNS_CODE
        + '`if __name__ == "__main__":`'
    ), result  # fmt: skip
    assert "导入完成" in result["error"]["zh"]

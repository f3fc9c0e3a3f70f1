"""``attnlab audit`` reads the layers learners use, as their repositories write them: roles
from the full dotted name (``query.linear``, ``to_out.0``), GPT-2's ``Conv1D``,
``nn.LazyLinear``, bare ``nn.Parameter`` Q/K/V next to an ``nn.Linear`` out_proj; and a layout
it cannot read never gives exit code 0.

The zoo in ``tests/zoo/real_layers`` holds real-style files, each with an ``# expect:`` line:
``exit=0`` (correct), ``exit=2`` (correct but unreadable: the audit cannot decide) or
``item=N`` (one bug, owned by item N: that item FAILs and the exit code is 1). They are audited
in this process through the runner's ``audit()``; a few go through the sandbox as well.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from attnlab.audit import probe, run_audit
from attnlab.audit.layers import Conv1D, recognise, set_weight, weight
from attnlab.audit.names import role_of_path
from attnlab.audit.outcome import exit_code
from attnlab.audit.report import render
from attnlab.audit.runner import audit, with_names

REAL = Path(__file__).parent / "zoo" / "real_layers"
FILES = sorted(REAL.glob("*.py"))

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _target(path: Path) -> str:
    return re.findall(r"^class (\w+)", path.read_text(encoding="utf-8"), re.M)[-1]


def _expect(path: Path) -> tuple[str, int]:
    """``("exit", code)`` or ``("item", n)`` from the file's ``# expect:`` line."""
    found = re.search(r"^# expect: (exit|item)=(\d+)", path.read_text(encoding="utf-8"), re.M)
    assert found, f"{path.name} has no '# expect: exit=N' or '# expect: item=N' line"
    return found.group(1), int(found.group(2))


def _failures(result: dict[str, Any]) -> dict[int, str]:
    return {i["item"]: i["evidence"]["en"] for i in result["items"] if i["status"] == "FAIL"}


def test_zoo_has_each_layout_correct_and_broken() -> None:
    expected = [_expect(p) for p in FILES]
    assert len(FILES) >= 14
    assert sum(e == ("exit", 0) for e in expected) >= 6
    assert sum(e[0] == "item" for e in expected) >= 6
    assert sum(e == ("exit", 2) for e in expected) >= 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_real_layout_gets_its_verdict(path: Path) -> None:
    what, n = _expect(path)
    result = with_names(audit(path, _target(path), "auto"))
    assert result["status"] == "ok", result
    code, failed, whole = exit_code(result), _failures(result), result["overall"]
    text = json.dumps(result, ensure_ascii=False)
    assert "no item explains" not in text and "uninitialized parameter" not in text
    if what == "item":  # one bug: the item that owns it FAILs, and nothing says PASS overall
        assert n in failed, (failed, whole)
        assert code == 1 and whole["status"] != "PASS", whole
    elif n == 0:  # correct: every projection read, output equal to the reference
        assert failed == {} and whole["status"] == "PASS", (failed, whole)
        assert code == 0 and result["layout"], result["layout"]
    else:  # correct but unreadable: no verdict either way, and never exit 0
        assert failed == {} and whole["status"] == "NOT CHECKED", (failed, whole)
        assert code == 2 and "exit 0" not in whole["evidence"]["en"], whole
        assert "exits 2" in render({**result, "exit_code": code}, "en")


def test_names_at_any_depth_give_the_role() -> None:
    said = {
        "query.linear": "q",
        "heads.0.key": "k",
        "blocks.attn.q_proj": "q",
        "attn.proj.value": "v",
        "to_out.0": "o",
        "attn.c_proj": "o",
        "attn.c_attn": "qkv",
        "output": "o",
        "w_qs": "q",  # attention-is-all-you-need-pytorch: w_qs, w_ks, w_vs, fc
        "fc": "o",
        "k_lin": "k",  # DistilBERT: q_lin, k_lin, v_lin, out_lin
        "out_lin": "o",
        "output.dense": "o",  # BERT's BertSelfOutput
        "query.proj": "q",  # the wrapper names the role; "proj" is its inner layer
        "query.key": None,  # the parts disagree
        "heads.0": None,
        "linear": None,
    }
    assert {name: role_of_path(name) for name in said} == said


def test_a_layer_named_for_a_role_is_never_matched_to_another() -> None:
    class Half(nn.Module):  # two wrappers name their role, the third layer says nothing
        def __init__(self) -> None:
            super().__init__()
            self.query = nn.Sequential(nn.Linear(6, 6))
            self.key = nn.Sequential(nn.Linear(6, 6))
            self.third = nn.Linear(6, 6)

    readings = probe.candidates(Half(), "head", 6, 6)
    assert readings, "no reading at all"
    assert all(q == "query.0" and k == "key.0" and v == "third" for q, k, v, _ in readings)


class _Conv1D(nn.Module):  # GPT-2's layer, as transformers.pytorch_utils has it
    def __init__(self, nf: int, nx: int) -> None:
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf))
        self.bias = nn.Parameter(torch.randn(nf))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size_out = (*x.size()[:-1], self.nf)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)


class _OwnLinear(nn.Module):  # weight stored [out, in], as nn.Linear stores it
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T


class _Gated(nn.Module):  # a weight and a bias, but not a linear map
    def __init__(self, n: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, n))
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.weight + self.bias)


@pytest.mark.parametrize(
    ("layer", "want"),
    [
        (_Conv1D(12, 4), ("conv1d", {"in": 4, "out": 12, "bias": True})),
        (_Conv1D(4, 4), ("conv1d", {"in": 4, "out": 4, "bias": True})),
        (_OwnLinear(4, 6), ("linear", {"in": 4, "out": 6, "bias": False})),
        (_OwnLinear(5, 5), ("linear", {"in": 5, "out": 5, "bias": False})),
        (_Gated(4), None),
        (nn.LayerNorm(4), None),
    ],
    ids=["conv1d", "conv1d_square", "own_linear", "own_linear_square", "gated", "layernorm"],
)
def test_a_layer_is_recognised_by_what_it_computes(layer: nn.Module, want: object) -> None:
    before = {n: p.detach().clone() for n, p in layer.named_parameters()}
    assert recognise(layer, Path(__file__)) == want
    after = dict(layer.named_parameters())
    assert all(torch.equal(after[n], p) for n, p in before.items()), "the weights changed"


def test_conv1d_weights_read_and_load_in_formula_convention() -> None:
    layer, w = Conv1D(4, 12), torch.randn(4, 12)  # [C, 3·width]
    with torch.no_grad():
        set_weight(layer, w)
    assert torch.equal(weight(layer), w) and torch.equal(layer.weight, w)
    linear = nn.Linear(4, 12)
    with torch.no_grad():
        set_weight(linear, w)
    x = torch.randn(2, 3, 4)
    assert torch.allclose(layer(x) - layer.bias, x @ w) and torch.equal(weight(linear), w)


@pytest.mark.parametrize(
    ("result", "code"),
    [
        ({"status": "ok", "items": [], "overall": {"status": "PASS"}}, 0),
        ({"status": "ok", "items": [], "overall": {"status": "NOT CHECKED"}}, 2),
        ({"status": "ok", "items": [{"status": "FAIL"}], "overall": {"status": "NOT CHECKED"}}, 1),
        ({"status": "ok", "items": [{"status": "PASS"}], "overall": {"status": "FAIL"}}, 1),
        ({"status": "ok", "items": [{"status": "PASS"}]}, 2),
        ({"status": "error", "items": [], "overall": {"status": "PASS"}}, 2),
    ],
)
def test_exit_0_only_when_the_output_check_passes(result: dict[str, Any], code: int) -> None:
    assert exit_code(result) == code


@pytest.mark.sandbox
def test_sandboxed_audits_read_conv1d_lazy_layers_and_refuse_unreadable_ones() -> None:
    """Through the real processes: the learner's process tells Conv1D apart and materialises
    LazyLinear layers before the judge sees them; an unreadable layout exits 2."""
    specs = {
        "gpt2_conv1d.py:GPT2Attention": 0,
        "gpt2_conv1d_no_cproj.py:GPT2Attention": 1,
        "d2l_lazy.py:MultiHeadAttention": 0,
        "lens_params.py:LensAttention": 2,
    }

    def one(spec: str) -> dict[str, Any]:
        return run_audit(str(REAL / spec), timeout=20)

    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        results = dict(zip(specs, pool.map(one, specs), strict=True))
    for spec, code in specs.items():
        result = results[spec]
        assert result["status"] == "ok", (spec, result)
        assert result["exit_code"] == code, (spec, result["overall"], _failures(result))
    assert "c_attn" in results["gpt2_conv1d.py:GPT2Attention"]["layout"]
    assert "W_O = c_proj" in results["gpt2_conv1d.py:GPT2Attention"]["layout"]
    assert 8 in _failures(results["gpt2_conv1d_no_cproj.py:GPT2Attention"])


def test_a_second_projection_after_w_o_is_loaded_as_the_identity_and_said() -> None:
    good = audit(REAL / "mha_class_proj.py", "MHAPyTorchClass", "multihead")
    assert good["overall"]["status"] == "PASS", good["overall"]
    assert str(good["layout"]).endswith("; proj set to the identity"), good["layout"]
    # Without a W_O found, nothing is set to the identity: the output check cannot decide.
    unread = audit(REAL / "linear_qkv_lens_wo.py", "SplitOutput", "multihead")
    assert "identity" not in str(unread["layout"]), unread["layout"]
    assert unread["overall"]["finding"] == "partial_reference", unread["overall"]


def test_a_lazy_module_whose_first_forward_fails_says_what_was_fed(tmp_path: Path) -> None:
    src = (
        "import torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self, embed_dim, num_heads, context_length):\n"
        "        super().__init__()\n        self.W_q = nn.LazyLinear(embed_dim)\n\n"
        "    def forward(self, x):\n        raise ValueError('not written yet')\n"
    )
    (tmp_path / "lazy.py").write_text(src, encoding="utf-8")
    result = audit(tmp_path / "lazy.py", "M", "multihead")
    assert (result["status"], result["where"]) == ("error", "call"), result
    assert "ValueError: not written yet" in result["error"]["en"], result["error"]
    assert "the auditor fed x of shape [2, 2, 4]" in result["error"]["en"], result["error"]
    assert "uninitialized" not in result["error"]["en"]

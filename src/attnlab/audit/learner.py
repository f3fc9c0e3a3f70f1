"""The learner's process: import the learner's file, then build and run its module on request.

``python -m attnlab.audit.learner REQUESTS REPLIES READY MEMORY_MB CPU_SECONDS``.

Started by the keeper (inside bubblewrap where it can run, see
:mod:`~attnlab.audit.sandbox`) next to the judging process, which never imports the
learner's file. This process computes no reference and judges nothing: it answers the judge's
requests over a pipe (:mod:`~attnlab.audit.wire`) with raw data only:

* ``import``: the target's name and constructor parameter names;
* ``build``: a module at given sizes, described as its layers and parameters (a *skeleton*);
* ``forward``: the module's output for an input the judge sends, with the judge's parameter
  values loaded first, and the torch calls the forward made (:mod:`record`).

Every reply also lists the globals the learner's file replaced (``math.sqrt``, ``F.softmax``,
the default dtype, ...), which the report names. Learner failures travel as
``{"error": {"zh", "en", "where"}}``.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from attnlab.audit.processes import die_with_parent

#: Globals a learner's file might replace, as (module path, attribute).
WATCHED = (
    ("math", "sqrt"), ("math", "exp"), ("math", "log"),
    ("torch", "sqrt"), ("torch", "exp"), ("torch", "softmax"), ("torch", "matmul"),
    ("torch", "bmm"), ("torch", "einsum"), ("torch", "tril"), ("torch", "triu"),
    ("torch", "ones"), ("torch", "zeros"), ("torch", "masked_fill"), ("torch", "cat"),
    ("torch", "where"), ("torch", "rsqrt"),
    ("torch.nn.functional", "softmax"), ("torch.nn.functional", "linear"),
    ("torch.nn.functional", "scaled_dot_product_attention"), ("torch.nn.functional", "dropout"),
    ("torch.Tensor", "softmax"), ("torch.Tensor", "__matmul__"), ("torch.Tensor", "matmul"),
    ("torch.Tensor", "masked_fill"), ("torch.Tensor", "masked_fill_"),
    ("torch.Tensor", "__truediv__"), ("torch.Tensor", "transpose"), ("torch.Tensor", "view"),
    ("torch.nn.Linear", "forward"), ("torch.nn.Module", "__call__"),
)  # fmt: skip


def _limit(memory_mb: int, cpu_seconds: int) -> None:
    """Cap this process and everything it starts (limits are inherited): address space, CPU
    time, tasks, open files, file size, core files. The keeper caps the tree's sum."""
    from attnlab.audit.sandbox import FILE_BYTES, OPEN_FILES, TASKS

    cap = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a segfault must not leave a core file
    resource.setrlimit(resource.RLIMIT_NPROC, (TASKS, TASKS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))


class Watch:
    """The watched globals as they were before the learner's file ran."""

    def __init__(self) -> None:
        import torch

        self.before = {f"{m}.{a}": self._get(m, a) for m, a in WATCHED}
        self.dtype = torch.get_default_dtype()

    @staticmethod
    def _get(owner: str, attr: str) -> Any:
        import torch

        objects = {
            "math": math,
            "torch": torch,
            "torch.nn.functional": torch.nn.functional,
            "torch.Tensor": torch.Tensor,
            "torch.nn.Linear": torch.nn.Linear,
            "torch.nn.Module": torch.nn.Module,
        }
        return getattr(objects[owner], attr, None)

    def changed(self) -> list[str]:
        """What differs now: ``"math.sqrt"``-style names, ``"default_dtype=torch.float64"``."""
        import torch

        names = [n for n, v in self.before.items() if self._get(*n.rsplit(".", 1)) is not v]
        if torch.get_default_dtype() != self.dtype:
            names.append(f"default_dtype={torch.get_default_dtype()}")
        return names


def skeleton(module: Any, path: Path | None = None) -> list[dict[str, Any]]:
    """The module's layers in ``named_modules`` order: name, kind, sizes and own parameters.

    Args:
        module: the learner's built module.
        path: the learner's file; when given, a leaf layer (not the module itself) of the
            learner's own class that computes a linear map (GPT-2's ``Conv1D``...) is run to
            tell its weight layout (:func:`~attnlab.audit.layers.recognise`).

    Returns:
        One entry per submodule: ``kind`` is ``"mha"``, ``"linear"`` (weight ``[out, in]``),
        ``"conv1d"`` (weight ``[in, out]``) or ``"other"``.
    """
    from torch import nn
    from torch.nn.parameter import UninitializedParameter

    from attnlab.audit.layers import recognise

    entries = []
    for name, m in module.named_modules():
        own = {
            n: p.detach().clone()
            for n, p in m.named_parameters(recurse=False)
            if not isinstance(p, UninitializedParameter)
        }
        kind, config = "other", {}
        if isinstance(m, nn.MultiheadAttention):
            kind = "mha"
            config = {
                "embed_dim": m.embed_dim,
                "num_heads": m.num_heads,
                "bias": m.in_proj_bias is not None,
                "add_bias_kv": m.bias_k is not None,
                "add_zero_attn": bool(m.add_zero_attn),
                "kdim": m.kdim,
                "vdim": m.vdim,
                "batch_first": bool(m.batch_first),
            }
        elif isinstance(m, nn.Linear) and "weight" in own:
            kind = "linear"
            config = {"in": m.in_features, "out": m.out_features, "bias": m.bias is not None}
        elif name and path is not None and (seen := recognise(m, path)) is not None:
            kind, config = seen
        entries.append(
            {"name": name, "kind": kind, "type": type(m).__name__, "config": config, "params": own}
        )
    return entries


def forward_params(module: Any) -> list[list[Any]] | None:
    """The parameters of ``module.forward`` as ``[name, kind, has_default]`` (kind: the
    ``inspect.Parameter`` kind's name), or None when they cannot be read."""
    import inspect

    try:
        params = inspect.signature(module.forward).parameters.values()
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not p.empty] for p in params]


def norms(module: Any) -> dict[str, Any] | None:
    """The module's normalisation layers (a class whose name says norm: ``RMSNorm``,
    ``nn.LayerNorm``; Qwen-style ``q_norm``/``k_norm``), which the lesson's attention has not,
    with the first line of ``forward`` that uses one; None when it has none."""
    from attnlab.audit.positions import used_at

    found = [n for n, m in module.named_modules() if n and "norm" in type(m).__name__.lower()]
    if not found:
        return None
    tops = sorted({n.split(".")[0] for n in found})
    return {"names": found[:6], "line": used_at(module, tops)}


def own_mask(module: Any) -> bool:
    """The module holds a causal mask of its own: a buffer whose last two axes, of one length
    n ≥ 2, are triangular (``torch.tril`` of ones, or 0 / −∞ above the diagonal). Such a module
    masks the future itself, so an optional ``attention_mask`` is its padding mask."""
    import torch

    for _name, b in module.named_buffers():
        if b.dim() < 2 or b.size(-1) != b.size(-2) or b.size(-1) < 2 or b.is_complex():
            continue
        n = min(b.size(-1), 8)
        corner = b[..., :n, :n].reshape(-1, n, n)[0].double()
        keep = torch.tril(torch.ones(n, n, dtype=torch.bool))
        if bool(((corner != 0) == keep).all()) or bool(((corner == 0) == keep).all()):
            return True
        if bool((corner[~keep] == float("-inf")).all()) and bool((corner[keep] == 0).all()):
            return True
    return False


def materialise(module: Any, C: int, path: Path) -> None:
    """Give lazy layers (``nn.LazyLinear``...) their parameters with one forward on a
    ``[2, 2, C]`` input, so that no uninitialised parameter is ever read.

    Raises:
        LearnerError: that forward failed.
    """
    import torch
    from torch.nn.parameter import UninitializedParameter

    from attnlab.audit.observe import forward

    if any(isinstance(p, UninitializedParameter) for p in module.parameters()):
        from attnlab.audit.calling import candidates, plan

        x = torch.zeros(2, 2, C)  # [B, T, C]
        conv = plan(forward_params(module))  # called as its author meant, with a mask if needed
        if conv.mask_name is not None and not conv.optional:
            conv = candidates(conv)[0]
        forward(module, x, path, conv.request(x))
        module.float()


class Server:
    """Answers the judge's requests about one learner file."""

    def __init__(self) -> None:
        self.target: Any = None
        self.path = Path()
        self.modules: list[Any] = []
        self.watch = Watch()

    def do_import(self, path: str, name: str) -> dict[str, Any]:
        from attnlab.audit.loader import load_target

        self.path = Path(path)
        self.target = load_target(self.path, name)
        return self.describe(name)

    def describe(self, name: str) -> dict[str, Any]:
        """The target's name and constructor parameter names (``None`` when it has none to
        read)."""
        import inspect

        try:
            params = [p for p in inspect.signature(self.target).parameters if p != "self"]
        except (TypeError, ValueError):
            params = None
        return {"name": getattr(self.target, "__name__", name), "params": params}

    def do_build(
        self, kind: str, sizes: tuple[int, int, int], seed: int | None, init: str | None = None
    ) -> dict:
        import torch

        from attnlab.audit.construct import parse_init
        from attnlab.audit.loader import build, feeding

        if seed is not None:
            torch.manual_seed(seed)
        module, text = build(self.target, kind, tuple(sizes), self.path, parse_init(init))  # type: ignore[arg-type]
        with feeding(self.target, tuple(sizes), (2, 2, sizes[0])):
            materialise(module, sizes[0], self.path)
        from attnlab.audit.positions import neutralise, rotary_line, used_at

        rotary = neutralise(module)  # rotary buffers at angle 0: q, k turned by 0
        self.modules.append(module)
        return {
            "handle": len(self.modules) - 1,
            "skeleton": skeleton(module, self.path),
            "call": text,
            "forward": forward_params(module),
            "own_mask": own_mask(module),
            "rotary": {"names": rotary, "line": used_at(module, [n.split(".")[0] for n in rotary])}
            if rotary
            else None,
            "rotary_line": rotary_line(module),
            "norms": norms(module),
        }

    def do_forward(
        self, handle: int, state: dict[str, Any], x: Any, call: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        import torch

        from attnlab.audit.observe import forward
        from attnlab.audit.wire import plain

        module = self.modules[handle]
        params = dict(module.named_parameters(remove_duplicate=False))
        with torch.no_grad():
            for name, value in state.items():
                params[name].copy_(value)
        run = forward(module, x, self.path, call)
        after = {
            n: p.detach().clone()
            for n, p in params.items()
            if n in state and not torch.equal(p.detach(), state[n].to(p.dtype))
        }
        calls = [
            (c.kind, plain(c.args), plain(c.kwargs), plain(c.out), c.line) for c in run.rec.calls
        ]
        reply = {"out": plain(run.out), "calls": calls, "state": after}
        if run.positions is not None:
            reply["positions"] = run.positions
        return reply

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        from attnlab.audit.loader import LearnerError

        op = request.pop("op")
        try:
            reply = getattr(self, f"do_{op}")(**request)
        except LearnerError as err:
            reply = {"error": {"zh": err.zh, "en": err.en, "where": err.where}}
        reply["effects"] = self.watch.changed()
        return reply


def main(argv: list[str]) -> int:
    from attnlab.audit.sandbox import drop_root

    requests, replies, ready_fd = int(argv[1]), int(argv[2]), int(argv[3])
    _limit(int(argv[4]), int(argv[5]))
    drop_root()  # before anything else runs; it clears the parent-death signal, so first
    die_with_parent(signal.SIGKILL)  # when the keeper dies, also outside bubblewrap
    import torch

    # The tensors are tiny: one thread avoids thread-pool wake-ups that cost more than the
    # arithmetic, which on a busy 2-core machine was most of an audit's time.
    torch.set_num_threads(1)
    from attnlab.audit import loader, wire
    from attnlab.audit.keeper import READY

    # The learner's prints go to fd 1 and 2, which the keeper reads (as UTF-8) and caps.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    loader.keep_prints()
    server = Server()
    os.write(ready_fd, READY + b"\n")
    os.close(ready_fd)  # before the learner's code runs: nothing it forks inherits it
    wire.send(replies, wire.HELLO)  # the judge starts the learner's clock on this
    while True:
        try:
            request = wire.receive(requests, limit=2**40)  # the judge is trusted
        except wire.WireError:
            break  # the judge is done (or gone)
        if request.get("op") == "exit":
            break
        reply = server.answer(request)
        for stream in (sys.stdout, sys.stderr):  # the keeper kills this process at the end:
            with contextlib.suppress(Exception):  # what was printed must be out by then
                stream.flush()
        wire.send(replies, reply)
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv))  # skip interpreter teardown: learner threads must not keep us alive

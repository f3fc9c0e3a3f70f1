"""The judge's view of the learner's module: a local mirror whose forward runs over the pipe.

The judging process never imports the learner's file. :func:`load_target` and :func:`build` ask
the learner's process (:mod:`~attnlab.audit.learner`) to import and build; ``build``
returns a *mirror*: an ``nn.Module`` tree with the learner's layer names, ``nn.Linear`` and
``nn.MultiheadAttention`` layers where the learner has them (and a
:class:`~attnlab.audit.layers.Conv1D` for a layer of its own class that computes ``x @ W + b``,
GPT-2's ``Conv1D``), and a copy of every parameter.
The probe reads, zeroes and loads weights on the mirror as on a local module;
:func:`forward` sends the mirror's parameters and an input, and the learner's process returns
the output and the calls it made. References, reproductions and verdicts are computed here,
from the judge's own torch and math.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from attnlab.audit import wire
from attnlab.audit.call_probe import settle
from attnlab.audit.calling import Convention
from attnlab.audit.construct import kind_of
from attnlab.audit.layers import Conv1D
from attnlab.audit.loader import LearnerError
from attnlab.audit.observe import Run, unusable
from attnlab.audit.record import Call, Recorder


class LearnerGone(Exception):
    """The learner's process died, or answered with something that is not a reply."""


class LearnerTooSlow(Exception):
    """The learner's code used up its time: the judge's waits for its replies add up to it."""


class Learner:
    """The pipe to the learner's process, and the side effects it reported."""

    def __init__(self, requests: int, replies: int, budget: float | None = None) -> None:
        self.requests, self.replies = requests, replies
        #: Seconds left for the learner's code: only the time spent waiting for it counts.
        self.budget = budget
        self.effects: list[str] = []
        #: Set once a reply was refused unread (over the size limit): every later ask says so.
        self.refused: LearnerError | None = None

    def wait_ready(self, limit: float) -> None:
        """Read the learner's process's first message, sent once its imports are done; the
        learner's time starts after it (importing torch on a busy machine is not the learner's
        code being slow).

        Raises:
            LearnerGone: it died first, said something else or took over ``limit`` seconds.
        """
        try:
            hello = wire.receive(self.replies, deadline=time.monotonic() + limit)
        except wire.TooSlow:
            raise LearnerGone(f"not ready within {limit:g} s") from None
        except (OSError, wire.WireError) as exc:
            raise LearnerGone(str(exc)) from None
        if hello != wire.HELLO:
            raise LearnerGone("a first message that is not its greeting")

    def exchange(self, request: dict[str, Any]) -> Any:
        """Send ``request`` and read the reply, whatever it is.

        Raises:
            LearnerTooSlow: the reply took longer than the time left.
        """
        if self.refused is not None:  # the pipe is mid-message: nothing more can be read
            raise self.refused
        start = time.monotonic()
        deadline = None if self.budget is None else start + self.budget
        try:
            wire.send(self.requests, request)
            return wire.receive(self.replies, deadline=deadline)
        except wire.TooSlow:
            raise LearnerTooSlow() from None
        except wire.TooBig as big:
            mib = wire.MAX_BYTES // 2**20
            self.refused = LearnerError(
                f"你的代码的回复有 {big.size:,} 字节，超过审计读取的上限 {mib} MiB"
                "（它的输出比 [B, T, C] 大得多？）",
                f"your code's reply was {big.size:,} bytes, over the {mib} MiB the audit reads "
                "(an output far larger than [B, T, C]?)",
                {"forward": "call"}.get(str(request.get("op")), str(request.get("op"))),
            )
            raise self.refused from None
        except (OSError, wire.WireError) as exc:
            raise LearnerGone(str(exc)) from None
        finally:
            if self.budget is not None:
                self.budget -= time.monotonic() - start

    def ask(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one request; the reply, or ``LearnerError`` for the learner's own failure.

        Raises:
            LearnerGone: the process died (memory, a crash, ``os._exit``) or sent garbage.
        """
        reply = self.exchange({"op": op, **args})
        if not isinstance(reply, dict) or not isinstance(reply.get("effects", []), list):
            raise LearnerGone("a reply that is not a dict")
        self.effects = [str(e) for e in reply.get("effects", [])]
        error = reply.get("error")
        if isinstance(error, dict):
            raise LearnerError(
                str(error.get("zh", "")), str(error.get("en", "")), str(error.get("where", ""))
            )
        return reply


class InProcess(Learner):
    """A learner whose server runs in this process, with no isolation: the zoo tests audit
    many trusted files quickly this way, through the same mirror and the same judging."""

    def __init__(self) -> None:
        from attnlab.audit.learner import Server

        super().__init__(-1, -1)
        self.server = Server()

    def wait_ready(self, limit: float) -> None:
        """A server in this process is ready at once."""

    def exchange(self, request: dict[str, Any]) -> Any:
        return self.server.answer(dict(request))


class RemoteTarget:
    """The learner's class or function, as the judge knows it: name and parameter names.

    Attributes:
        init: the ``--init`` text the constructor's parameters are read with.
        built: per sizes, the constructor call that built the module, as Python text.
        call: how its forward is called (:mod:`~attnlab.audit.calling`), once settled.
    """

    def __init__(
        self, learner: Learner, name: str, params: list[str] | None, init: str | None = None
    ) -> None:
        self.learner, self.__name__, self.params = learner, name, params
        self.init = init
        self.built: dict[tuple[int, ...], str] = {}
        self.call: Convention | None = None
        #: The module's rotary buffers its process set to angle 0, and the line using them.
        self.rotary: dict[str, Any] | None = None
        #: The first line of its forward that calls something rotary (read from the source).
        self.rotary_line: int | None = None
        #: Its normalisation layers (``q_norm``, ``k_norm``...) and the line using them.
        self.norms: dict[str, Any] | None = None


def load_target(learner: Learner, path: Path, name: str, init: str | None = None) -> RemoteTarget:
    """Have the learner's process import ``path`` and find ``name`` in it; ``init`` is the
    ``--init`` text its builds will use."""
    reply = learner.ask("import", path=str(path), name=name)
    params = reply.get("params")
    valid = params is None or (isinstance(params, list) and all(isinstance(p, str) for p in params))
    return RemoteTarget(learner, str(reply.get("name", name)), params if valid else None, init)


def local_target(factory: Any, path: Path) -> RemoteTarget:
    """A trusted class or function of this process (attnlab's own modules, in tests) as a
    target, audited through the same mirror and judging as a learner's file."""
    learner = InProcess()
    learner.server.target, learner.server.path = factory, path
    found = learner.server.describe("factory")
    return RemoteTarget(learner, found["name"], found["params"])


def guess_kind(target: RemoteTarget) -> str:
    """ "multihead" when a constructor parameter is a head count or a config object, else
    "head" (:func:`~attnlab.audit.construct.kind_of`)."""
    return kind_of(target.params) or "head"


#: Parameters (numbers) a mirror may hold: what the pipe could carry as float32
#: (:data:`~attnlab.audit.wire.MAX_BYTES`), far above any attention module at the audit's sizes
#: (C ≤ 12) and far below what would strain the judge. A description past it is refused.
MAX_ELEMENTS = wire.MAX_BYTES // 4
#: The ``nn.MultiheadAttention`` arguments a description may carry (and their types).
_MHA = {"embed_dim": int, "num_heads": int, "bias": bool, "add_bias_kv": bool,
        "add_zero_attn": bool, "kdim": int, "vdim": int, "batch_first": bool}  # fmt: skip


def _refuse(zh: str, en: str) -> LearnerError:
    return LearnerError(
        f"你的模块的层描述不可信，已拒绝：{zh}", f"the description of your module's layers was "
        f"refused: {en}", "build"
    )  # fmt: skip


def _elements(entry: dict[str, Any]) -> int:
    """The numbers a layer of the description holds once built (before any is made)."""
    config, kind = entry["config"], entry["kind"]
    if kind in ("linear", "conv1d"):
        n_in, n_out = int(config["in"]), int(config["out"])
        if n_in < 0 or n_out < 0:
            raise ValueError(f"a {kind} of {n_in} × {n_out}")
        return n_in * n_out + n_out
    if kind == "mha":
        e = int(config["embed_dim"])
        k, v = int(config.get("kdim") or e), int(config.get("vdim") or e)
        if min(e, k, v) < 0:
            raise ValueError(f"a MultiheadAttention of width {e}")
        return e * (e + k + v) + e * e + 8 * e
    return 0


def _node(entry: dict[str, Any]) -> nn.Module:
    """The layer, made on the meta device: its numbers are the description's own tensors."""
    config = entry["config"]
    if entry["kind"] == "linear":
        return nn.Linear(int(config["in"]), int(config["out"]), bias=bool(config["bias"]),
                         device="meta")  # fmt: skip
    if entry["kind"] == "conv1d":
        with torch.device("meta"):
            return Conv1D(int(config["in"]), int(config["out"]), bias=bool(config["bias"]))
    if entry["kind"] == "mha":
        args = {k: _MHA[k](v) for k, v in config.items() if k in _MHA and v is not None}
        return nn.MultiheadAttention(**args, device="meta")
    return nn.Module()


def _tensor(layer: str, pname: str, value: Any) -> torch.Tensor:
    """A parameter of the description, if it is one the judge can hold: a dense CPU tensor of
    real numbers whose storage really holds each of them (no expanded view)."""
    where = f"{layer or '(the module)'}.{pname}"
    if not isinstance(value, torch.Tensor):
        raise _refuse(f"{where} 不是张量", f"{where} is not a tensor")
    if value.layout != torch.strided or value.is_meta or value.device.type != "cpu":
        raise _refuse(f"{where} 不是 CPU 上的普通张量", f"{where} is not a dense CPU tensor")
    if value.is_complex():
        raise _refuse(f"{where} 的 dtype 是 {value.dtype}", f"{where} has dtype {value.dtype}")
    if value.numel() > value.untyped_storage().nbytes() // max(value.element_size(), 1):
        raise _refuse(
            f"{where} 的形状 {list(value.shape)} 比它的数据多", f"{where} claims the shape "
            f"{list(value.shape)}, more numbers than it holds"
        )  # fmt: skip
    return value


def mirror(skeleton: list[dict[str, Any]]) -> nn.Module:
    """A local module tree with the skeleton's names, layer kinds and parameter values.

    Every size it states is checked before anything is made: its layers together hold at most
    :data:`MAX_ELEMENTS` numbers, each parameter is a dense CPU tensor, and every parameter a
    layer has is one the description sent, of the layer's own shape.

    Raises:
        LearnerError: a description the judge will not build, in one line.
        LearnerGone: not a description at all.
    """
    total = 0
    for entry in skeleton:
        total += _elements(entry)
        total += sum(
            int(v.numel()) for v in entry["params"].values() if isinstance(v, torch.Tensor)
        )
        if total > MAX_ELEMENTS:
            layer = str(entry["name"]) or "(the module)"
            raise _refuse(
                f"到层 {layer} 为止已有 {total:,} 个数，超过审计器构造的上限 {MAX_ELEMENTS:,}",
                f"up to layer {layer} it holds {total:,} numbers, over the {MAX_ELEMENTS:,} "
                "the auditor builds",
            )
    nodes: dict[str, nn.Module] = {}
    for entry in skeleton:
        name = str(entry["name"])
        parent_name, _, leaf = name.rpartition(".")
        parent = nodes.get(parent_name) if name else None
        node = parent._modules.get(leaf) if parent is not None else None
        if node is None:
            node = _node(entry)
            if parent is not None:
                parent.add_module(leaf, node)
        for pname, value in entry["params"].items():
            value = _tensor(name, str(pname), value)
            old = node._parameters.get(pname)
            if old is not None and old.shape != value.shape:
                raise _refuse(
                    f"{name}.{pname} 的形状是 {list(value.shape)}，而这一层要 {list(old.shape)}",
                    f"{name}.{pname} has the shape {list(value.shape)} where the layer has "
                    f"{list(old.shape)}",
                )
            node.register_parameter(pname, nn.Parameter(value.clone(), requires_grad=False))
        nodes[name] = node
    if "" not in nodes:
        raise LearnerGone("a skeleton without its root module")
    for pname, p in nodes[""].named_parameters():
        if p.is_meta:
            raise _refuse(f"没有给出 {pname} 的数值", f"it gives no values for {pname}")
    return nodes[""].float().eval()


def _forward_params(found: Any) -> list[list[Any]] | None:
    """The learner's account of its forward's parameters, if it has the expected form."""
    if not isinstance(found, list):
        return None
    ok = all(
        isinstance(p, list) and len(p) == 3 and isinstance(p[0], str) and isinstance(p[1], str)
        and isinstance(p[2], bool)
        for p in found
    )  # fmt: skip
    return found if ok else None


def build(
    target: RemoteTarget,
    kind: str,
    sizes: tuple[int, ...],
    path: Path,
    seed: int | None = None,
) -> nn.Module:
    """``target(*sizes)`` built in the learner's process (``torch.manual_seed(seed)`` first when
    given), returned as a mirror that :func:`forward` runs there."""
    reply = target.learner.ask("build", kind=kind, sizes=list(sizes), seed=seed, init=target.init)
    try:
        skeleton = reply["skeleton"]
        if not isinstance(skeleton, list) or not all(isinstance(e, dict) for e in skeleton):
            raise TypeError("not a list of layers")
        module = mirror(skeleton)
        target.built[tuple(sizes)] = str(reply.get("call") or "")
        forward_params = _forward_params(reply.get("forward"))
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as exc:
        raise LearnerGone(f"a malformed skeleton: {exc}") from None
    module._attnlab_remote = (target.learner, int(reply["handle"]))  # type: ignore[assignment]
    module._attnlab_target = (target, forward_params)  # type: ignore[assignment]
    module._attnlab_own_mask = reply.get("own_mask") is True  # type: ignore[assignment]
    rotary = reply.get("rotary")
    if target.rotary is None and isinstance(rotary, dict) and isinstance(rotary.get("names"), list):
        names = [str(n)[:60] for n in rotary["names"][:6]]
        line = rotary.get("line")
        target.rotary = {"names": names, "line": line if type(line) is int else None}
    norms = reply.get("norms")
    if target.norms is None and isinstance(norms, dict) and isinstance(norms.get("names"), list):
        line = norms.get("line")
        names = [str(n)[:60] for n in norms["names"][:6]]
        target.norms = {"names": names, "line": line if type(line) is int else None}
    inside = reply.get("rotary_line")
    if target.rotary_line is None and type(inside) is int:
        target.rotary_line = inside
    return module


def _call(kind: Any, args: Any, kwargs: Any, out: Any, line: Any = None) -> Call:
    """One recorded call as the learner's process sent it; the line only when it is an int."""
    return Call(str(kind), tuple(args), dict(kwargs), out, line if type(line) is int else None)


def forward(module: nn.Module, x: torch.Tensor, path: Path, call: Convention | None = None) -> Run:
    """Run the learner's module on ``x`` with the mirror's parameters: its output and calls.

    ``call`` (by default the target's, settled on the first forward:
    :func:`~attnlab.audit.call_probe.settle`) says how: inputs and the causal mask."""
    learner, handle = module._attnlab_remote  # type: ignore[misc]
    if call is None:
        target, forward_params = module._attnlab_target  # type: ignore[misc]
        if target.call is None:
            target.call = settle(module, forward_params, path, x.size(-1))
        call = target.call
    params = dict(module.named_parameters(remove_duplicate=False))
    state = {n: p.detach() for n, p in params.items()}
    request = call.request(x)
    extra = {} if request is None else {"call": request}
    reply = learner.ask("forward", handle=handle, state=state, x=x, **extra)
    try:
        out = reply["out"]
        calls = [_call(*c) for c in reply["calls"]]
        changed = dict(reply.get("state", {}))
        if isinstance(out, str) and out.startswith("<tensor "):  # wire.plain's description
            raise LearnerError(
                f"你的模块返回了审计无法比较的张量（{out[8:-1]}）",
                f"your module returned a tensor the audit cannot compare ({out[8:-1]})",
                "call",
            )
        if not isinstance(out, torch.Tensor):
            raise TypeError("the output is not a tensor")
        unusable(out, x)  # the learner's process checked it too, but may have been made not to
        with torch.no_grad():  # the module changed its own parameters: the mirror follows
            for name, value in changed.items():
                params[name].copy_(value)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise LearnerGone(f"a malformed forward reply: {exc}") from None
    rec = Recorder()
    # A time-first module's intermediates are laid out [T, T, B, H], [T, B, H, d]...: read as
    # [B, H, T, T] they would say false things, so they are kept apart, unread by the stages.
    if call.time_first:
        rec.time_first = calls
    else:
        rec.calls = calls
    return Run(x, out.double(), rec, _positions(reply.get("positions")))


def _positions(found: Any) -> dict[str, object] | None:
    """How the learner's process made the rotary tables, checked: text of printable
    characters (at most 200), a line number, the parameter names."""
    if not isinstance(found, dict):
        return None
    how, line, names = found.get("how"), found.get("line"), found.get("names")
    if not isinstance(how, str) or not isinstance(names, list):
        return None
    shown = "".join(c for c in how if c.isprintable())
    return {
        "how": shown if len(shown) <= 200 else shown[:199] + "…",
        "line": line if type(line) is int else None,
        "names": [str(n)[:40] for n in names[:4]],
    }

"""What the auditor knows about one learner module: two runs, references and reproductions.

The module is built twice: once at the lesson's sizes with the lesson's fixed weights loaded
(when its projections can be found), once at larger "probe" sizes with its own parameters, fed a
random ``[3, 5, C]`` input. The probe sizes make the wrong scalings distinguishable
(÷d_head, ÷√C and ÷√d_head all differ there; at C=4, d_head=2 the first two coincide).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
from torch import nn

from attnlab.audit import probe
from attnlab.audit.calling import Convention
from attnlab.audit.layers import projections
from attnlab.audit.loader import LearnerError, feeding
from attnlab.audit.observe import Run, as_heads, close, first_diff
from attnlab.audit.record import Recorder
from attnlab.audit.remote import RemoteTarget, build, forward
from attnlab.core import example
from attnlab.core.steps import MistakeInput, lesson_input
from attnlab.mistakes import catalogue, diagnosis

#: (C, head_size or num_heads, context_length) for the lesson run and the probe run.
SIZES: dict[str, dict[str, tuple[int, int, int]]] = {
    "head": {"lesson": (4, 2, 8), "probe": (6, 3, 8)},
    "multihead": {"lesson": (4, 2, 8), "probe": (12, 3, 8)},
}
PROBE_SHAPE = (3, 5)  # B, T of the random input
#: (B, T, seed) of the further random inputs the probe build must match the reference on.
EXTRA = ((1, 8, 21), (2, 3, 22), (4, 6, 23))
#: Sizes at which a head (width d_head = 3) and a multi-head (width C = 12) differ, and from T.
KIND_SIZES = (12, 3, 8)
KIND_WIDTH = {3: "head", 12: "multihead"}


@dataclass
class Side:
    """One build of the module: its run, the weights used and the stages they should give."""

    module: nn.Module
    run: Run
    layout: probe.Layout | None
    inp: MistakeInput | None
    ref: dict[str, torch.Tensor] | None
    wrong: dict[str, dict[str, torch.Tensor]] = field(default_factory=dict)

    @property
    def matches_ref(self) -> bool:
        return self.ref is not None and close(self.run.out, self.ref["output"])


@dataclass
class Audit:
    """Everything the checklist items are judged from."""

    kind: str
    path: Path
    lesson: Side
    probe: Side
    reproduced_by: list[str] = field(default_factory=list)
    #: The further random inputs as (x, output, reference output), when a reference exists.
    extra: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = field(default_factory=list)
    #: Two calls on the same input differed: (index, first value, second value).
    unsteady: tuple[tuple[int, ...], float, float] | None = None
    #: Layers named by role that the forward uses in other roles: the names it uses as q, k, v.
    roles_used: tuple[str, ...] | None = None
    #: How the forward was called (:mod:`~attnlab.audit.calling`).
    call: Convention | None = None

    @property
    def sides(self) -> list[Side]:
        return [self.lesson, self.probe]

    @property
    def width(self) -> int:
        """Expected output width at probe sizes: d_head for a head, C for a multi-head."""
        C, second, _ = SIZES[self.kind]["probe"]
        return second if self.kind == "head" else C

    @property
    def num_heads(self) -> int:
        return 1 if self.kind == "head" else SIZES[self.kind]["probe"][1]

    @property
    def matches_ref(self) -> bool:
        known = [s for s in self.sides if s.ref is not None]
        extra = all(close(out, ref) for _, out, ref in self.extra)
        # A multi-head's reference needs its W_O: without one it is only the heads' concat.
        w_o = self.kind == "head" or all(s.inp.w_o is not None for s in known if s.inp)
        return (
            bool(known)
            and all(s.matches_ref for s in known)
            and extra
            and w_o
            and not self.unsteady
        )

    @property
    def returns_weights(self) -> bool:
        """True when the probe's output is its attention weights (or their mean over heads)."""
        out, w = self.probe.run.out, self.probe.run.weights()
        if out.shape[-1] != self.probe.run.T or w is None:
            return False
        return close(as_heads(out) if out.dim() == 3 else out, w) or close(out, w.mean(1))


def seen_kind(target: RemoteTarget, path: Path) -> str | None:
    """The kind the module's output width shows: ``target(12, 3, 8)`` on ``x`` ``[3, 5, 12]``
    gives d_head = 3 features for a head, C = 12 for a multi-head; None when it gives neither
    or fails (the audit proper reports the failure)."""
    try:
        module = build(target, "head", KIND_SIZES, path)
        x = torch.randn(*PROBE_SHAPE, KIND_SIZES[0], generator=torch.Generator().manual_seed(5))
        out = forward(module, x, path).out
    except LearnerError:
        return None
    return KIND_WIDTH.get(out.size(-1)) if out.dim() == 3 else None


def _lesson_base(kind: str) -> MistakeInput:
    if kind == "head":
        return replace(lesson_input(), w_vocab=None)
    return diagnosis.multihead_example()


def _width(kind: str, which: str) -> tuple[int, int]:
    C, second, _ = SIZES[kind][which]
    return C, second if kind == "head" else C


def _pick(
    module: nn.Module, kind: str, x: torch.Tensor, path: Path, layouts: list[probe.Layout]
) -> probe.Layout | None:
    """The reading of the module's own weights whose reference reproduces its output (biases
    zeroed, as in the reference), else one a catalogue mistake reproduces, else None."""
    with torch.no_grad():
        for _, layer in projections(module):
            if layer.bias is not None:
                layer.bias.zero_()  # the reference has no bias
    out = forward(module, x, path).out
    heads = 1 if kind == "head" else SIZES[kind]["probe"][1]
    readings = []
    for layout in layouts:
        w = probe.read(layout)
        inp = MistakeInput(x.double(), w[0], w[1], w[2], heads, w[3])
        if close(out, diagnosis.correct_stages(inp)["output"]):
            return layout
        readings.append((layout, inp))
    for layout, inp in readings:  # no right reading: maybe a catalogue mistake explains one
        side = Side(module, Run(x, out, Recorder()), layout, inp, None)
        _reproduce(side, kind)
        if any(close(out, stages["output"]) for stages in side.wrong.values()):
            return layout
    return None


def _variants(module: nn.Module, kind: str, which: str, fused: bool) -> list[probe.Layout]:
    """Every reading of a module's projections to try: a fused layer's six q/k/v row orders,
    and for a multi-head, heads owning blocks of features or interleaved ones."""
    at = _width(kind, which)
    orders = probe.ORDERS if fused else ((0, 1, 2),)
    bases = [b for o in orders if (b := probe.find_layout(module, kind, *at, order=o))]
    if kind != "multihead":
        return bases
    perm = probe.interleaved(at[0], SIZES[kind][which][1])
    return [v for b in bases for v in (b, probe.regroup(b, perm))]


def _layouts(
    lesson_mod: nn.Module, probe_mod: nn.Module, kind: str, x: torch.Tensor, path: Path
) -> tuple[probe.Layout | None, probe.Layout | None]:
    """Both modules' projections. A fused layer's q/k/v row order, the heads' feature order and
    the roles of unknown-named layers are read from what the module's forward computes."""
    found = probe.find_layout(probe_mod, kind, *_width(kind, "probe"))
    if found is not None:
        fused = found.order is not None
        tried = _variants(probe_mod, kind, "probe", fused)
        picked = _pick(probe_mod, kind, x, path, tried) or found
        at_lesson = _variants(lesson_mod, kind, "lesson", fused)
        same = len(at_lesson) == len(tried) and picked in tried
        return (
            at_lesson[tried.index(picked)] if same else at_lesson[0] if at_lesson else None
        ), picked
    lesson = probe.find_layout(lesson_mod, kind, *_width(kind, "lesson"))
    if lesson is not None:
        return lesson, None
    at_probe = _width(kind, "probe")
    named = [probe.by_names(probe_mod, n) for n in probe.candidates(probe_mod, kind, *at_probe)]
    bare = probe.param_candidates(probe_mod, kind, *at_probe)
    named += [probe.by_params(probe_mod, spec) for spec in bare]
    found = _pick(probe_mod, kind, x, path, named) if named else None
    if found is not None and found.names is not None:
        return probe.by_names(lesson_mod, found.names), found
    if found is not None and found.spec is not None:
        return probe.by_params(lesson_mod, found.spec), found
    return None, None


def _side(
    module: nn.Module,
    kind: str,
    x: torch.Tensor,
    path: Path,
    layout: probe.Layout | None,
    lesson: bool,
) -> Side:
    second = SIZES[kind]["lesson" if lesson else "probe"][1]
    inp = None
    if layout is not None:
        own = probe.read(layout)
        base = _lesson_base(kind) if lesson else None
        w = (base.w_q, base.w_k, base.w_v, base.w_o) if base is not None else own
        w_o = w[3] if own[3] is not None else None  # no W_O layer found: nothing to load
        probe.load(layout, (w[0], w[1], w[2], w_o), module)
        heads = 1 if kind == "head" else second
        inp = MistakeInput(x.double(), w[0], w[1], w[2], heads, w_o,
                           token_ids=example.lesson_token_ids() if lesson else None)  # fmt: skip
    run = forward(module, x, path)
    ref = diagnosis.correct_stages(inp) if inp is not None else None
    return Side(module, run, layout, inp, ref)


def _reproduce(side: Side, kind: str) -> None:
    if side.inp is None:
        return
    for m in catalogue.CATALOGUE:
        if m.name == "token_ids_as_x" or (m.multihead_only and kind == "head"):
            continue
        try:
            side.wrong[m.name] = diagnosis.mistake_stages(m, side.inp)
        except (RuntimeError, ValueError, IndexError):  # a mistake may not run at these sizes
            continue


def _extra(a: Audit, target: RemoteTarget, sizes: tuple[int, int, int]) -> None:
    """Run the probe build on :data:`EXTRA` inputs next to the reference, and once more on the
    probe input: two identical calls must give the same output."""
    side = a.probe
    with feeding(target, sizes, tuple(side.run.x.shape)):
        again = forward(side.module, side.run.x, a.path).out
    if again.shape == side.run.out.shape and not close(again, side.run.out, 1e-6):
        i = first_diff(again, side.run.out)
        a.unsteady = (i, float(side.run.out[i]), float(again[i]))
    if side.inp is None:
        return
    for B, T, seed in EXTRA:
        x = torch.randn(B, T, sizes[0], generator=torch.Generator().manual_seed(seed))
        with feeding(target, sizes, (B, T, sizes[0])):
            out = forward(side.module, x, a.path).out
        ref = diagnosis.correct_stages(replace(side.inp, x=x.double()))["output"]
        a.extra.append((x, out, ref))


def _roles_used(a: Audit) -> tuple[str, ...] | None:
    """The names of the layers the forward uses as query, key and value, when they are not
    the ones their names say and the output equals the reference with the roles swapped."""
    side = a.probe
    if side.layout is None or side.layout.roles is None or side.inp is None:
        return None
    w = (side.inp.w_q, side.inp.w_k, side.inp.w_v)
    for perm in probe.ORDERS[1:]:
        inp = replace(side.inp, w_q=w[perm[0]], w_k=w[perm[1]], w_v=w[perm[2]])
        if close(side.run.out, diagnosis.correct_stages(inp)["output"]):
            return tuple(side.layout.roles[i] for i in perm)
    return None


def build_audit(target: RemoteTarget, kind: str, path: Path) -> Audit:
    """Build, load, run and compare; learner failures surface as ``LearnerError``."""
    sizes = SIZES[kind]
    lesson_mod = build(target, kind, sizes["lesson"], path)
    probe_mod = build(target, kind, sizes["probe"], path, seed=0)
    gen = torch.Generator().manual_seed(7)
    x_probe = torch.randn(*PROBE_SHAPE, sizes["probe"][0], generator=gen)  # [B, T, C]
    x_lesson = example.lesson_x(torch.float32)  # [2, 2, 4]
    with feeding(target, sizes["lesson"], tuple(x_lesson.shape)):
        forward(lesson_mod, x_lesson, path)  # fails first on token IDs or a broken forward
    with feeding(target, sizes["probe"], tuple(x_probe.shape)):
        lesson_layout, probe_layout = _layouts(lesson_mod, probe_mod, kind, x_probe, path)
        lesson = _side(lesson_mod, kind, x_lesson, path, lesson_layout, lesson=True)
        probe_side = _side(probe_mod, kind, x_probe, path, probe_layout, lesson=False)
    audit = Audit(kind, path, lesson, probe_side, call=target.call)
    _extra(audit, target, sizes["probe"])
    for side in audit.sides:
        _reproduce(side, kind)
    if not audit.matches_ref:
        names = [m.name for m in catalogue.CATALOGUE]
        audit.reproduced_by = [
            n for n in names
            if any(n in s.wrong for s in audit.sides)
            and all(close(s.run.out, s.wrong[n]["output"]) for s in audit.sides if n in s.wrong)
        ]  # fmt: skip
        if not any(c.kind == "cat" for s in audit.sides for c in s.run.rec.calls):
            # Its code is torch.cat(..., dim=1): a merge without transpose is not named by it.
            audit.reproduced_by = [n for n in audit.reproduced_by if n != "concat_time_axis"]
        audit.roles_used = None if audit.reproduced_by else _roles_used(audit)
    return audit

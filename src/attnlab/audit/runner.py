"""The judging side of ``attnlab audit``: references and verdicts, never the learner's file.

``python -m attnlab.audit.runner REQUEST_JSON REQUESTS_FD REPLIES_FD READY_FD``.

Started by :mod:`~attnlab.audit.keeper` next to the learner's process
(:mod:`~attnlab.audit.learner`), which imports the learner's file and answers this
process's requests over two pipes. Everything the verdict rests on (the lesson's weights, the
random probe inputs, the reference stages, the catalogue's reproductions, the comparisons) is
computed here, in a process the learner's code never ran in: a file that patches ``math.sqrt``,
``F.softmax`` or the default dtype changes only its own process. The result, one JSON object,
goes to stdout, which only the keeper reads.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from attnlab.audit.processes import die_with_parent

if TYPE_CHECKING:
    from attnlab.audit.remote import Learner

_TOKEN_ID_HINT = re.compile(r"indices|\bLong\b|embedding|one_hot")


def _token_id_report(err: Any) -> list[dict[str, object]]:
    from attnlab.audit.verdict import NOT_CHECKED

    items: list[dict[str, object]] = [
        {
            "item": 1,
            "status": "FAIL",
            "mistakes": ["token_ids_as_x"],
            "section": 1,
            "evidence": {
                "zh": f"输入浮点向量 X [2,2,4] 时{err.zh}：模块把输入当成了 Token ID",
                "en": f"fed float vectors X [2,2,4]: {err.en}; the module treats its input "
                "as token IDs",
            },
        }
    ]
    for n in range(2, 11):
        items.append(
            {
                "item": n,
                "status": NOT_CHECKED,
                "mistakes": [],
                "section": None,
                "evidence": {
                    "zh": "模块无法处理 [B,T,C] 向量，未检查",
                    "en": "not checked: the module cannot run on [B, T, C] vectors",
                },
            }
        )
    return items


def _wrong_kind(name: str, kind: str, seen: str) -> dict[str, object]:
    """``--kind`` contradicts the output width: say so and name the kind to use instead."""
    from attnlab.audit.context import KIND_SIZES, KIND_WIDTH

    width = next(w for w, k in KIND_WIDTH.items() if k == seen)
    call = f"{name}{KIND_SIZES}"
    what = {
        "head": ("单个 Head", "a single head (d_head)"),
        "multihead": ("多头", "a multi-head (C)"),
    }
    return {
        "status": "error",
        "kind": kind,
        "where": "kind",
        "error": {
            "zh": f"--kind {kind} 与模块不符：{call} 对形状 [3, 5, 12] 的 x 输出宽度 {width}，"
            f"这是{what[seen][0]}的输出；请用 --kind {seen}（或不写 --kind）",
            "en": f"--kind {kind} does not fit the module: {call} returns width {width} for x "
            f"of shape [3, 5, 12], as {what[seen][1]} does; audit it with --kind {seen} "
            "(or leave --kind out)",
        },
    }


def _call(target: Any, kind: str) -> dict[str, object]:
    """How the module was built (at the lesson's sizes, and at the random inputs' sizes, which
    items such as the scale are measured on) and called, for the report."""
    from attnlab.audit.context import SIZES

    call = target.call
    return {
        "build": target.built.get(SIZES[kind]["lesson"]) or None,
        "probe_build": target.built.get(SIZES[kind]["probe"]) or None,
        "forward": call.describe() if call is not None else None,
    }


def audit(
    path: Path, name: str, kind: str, learner: Learner | None = None, init: str | None = None
) -> dict[str, object]:
    """Audit ``path:name`` through ``learner`` (by default one in this process, for trusted
    files: the zoo tests); learner failures become ``{"status": "error", ...}``. ``init`` is
    the ``--init`` text (:func:`attnlab.audit.construct.parse_init`).

    Raises:
        LearnerGone: the learner's process died or answered with something else than a reply.
    """
    from attnlab.audit.context import build_audit, seen_kind
    from attnlab.audit.judge import judge
    from attnlab.audit.loader import LearnerError
    from attnlab.audit.overall import overall
    from attnlab.audit.remote import InProcess, LearnerTooSlow, guess_kind, load_target
    from attnlab.audit.stages import stage_data

    try:
        try:
            target = load_target(learner or InProcess(), path, name, init)
        except LearnerTooSlow:
            raise LearnerTooSlow("import") from None
        seen = seen_kind(target, path)
        if kind != "auto" and seen is not None and seen != kind:
            return _wrong_kind(name, kind, seen)
        kind = kind if kind != "auto" else seen or guess_kind(target)
        try:
            a = build_audit(target, kind, path)
        except LearnerError as err:
            if err.where == "call" and _TOKEN_ID_HINT.search(err.en):
                return {
                    "status": "ok",
                    "kind": kind,
                    "layout": None,
                    "items": _token_id_report(err),
                    "overall": {
                        "status": "NOT CHECKED",
                        "finding": "no_output",
                        "evidence": {
                            "zh": "模块无法处理 [B,T,C] 向量，没有输出可比较（见第 1 项）",
                            "en": "the module cannot run on [B, T, C] vectors: no output "
                            "to compare (see item 1)",
                        },
                        "mistakes": [],
                    },
                }
            raise
        layouts = [s.layout.description for s in a.sides if s.layout is not None]
        items = judge(a)
        grouped = _grouped(target, kind, path, items, a.matches_ref)
        positions = _positions(a, target)
        found: dict[str, object] = {
            "status": "ok",
            "kind": kind,
            "layout": layouts[-1] if layouts else None,
            "reproduced_by": a.reproduced_by,
            "call": _call(target, kind),
            "items": items,
            "overall": overall(a, items),
            "positions": positions,
            "grouped": grouped,
            "stage": stage_data(a),  # the first differing stage, for --figure
        }
        undecided_by_rotary(found, positions)
        undecided_by_norms(found, a, target.norms)
        _grouped_output(found, grouped)
        return found
    except LearnerError as err:
        return {
            "status": "error",
            "kind": kind,
            "where": err.where,
            "error": {"zh": err.zh, "en": err.en},
        }


def _grouped(
    target: Any, kind: str, path: Path, items: list[dict[str, object]], right: bool
) -> dict[str, object] | None:
    """The grouped K/V heads' check (:mod:`~attnlab.audit.grouped`); its FAIL is item 8's. It
    runs only when the module is right with as many K/V heads as heads (``right``): otherwise
    a difference with fewer would be the same bug again, blamed on the heads."""
    from attnlab.audit.context import SIZES
    from attnlab.audit.grouped import check, skipped
    from attnlab.audit.verdict import SECTION

    built = target.built.get(SIZES[kind]["probe"]) or ""
    if not right:
        return skipped(built, kind)
    found = check(target, built, path, kind)
    if found is None or found["status"] != "FAIL":
        return found
    item = next(i for i in items if i["item"] == 8)
    see = {"zh": "（见“分组 K/V 头”一行）", "en": " (see the grouped K/V heads line)"}
    if item["status"] != "FAIL":
        item.update(status="FAIL", mistakes=[], section=SECTION[8])
        item["evidence"] = {k: found["evidence"][k] + see[k] for k in see}
    return found


#: The items whose verdicts compare values a norm layer changes: NOT CHECKED beside one.
NORM_ITEMS = (2, 3, 7, 8)


def undecided_by_norms(result: dict[str, object], a: Any, norms: dict[str, Any] | None) -> None:
    """A module with normalisation layers the lesson's attention has not (Qwen's
    ``q_norm``/``k_norm``, a pre-norm) whose output differs from the reference, and no
    catalogue mistake reproduces it: the items that compare values and the output check cannot
    decide (a norm is not a bug), so they say NOT CHECKED with the layers and the line."""
    if not norms or a.matches_ref or a.reproduced_by:
        return
    listed, line = ", ".join(norms["names"]), norms["line"]
    at_zh, at_en = (f"（第 {line} 行）", f" (line {line})") if line else ("", "")
    note = {
        "zh": f"你的模块有归一化层 {listed}{at_zh}，课程的注意力没有：它们改变 q、k、v 的数值，"
        "所以比较数值的检查（第 2、3、7、8 项和输出）无法判断；其余各项仍然检查",
        "en": f"your module has normalisation layers {listed}{at_en}, which the lesson's "
        "attention has not: they change the values of q, k, v, so the checks that compare "
        "values (items 2, 3, 7, 8 and the output) cannot decide; the other items are checked",
    }
    for item in result["items"]:  # type: ignore[attr-defined]
        if item["item"] in NORM_ITEMS and not (item["item"] == 2 and item["status"] == "PASS"):
            item.update(status="NOT CHECKED", mistakes=[], section=None, evidence=note)
    whole = result.get("overall")
    if isinstance(whole, dict) and whole.get("status") != "PASS":
        whole.update(status="NOT CHECKED", finding="norm_layers", mistakes=[], evidence=note)


def _grouped_output(result: dict[str, object], grouped: dict[str, object] | None) -> None:
    """A FAIL of the grouped K/V heads is the output check's too: with fewer K/V heads than
    heads the output differs from the reference."""
    whole = result.get("overall")
    if not grouped or grouped["status"] != "FAIL" or not isinstance(whole, dict):
        return
    if whole.get("status") == "PASS":
        whole.update(
            status="FAIL",
            finding="output_differs",
            mistakes=[],
            evidence={
                "zh": "K/V 头与头数相同时输出与参考一致，但 K/V 头少于头数时不一致（见第 8 项）",
                "en": "with as many K/V heads as heads the output equals the reference, with "
                "fewer it differs (see item 8)",
            },
        )


def _positions(a: Any, target: Any) -> dict[str, object] | None:
    """The rotary positions the forward takes or the module keeps in buffers, NOT CHECKED:
    where they are applied and how the angle-0 tables were made
    (:mod:`~attnlab.audit.positions`); None when it has none."""
    found = next((s.run.positions for s in a.sides if s.run.positions), None)
    how = {"zh": f"由 {found['how']} 得到", "en": f"from {found['how']}"} if found else None
    if not found and target.rotary and a.matches_ref:  # the buffers were what turned q, k
        listed = ", ".join(target.rotary["names"])
        found = {"line": target.rotary["line"]}
        how = {"zh": f"你的缓冲区 {listed} 设为角度 0", "en": f"your buffers {listed} set to it"}
    if not found or how is None:
        line = target.rotary_line or (target.rotary or {}).get("line")
        return _inside(a, line)
    line = found.get("line") or target.rotary_line
    at_zh = f"第 {line} 行" if line else "forward 中"
    at_en = f"at line {line}" if line else "in forward"
    return {
        "status": "NOT CHECKED",
        "finding": "rotary_positions",
        "line": line,
        "evidence": {
            "zh": f"{at_zh}旋转 q、k：课程的参考没有位置编码，旋转本身没有检查；上面各项是在"
            f"角度为 0 的表下检查的（{how['zh']}，cos 1、sin 0），这时旋转不改变 q、k",
            "en": f"q and k are rotated {at_en}: the lesson's reference has no positions, so the "
            f"rotation itself was not checked; the items above were checked with tables of angle "
            f"0 ({how['en']}: cos 1, sin 0), under which the rotation leaves q and k unchanged",
        },
    }


def _inside(a: Any, line: int | None) -> dict[str, object] | None:
    """Positions computed inside the forward, which the auditor could not set to angle 0: NOT
    CHECKED when the forward calls something rotary at ``line`` and the output differs from
    the reference (when it equals it, nothing rotary changed the numbers)."""
    if line is None or a.matches_ref:
        return None
    return {
        "status": "NOT CHECKED",
        "finding": "rotary_inside",
        "line": line,
        "evidence": {
            "zh": f"第 {line} 行在 forward 里计算位置（旋转位置编码？）：课程的参考没有位置编码，"
            f"审计器也无法把它设为角度 0，所以依赖 q、k 数值的检查（第 3、7、8 项和输出）"
            f"无法判断。把旋转表作为 forward 的参数（freqs_cis）或缓冲区传入，审计器就能检查",
            "en": f"line {line} computes positions inside forward (rotary positions?): the "
            f"lesson's reference has none and the auditor cannot set them to angle 0, so the "
            f"checks that depend on q's and k's values (items 3, 7, 8 and the output) cannot "
            f"decide. Take the rotary tables as a forward argument (freqs_cis) or a buffer and "
            f"the auditor can check them",
        },
    }


#: The items whose verdicts compare values that rotary positions change (q, k, the scores,
#: what the weights read, the heads' merge): NOT CHECKED when positions are computed inside.
ROTARY_ITEMS = (3, 7, 8)


def undecided_by_rotary(result: dict[str, object], positions: dict[str, object] | None) -> None:
    """With positions computed inside forward, the items and output check that compare values
    the rotation changes become NOT CHECKED, naming the line (they cannot say FAIL or PASS)."""
    if not positions or positions.get("finding") != "rotary_inside":
        return
    note = positions["evidence"]
    for item in result["items"]:  # type: ignore[attr-defined]
        if item["item"] in ROTARY_ITEMS:
            item.update(status="NOT CHECKED", mistakes=[], section=None, evidence=note)
    whole = result.get("overall")
    if isinstance(whole, dict) and whole.get("status") != "PASS":
        whole.update(status="NOT CHECKED", finding="rotary_inside", mistakes=[], evidence=note)


def with_names(result: dict[str, object]) -> dict[str, object]:
    """Add to each item its checklist name and its mistakes' titles (``{"zh", "en"}`` each), so
    the parent renders the report without importing the catalogue, and torch with it."""
    from attnlab.mistakes.catalogue import CHECKLIST, get

    for item in cast(list[dict[str, Any]], result.get("items", [])):
        item["name"] = {lang: CHECKLIST[lang][item["item"]] for lang in CHECKLIST}
        item["mistake_titles"] = [get(name).title for name in item["mistakes"]]
    return result


#: The judge's own address-space cap: whatever the learner's process tells it, it cannot be
#: made to hold more (torch and the audit's tensors need well under half of it).
JUDGE_MEMORY_MB = 3072


def main(argv: list[str]) -> int:
    import resource

    request = json.loads(argv[1])
    learner_fds = int(argv[2]), int(argv[3])
    die_with_parent(signal.SIGKILL)
    cap = JUDGE_MEMORY_MB * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    start = time.perf_counter()
    import torch

    torch.set_num_threads(1)  # tiny tensors: thread wake-ups would cost more than the maths
    import attnlab.audit.context
    import attnlab.audit.judge  # noqa: F401
    from attnlab.audit.keeper import READY, STARTUP_LIMIT
    from attnlab.audit.outcome import too_slow
    from attnlab.audit.remote import Learner, LearnerGone, LearnerTooSlow

    os.write(int(argv[4]), READY + b"\n")
    os.close(int(argv[4]))
    learner = Learner(*learner_fds, budget=float(request["timeout"]))
    try:
        learner.wait_ready(STARTUP_LIMIT)  # the learner's seconds start once it has torch
        result = with_names(audit(Path(request["path"]), request["name"], request["kind"], learner,
                                  request.get("init")))  # fmt: skip
    except LearnerGone as gone:  # the keeper knows how it died and says so
        result = {"status": "gone", "why": str(gone)}
    except LearnerTooSlow as slow:
        result = too_slow(float(request["timeout"]), importing=str(slow) == "import")
    except BaseException as exc:  # the auditor's own failure still gives a clean report
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        result = {
            "status": "error",
            "where": "audit",
            "error": {"zh": f"审计器内部错误：{last}", "en": f"the auditor failed: {last}"},
        }
    result["effects"] = learner.effects
    result["child_seconds"] = round(time.perf_counter() - start, 3)
    sys.stdout.buffer.write(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stderr.flush()
    # The result is written and flushed: skip the interpreter's tear-down, which with torch
    # loaded takes longer than the audit itself, and nothing of this process is needed after.
    os._exit(code)

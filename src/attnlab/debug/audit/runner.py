"""The sandboxed side of ``attnlab audit``.

``python -m attnlab.debug.audit.runner REQUEST RESULT FD``.

Started by :mod:`~attnlab.debug.audit.keeper`, in its own session, under a CPU-time and memory cap
(``resource.setrlimit``). Once torch is imported it writes the ready line to file descriptor FD
(the learner's timeout starts then), imports the learner's file, audits it and writes one JSON
object to RESULT. Whatever the learner's code does (raise, ``sys.exit``, loop, crash, fork), the
keeper gets either that JSON or a dead child it can describe, and kills what the code left
running. What the learner prints goes to fd 1 and 2, which the keeper reads and caps. Only torch
and the audit's own modules are imported here, to keep the start-up short.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any, cast

_TOKEN_ID_HINT = re.compile(r"indices|\bLong\b|embedding|one_hot")


def _limit(memory_mb: int, cpu_seconds: int) -> None:
    cap = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a segfault must not leave a core file


def _token_id_report(err: Any) -> list[dict[str, object]]:
    from attnlab.debug.audit.verdict import NOT_CHECKED

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
    from attnlab.debug.audit.context import KIND_SIZES, KIND_WIDTH

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


def audit(path: Path, name: str, kind: str) -> dict[str, object]:
    """Audit ``path:name``; learner failures become ``{"status": "error", ...}``."""
    from attnlab.debug.audit.context import build_audit, seen_kind
    from attnlab.debug.audit.judge import judge
    from attnlab.debug.audit.loader import LearnerError, guess_kind, load_target
    from attnlab.debug.audit.overall import overall

    try:
        target = load_target(path, name)
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
        return {
            "status": "ok",
            "kind": kind,
            "layout": layouts[-1] if layouts else None,
            "reproduced_by": a.reproduced_by,
            "items": items,
            "overall": overall(a, items),
        }
    except LearnerError as err:
        return {
            "status": "error",
            "kind": kind,
            "where": err.where,
            "error": {"zh": err.zh, "en": err.en},
        }


def with_names(result: dict[str, object]) -> dict[str, object]:
    """Add to each item its checklist name and its mistakes' titles (``{"zh", "en"}`` each), so
    the parent renders the report without importing the catalogue, and torch with it."""
    from attnlab.debug.catalogue import CHECKLIST, get

    for item in cast(list[dict[str, Any]], result.get("items", [])):
        item["name"] = {lang: CHECKLIST[lang][item["item"]] for lang in CHECKLIST}
        item["mistake_titles"] = [get(name).title for name in item["mistakes"]]
    return result


def main(argv: list[str]) -> int:
    request_path, result_path, ready_fd = Path(argv[1]), Path(argv[2]), int(argv[3])
    request = json.loads(request_path.read_text(encoding="utf-8"))
    _limit(int(request["memory_mb"]), int(request["cpu_seconds"]))
    start = time.perf_counter()
    import torch  # the slow import, done before telling the parent we are ready

    # The tensors are tiny: one thread avoids thread-pool wake-ups that cost more than the
    # arithmetic, which on a busy 2-core machine was most of an audit's time.
    torch.set_num_threads(1)

    import attnlab.debug.audit.context
    import attnlab.debug.audit.judge  # noqa: F401
    from attnlab.debug.audit import loader
    from attnlab.debug.audit.keeper import READY

    # The learner's prints go to fd 1 and 2, which the keeper reads (as UTF-8) and caps; no
    # print may fail on a terminal setting such as PYTHONIOENCODING=ascii.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    loader.keep_prints()
    os.write(ready_fd, READY + b"\n")
    os.close(ready_fd)  # before the learner's code runs: nothing it forks inherits it
    try:
        result = with_names(audit(Path(request["path"]), request["name"], request["kind"]))
    except BaseException as exc:  # the auditor's own failure still gives a clean report
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        result = {
            "status": "error",
            "where": "audit",
            "error": {"zh": f"审计器内部错误：{last}", "en": f"the auditor failed: {last}"},
        }
    for stream in (sys.stdout, sys.stderr):  # os._exit below would drop buffered prints
        with contextlib.suppress(Exception):
            stream.flush()
    result["child_seconds"] = round(time.perf_counter() - start, 3)
    tmp = result_path.with_suffix(".part")
    tmp.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, result_path)
    return 0


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv))  # skip interpreter teardown: learner threads must not keep us alive

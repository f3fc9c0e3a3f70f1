"""What an audit's processes reported, as the result the caller renders: the judge's verdict,
or what went wrong (a crash, a timeout, the memory cap), with bilingual notes on isolation,
replaced globals, processes left running and output dropped. No torch: the ``attnlab`` process
imports it.
"""

from __future__ import annotations

import signal
from typing import Any

from attnlab.audit.keeper import STARTUP_LIMIT
from attnlab.audit.reasons import clip
from attnlab.audit.sandbox import FILE_BYTES, REASONS


def exit_code(result: dict[str, Any]) -> int:
    """The audit's exit code: 1 when an item or the output check FAILs; 0 only when none does
    and the output check PASSes (the output equals the reference on every input); 2 when the
    code could not be run or the audit could not decide (the output check NOT CHECKED: the
    module's projections could not be read, so there was no reference to compare with)."""
    if result.get("status") != "ok":
        return 2
    items = result.get("items") or []
    whole = result.get("overall") or {}
    if any(i.get("status") == "FAIL" for i in items) or whole.get("status") == "FAIL":
        return 1
    return 0 if whole.get("status") == "PASS" else 2


def crash(zh: str, en: str, where: str) -> dict[str, object]:
    return {"status": "error", "where": where, "error": {"zh": zh, "en": en}}


def describe_death(returncode: int, stderr: str) -> dict[str, object]:
    if returncode < 0:
        sig = signal.Signals(-returncode).name
        hint = {
            "SIGSEGV": "segmentation fault",
            "SIGKILL": "killed (memory?)",
            "SIGXCPU": "CPU time limit",
            "SIGXFSZ": f"a file over the {FILE_BYTES // 2**20} MiB cap",
        }.get(sig, sig)
        return crash(
            f"你的代码让进程崩溃（{sig}，{hint}）",
            f"your code crashed the process ({sig}: {hint})",
            "crash",
        )
    last = clip(" ".join(stderr.strip().splitlines()[-1:]), 200)
    # The learner's last words, shown as text: no escape sequence reaches the terminal.
    tail = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in last)
    return crash(
        f"进程在审计完成前退出（退出码 {returncode}）{tail}",
        f"the process exited with code {returncode} before the audit finished "
        f"(os._exit or a crash?) {tail}".strip(),
        "exit",
    )


def result_of(outcome: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The judge's result, or what went wrong, plus what the learner printed and left running."""
    judged = outcome["result"]
    if outcome["timed_out"]:
        both = set(outcome["ready"]) == {"learner", "judge"}
        result = too_slow(timeout) if both else _no_start()
    elif outcome["memory"] is not None:
        result = _too_big(outcome["memory"])
    elif outcome.get("tasks") is not None:
        result = _too_many(outcome["tasks"])
    elif outcome["learner_died"] and "learner" not in outcome["ready"]:
        last = clip(" ".join(outcome["stderr"]["text"].strip().splitlines()[-1:]), 300)
        result = internal(
            f"运行你的代码的进程没有启动：{last}",
            f"the process for your code did not start: {last}",
        )
    elif outcome["learner_died"]:
        result = describe_death(outcome["returncode"], outcome["stderr"]["text"])
    elif judged is not None:
        result = dict(judged)
    else:
        last = clip(" ".join(outcome["judge_stderr"].strip().splitlines()[-1:]), 300)
        result = internal(f"判定进程失败：{last}", f"the judging process failed: {last}")
    output = {"stdout": outcome["stdout"], "stderr": outcome["stderr"]}
    effects = (judged or {}).get("effects") or []
    result.pop("effects", None)
    result.update(
        output=output,
        stray_processes=outcome["strays"],
        side_effects=effects,
        isolated=outcome["isolation"] is None,
        notes=_notes(output, outcome["strays"], effects, outcome["isolation"]),
    )
    return result


def _too_big(memory: dict[str, int]) -> dict[str, Any]:
    used, cap = _mib(memory["used"]), _mib(memory["cap"])
    return crash(
        f"你的代码的进程合计用了 {used} 内存，超过上限 {cap}，已被结束",
        f"your code's processes used {used} of memory together, over the {cap} cap; "
        "they were stopped",
        "memory",
    )


def _too_many(tasks: dict[str, int]) -> dict[str, Any]:
    used, cap = tasks["used"], tasks["cap"]
    return crash(
        f"你的代码的进程和线程合计达到 {used} 个，上限是 {cap} 个，已被结束",
        f"your code's processes and threads reached {used} together, the cap is {cap}; "
        "they were stopped",
        "tasks",
    )


_ONLY_OWN = {
    "zh": "（只影响运行你的代码的进程，不影响参考答案和判定）",
    "en": " (this changes only the process that runs your code, not the reference or the verdict)",
}


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _notes(
    output: dict[str, dict[str, Any]], strays: int, effects: list[str], isolation: str | None
) -> list[dict[str, str]]:
    """Bilingual lines for the report: isolation, globals replaced, processes left running,
    output dropped."""
    notes = [REASONS[isolation]] if isolation in REASONS else []
    for name in effects:
        what, _, dtype = name.partition("default_dtype=")
        notes.append(
            {
                "zh": f"你的文件把默认 dtype 改成了 {dtype}" if dtype else f"你的文件替换了 {what}",
                "en": f"your file changed the default dtype to {dtype}"
                if dtype
                else f"your file replaced {what}",
            }
        )
        notes[-1] = {k: v + _ONLY_OWN[k] for k, v in notes[-1].items()}
    if strays:
        were, them = ("was", "it") if strays == 1 else ("were", "them")
        notes.append(
            {
                "zh": f"你的代码启动的 {strays} 个进程在审计结束时仍在运行，已被结束"
                "（用 wait() 或 join() 等它们结束）",
                "en": f"{strays} process{'es' * (strays > 1)} your code started {were} still "
                f"running when the audit ended; the audit killed {them} (wait() for or join() "
                "your child processes)",
            }
        )
    printed = sum(s["bytes"] for s in output.values())
    dropped = sum(s["dropped"] for s in output.values())
    if dropped:
        kept = _mib(printed - dropped)
        notes.append(
            {
                "zh": f"你的代码输出了 {_mib(printed)}，只保留了 {kept}（每个输出流的开头和结尾）",
                "en": f"your code printed {_mib(printed)}; only {kept} of it was kept "
                "(the start and the end of each stream)",
            }
        )
    return notes


def internal(zh: str, en: str) -> dict[str, Any]:
    return crash(f"审计器内部错误：{zh}", f"the auditor failed: {en}", "audit")


#: Said when the file's own top-level code (not an import) failed or ran too long.
AT_IMPORT = {
    "zh": "：这个文件在被导入时就运行代码；把类放到单独的文件里，或把那段代码放到 "
    '`if __name__ == "__main__":` 之下',
    "en": ": the file runs code when imported; put the class in its own file, or that code "
    'under `if __name__ == "__main__":`',
}


def too_slow(timeout: float, importing: bool = False) -> dict[str, Any]:
    """The learner's code used up its time; ``importing``: it was still being imported."""
    if importing:
        return crash(
            f"你的文件在 {timeout:g} 秒内没有导入完成{AT_IMPORT['zh']}",
            f"your file did not finish importing within {timeout:g} s{AT_IMPORT['en']}",
            "import",
        )
    return crash(
        f"你的代码在 {timeout:g} 秒内没有完成（死循环？）",
        f"your code did not finish within {timeout:g} s (an endless loop?)",
        "timeout",
    )


def _no_start() -> dict[str, Any]:
    return crash(
        f"审计进程 {STARTUP_LIMIT:g} 秒内没有启动（机器太忙？）",
        f"the audit process did not start within {STARTUP_LIMIT:g} s (machine too busy?)",
        "startup",
    )

"""Render an audit result (the dict from :func:`attnlab.audit.run_audit`) as text.

Each item of the result carries its checklist name and its mistakes' titles (the runner adds
them from :mod:`attnlab.mistakes.catalogue`), so this module, which runs in the ``attnlab audit``
process, imports neither the catalogue nor torch.
"""

from __future__ import annotations

from typing import Any

from attnlab.text.fmt import width
from attnlab.text.i18n import pick

_STATUS = {
    "zh": {"PASS": "通过", "FAIL": "未通过", "NOT CHECKED": "未检查"},
    "en": {"PASS": "PASS", "FAIL": "FAIL", "NOT CHECKED": "NOT CHECKED"},
}


def _pad(text: str, cols: int) -> str:
    """Left-justify ``text`` to ``cols`` terminal columns, at least one space after it."""
    return text + " " * max(cols - width(text), 1)


def _mistake_line(item: dict[str, Any], lang: str) -> str:
    named = zip(item["mistakes"], item["mistake_titles"], strict=True)
    titles = pick(lang, "；", "; ").join(
        pick(lang, f"{n}（{t[lang]}）", f"{n} ({t[lang]})") for n, t in named
    )
    section = item["section"]
    reread = pick(lang, f"重读第 {section} 节", f"reread section {section}") if section else ""
    return pick(lang, f"复现它的错误：{titles}；{reread}", f"reproduced by: {titles}; {reread}")


def _call_lines(call: dict[str, Any] | None, lang: str) -> list[str]:
    """How the module was built and called, when either is not the lesson's plain way."""
    if not call:
        return []
    built, fwd = call.get("build"), call.get("forward")
    lines = []
    if built:
        lines.append(pick(lang, f"构造：{built}", f"built as: {built}"))
    probe = call.get("probe_build")
    if built and probe and probe != built:
        lines.append(pick(lang, f"随机输入时构造：{probe}", f"for the random inputs: {probe}"))
    if fwd and fwd["en"] != "forward(x)":
        lines.append(pick(lang, f"调用：{fwd['zh']}", f"called as: {fwd['en']}"))
    return lines


def render(result: dict[str, Any], lang: str) -> str:
    """The report: header, the ten items in order (evidence, mistake, section), summary, and
    notes (processes the learner's code left running, output that was dropped)."""
    head = f"attnlab audit {result.get('target', '')}"
    label = pick(lang, "注意：", "note: ")
    notes = "".join(f"{label}{n[lang]}\n" for n in result.get("notes", []))
    if result["status"] != "ok":
        err = result["error"][lang]
        why = pick(lang, "无法审计：", "cannot audit: ")
        return f"{head}\n{why}{err}\n{notes}"
    kind = result.get("kind", "")
    layout = result.get("layout") or pick(
        lang, "未找到（只做黑盒检查）", "not found (black-box checks only)"
    )
    lines = [
        head,
        pick(lang, f"类型：{kind}；投影：{layout}", f"kind: {kind}; projections: {layout}"),
        *_call_lines(result.get("call"), lang),
        "",
    ]
    counts = {"PASS": 0, "FAIL": 0, "NOT CHECKED": 0}
    for it in result["items"]:
        counts[it["status"]] += 1
        name, status = it["name"][lang], _STATUS[lang][it["status"]]
        lines.append(f"{it['item']:>2}. {_pad(name, 26)}{_pad(status, 12)}{it['evidence'][lang]}")
        if it["status"] == "FAIL" and it["mistakes"]:
            lines.append(" " * 4 + "→ " + _mistake_line(it, lang))
        elif it["status"] == "FAIL" and it["section"]:
            lines.append(
                " " * 4
                + "→ "
                + pick(lang, f"重读第 {it['section']} 节", f"reread section {it['section']}")
            )
    whole, rotary = result.get("overall"), result.get("positions")
    if whole:
        name = pick(lang, "输出 = 参考", "output = reference")
        status = _STATUS[lang][whole["status"]]
        lines.append(f"{'':>3} {_pad(name, 26)}{_pad(status, 12)}{whole['evidence'][lang]}")
        if whole["status"] == "FAIL":
            counts["FAIL"] += 1
    grouped = result.get("grouped")
    if grouped:
        name = pick(lang, "分组 K/V 头", "grouped K/V heads")
        status = _STATUS[lang][grouped["status"]]
        lines.append(f"{'':>3} {_pad(name, 26)}{_pad(status, 12)}{grouped['evidence'][lang]}")
    if rotary:
        name = pick(lang, "旋转位置编码", "rotary positions")
        status = _STATUS[lang][rotary["status"]]
        lines.append(f"{'':>3} {_pad(name, 26)}{_pad(status, 12)}{rotary['evidence'][lang]}")
    secs = result.get("seconds", 0.0)
    lines += [
        "",
        pick(
            lang,
            f"结果：{counts['FAIL']} 项未通过，{counts['PASS']} 项通过，"
            f"{counts['NOT CHECKED']} 项未检查"
            + ("；旋转位置编码未检查（课程之外）" if rotary else "")
            + f"（{secs:.1f} 秒）",
            f"result: {counts['FAIL']} FAIL, {counts['PASS']} PASS, "
            f"{counts['NOT CHECKED']} NOT CHECKED"
            + ("; rotary positions NOT CHECKED (beyond the lesson)" if rotary else "")
            + f" ({secs:.1f} s)",
        ),
    ]
    return "\n".join(lines) + "\n" + notes

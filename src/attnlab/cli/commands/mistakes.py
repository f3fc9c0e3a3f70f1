"""``attnlab mistakes [NAME]``: list the mistakes catalogue, or show one mistake's numbers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.text.fmt import fixed, vec
from attnlab.text.i18n import pick

if TYPE_CHECKING:
    import torch

    from attnlab.mistakes.catalogue import Mistake

ORDER = 46
#: Stages shown for one mistake, after the one it changes first.
_SHOWN = ("raw_scores", "scaled_scores", "masked_scores", "weights", "output", "logits")


def _table(t: torch.Tensor) -> str:
    return " | ".join(vec(r, 4, fixed) for r in t)  # one query row / token after another


def render_list(lang: str) -> str:
    """Every catalogue entry: name, checklist item, section to reread, title."""
    from attnlab.mistakes.catalogue import CATALOGUE, CHECKLIST
    from attnlab.text.fmt import text_table

    headers = [
        pick(lang, "名称", "name"),
        pick(lang, "清单项", "checklist item"),
        pick(lang, "重读", "reread"),
        pick(lang, "说明", "what"),
    ]
    rows = [
        [m.name, f"{m.item}. {CHECKLIST[lang][m.item]}", f"§{m.section}",
         m.title[lang]]
        for m in CATALOGUE
    ]  # fmt: skip
    lines = [text_table(headers, rows, left=(0, 1, 2, 3))]
    hint_zh = "用 attnlab mistakes 名称 查看某个错误算出的数。"
    lines.append(pick(lang, hint_zh, "Run attnlab mistakes NAME to see the numbers it produces."))
    return "\n".join(lines) + "\n"


def render_one(m: Mistake, lang: str) -> str:
    """One mistake: the wrong and right lines, and its stages next to the right ones."""
    from attnlab.core.steps import lesson_input
    from attnlab.mistakes import catalogue, diagnosis

    inp = diagnosis.multihead_example() if m.multihead_only else lesson_input()
    right, wrong = diagnosis.correct_stages(inp), diagnosis.mistake_stages(m, inp)
    item = catalogue.CHECKLIST[lang][m.item]
    lines = [
        f"{m.name}: {m.title[lang]}",
        pick(lang, f"  清单第 {m.item} 项（{item}），重读第 {m.section} 节",
             f"  checklist item {m.item} ({item}); reread section {m.section}"),
        pick(lang, f"  错误写法：{m.code}", f"  wrong: {m.code}"),
        pick(lang, f"  正确写法：{m.fix}", f"  right: {m.fix}"),
        f"  {m.explain[lang]}",
        pick(lang, "  课程例子（每个提示：正确 → 这个错误）：" if not m.multihead_only
             else "  两个 Head 的例子（每个提示：正确 → 这个错误）：",
             "  lesson example (each prompt: right → with this mistake):" if not m.multihead_only
             else "  two-head example (each prompt: right → with this mistake):"),
    ]  # fmt: skip
    start = _SHOWN.index(m.redo) if m.redo in _SHOWN else 0
    for stage in _SHOWN[start:]:
        if stage in wrong and stage in right:
            lines.extend(_stage_lines(stage, right[stage], wrong[stage], lang))
    return "\n".join(lines) + "\n"


def _stage_lines(stage: str, right: torch.Tensor, wrong: torch.Tensor, lang: str) -> list[str]:
    """One line per prompt (right → wrong); nothing when the mistake leaves the stage alone."""
    from attnlab.core.example import prompt_names
    from attnlab.mistakes.diagnosis import values_match

    if wrong.shape != right.shape:  # batch_mixed: one sequence of B·T tokens
        flat = pick(lang, "（B·T 个 Token 连成一条序列）", " (B·T tokens as one sequence)")
        return [f"    {stage:<14}{flat}: {_table(wrong[0])}"]
    if values_match(wrong, right, 1e-9):
        return []
    return [
        f"    {stage:<14} {p}: {_table(right[b])}  →  {_table(wrong[b])}"
        for b, p in enumerate(prompt_names(2))
    ]


def register(app: typer.Typer) -> None:
    """Add the ``mistakes`` command to ``app``."""

    @app.command(
        "mistakes",
        help="List the catalogue of attention mistakes (each tied to a checklist item and a "
        "lesson section), or show the numbers one mistake produces on the lesson example.",
    )
    def mistakes_command(
        ctx: typer.Context,
        name: Annotated[str | None, typer.Argument(help="A mistake's name, e.g. no_scale")] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the catalogue as JSON")
        ] = False,
        lang: LangOption = None,
    ) -> None:
        from attnlab.mistakes import catalogue

        chosen = lang_of(ctx, lang)
        if as_json:
            rows = [{"name": m.name, "item": m.item, "section": m.section, "redo": m.redo,
                     "title": m.title[chosen], "code": m.code, "fix": m.fix}
                    for m in catalogue.CATALOGUE]  # fmt: skip
            typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
            return
        if name is None:
            typer.echo(render_list(chosen), nl=False)
            return
        try:
            m = catalogue.get(name)
        except KeyError as exc:
            fail(str(exc.args[0]))
        typer.echo(render_one(m, chosen), nl=False)

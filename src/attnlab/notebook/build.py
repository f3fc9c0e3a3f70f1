"""The whole lesson as one Jupyter notebook, built with nbformat and written atomically.

Sections come from :func:`attnlab.content.sections.section` (the blocks every front end shows):
prose, formulas and tables as Markdown cells, listings and figures as code cells, then the
section's computation, its knowledge check, its graded exercises and the folded model answer.

Example::

    >>> nb = build_notebook("en")
    >>> nb.cells[1].cell_type, 'LANG = "en"' in nb.cells[1].source
    ('code', True)
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from attnlab.content.intro import intro
from attnlab.content.intro import title as intro_title
from attnlab.content.sections import SectionView, all_sections
from attnlab.notebook import cells
from attnlab.notebook.markdown import CODE_KINDS, block_markdown, escape
from attnlab.text import atomic
from attnlab.text.errors import InputError
from attnlab.text.i18n import pick

FILE_NAME = "week07-attention.ipynb"
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}


def _section_cells(view: SectionView, lang: str) -> list[NotebookNode]:
    out: list[NotebookNode] = []
    text = [f"## {escape(view.label)} {escape(view.title)}"]
    for b in view.blocks:
        if b.kind in CODE_KINDS:
            out += [new_markdown_cell("\n\n".join(text)), new_code_cell(cells.block_cell(b, lang))]
            text = []
        else:
            text.append(block_markdown(b))
    if text:
        out.append(new_markdown_cell("\n\n".join(text)))
    for source in (cells.stage_cell(view.id, lang), cells.extra_cell(view.id, lang)):
        if source:
            out.append(new_code_cell(source))
    heading = pick(lang, "**知识检查**：", "**Knowledge check:** ")
    out.append(new_markdown_cell(heading + escape(view.check.question)))
    out += [new_code_cell(cells.exercise_cell(ex, lang)) for ex in view.check.exercises]
    out.append(new_markdown_cell(_reveal(view, lang)))
    dealt = cells.practice_cell(view.id, lang)
    if dealt:
        out += [new_code_cell(dealt), new_code_cell("p.check(...)")]
    return out


def _reveal(view: SectionView, lang: str) -> str:
    """The model answer, folded, after the exercises (it may name numbers they ask for)."""
    reveal = pick(lang, "参考答案", "Model answer")
    return f"<details><summary>{reveal}</summary>\n\n{escape(view.check.answer)}\n\n</details>"


def _intro(lang: str) -> str:
    """The lesson's introduction (key question, objectives, study plan) as one Markdown cell."""
    return "\n\n".join([f"## {escape(intro_title(lang))}", *map(block_markdown, intro(lang))])


def build_notebook(lang: str) -> NotebookNode:
    """The lesson in ``lang`` as a validated nbformat-4 notebook."""
    nb = new_notebook(metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}})
    nb.cells = [new_markdown_cell(cells.intro(lang)), new_code_cell(cells.setup(lang))]
    nb.cells.append(new_markdown_cell(_intro(lang)))
    for view in all_sections(lang):
        nb.cells += _section_cells(view, lang)
    nbformat.validate(nb)
    return nb


def write_notebook(lang: str, out_dir: Path) -> Path:
    """Write :data:`FILE_NAME` into ``out_dir`` (created if missing) and return its path.

    The file appears whole or not at all: it is written to a temporary file beside it, then
    renamed.

    Raises:
        InputError: ``out_dir`` is a file, or cannot be created or written.
    """
    nb = build_notebook(lang)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out: expected a directory, found a file: {out_dir}")
    target = out_dir / FILE_NAME
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out: cannot write into {out_dir}: {exc.strerror}") from None
    try:
        atomic.write_with(target, lambda f: nbformat.write(nb, f))
    except OSError as exc:
        raise InputError(f"--out: cannot write {target}: {exc.strerror}") from None
    return target

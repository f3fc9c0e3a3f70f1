"""``attnlab notebook``: write the lesson as a Jupyter notebook, ``week07-attention.ipynb``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of

ORDER = 86


def register(app: typer.Typer) -> None:
    """Add ``notebook`` to ``app``."""

    @app.command("notebook")
    def notebook_command(
        ctx: typer.Context,
        out: Annotated[
            Path, typer.Option("--out", help="Directory to write into (created if missing)")
        ] = Path("."),
        lang: LangOption = None,
    ) -> None:
        """Write the whole lesson as a Jupyter notebook (text, tables, figures, runnable code and
        graded exercises); open it with jupyter lab."""
        from attnlab.notebook.build import write_notebook
        from attnlab.text.errors import InputError
        from attnlab.text.i18n import pick

        chosen = lang_of(ctx, lang)
        try:
            path = write_notebook(chosen, out)
        except InputError as exc:
            fail(str(exc))
        typer.echo(pick(chosen, f"已写入 {path}", f"Wrote {path}"))
        if shutil.which("jupyter"):
            typer.echo(pick(chosen, f"打开：jupyter lab {path}", f"Open it: jupyter lab {path}"))
        else:  # the notebook is written; say what opens it
            typer.echo(pick(
                chosen,
                f"还没有安装 JupyterLab：先运行 pip install 'attnlab[notebook]'"
                f"（或 make notebook），再运行 jupyter lab {path}；"
                "VS Code 等编辑器也能直接打开 .ipynb。",
                f"JupyterLab is not installed: run pip install 'attnlab[notebook]' (or make "
                f"notebook), then jupyter lab {path}; editors such as VS Code open .ipynb too.",
            ))  # fmt: skip

"""Command-line handling of the two lesson scripts (argparse only, so they start fast).

``week07_attention.py`` and ``course_examples/week07_attention.py`` are one-line wrappers around
:func:`run`; ``attnlab lesson`` and ``attnlab grad`` call the same renderers. This module imports
nothing that imports torch: torch is loaded only once the arguments are accepted, so a mistyped
option is reported (exit 2) in a fraction of a second.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from attnlab.core.threads import one_thread
from attnlab.text.i18n import resolve_lang

MAX_PRECISION = 12


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _precision(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer 0-{MAX_PRECISION}, got {text!r}"
        ) from None
    if not 0 <= value <= MAX_PRECISION:
        raise argparse.ArgumentTypeError(f"expected an integer 0-{MAX_PRECISION}, got {value}")
    return value


def _parser(prog: str, description: str) -> _Parser:
    parser = _Parser(prog=prog, description=description)
    parser.add_argument("--lang", choices=("zh", "en"), default=None, help="zh (default) or en")
    parser.add_argument(
        "--precision",
        type=_precision,
        default=None,
        help="decimals of the script's own tables (the page's sections keep theirs)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document with every stage instead"
    )
    return parser


def run(kind: str, argv: list[str] | None = None) -> int:
    """Run the lesson walk (``kind="lesson"``) or section 16's experiment (``"grad"``)."""
    prog = "week07_attention.py"
    description = {
        "lesson": "Walk Week 7's attention lesson stage by stage and print every number.",
        "grad": "Section 16: the gradient of the mean loss with respect to W_Q[1,0], one step; "
        "section 7: the gradient of W_V[0,0] on the content path.",
    }[kind]
    args = _parser(prog, description).parse_args(argv)
    try:
        lang = resolve_lang(args.lang)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    with one_thread():
        text = _render(kind, lang, args.precision, args.json)
    try:
        print(text)
    except BrokenPipeError:  # e.g. piped into `head`: the reader has all it wanted
        sys.stderr.close()
    return 0


def _render(kind: str, lang: str, precision: int | None, as_json: bool) -> str:
    from attnlab.cli import walk, walk_grad
    from attnlab.text.jsonable import dumps

    if as_json:
        return dumps(walk.lesson_document(lang))
    if kind == "lesson":
        return walk.render_lesson(lang, _or(precision, walk.DEFAULT_PRECISION))
    return walk_grad.render_experiment(lang, _or(precision, walk_grad.EXPERIMENT_PRECISION))


def _or(value: int | None, default: int) -> int:
    return default if value is None else value

"""Load a learner's file and build the module to audit, turning every failure into a
:class:`LearnerError` with one clear bilingual line (the runner reports it, exit code 2)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from torch import nn

from attnlab.audit import construct
from attnlab.audit.package import dotted_name, package_root
from attnlab.audit.reasons import clip


class LearnerError(Exception):
    """The learner's code could not be audited: it raised, exited or has the wrong shape.

    Args:
        zh, en: one-line messages; where: the step ("import", "build", "call") that failed.
    """

    def __init__(self, zh: str, en: str, where: str) -> None:
        super().__init__(en)
        self.zh, self.en, self.where = zh, en, where
        #: What the learner's code raised (its type's name), and the learner's line
        #: (file name, number, code) where it did, when known.
        self.raised: str | None = None
        self.line: tuple[str, int, str] | None = None


class _Muted(io.TextIOBase):
    """A text stream that drops what is written: muted prints cost no memory, however many."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


_mute = True


def keep_prints() -> None:
    """Let the learner's prints through to fd 1 and 2 (the sandboxed runner, whose output the
    keeper captures and caps); by default :func:`guarded` mutes them."""
    global _mute
    _mute = False


@contextlib.contextmanager
def guarded(where: str, path: Path) -> Iterator[None]:
    """Run learner code, muting its prints and converting what it raises (even ``sys.exit``)."""
    out = _Muted() if _mute else sys.stdout
    err = _Muted() if _mute else sys.stderr
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            yield
        except LearnerError:
            raise
        except SystemExit as exc:
            raise LearnerError(
                f"你的代码在{_STEP['zh'][where]}时调用了 sys.exit({exc.code!r})",
                f"your code called sys.exit({exc.code!r}) while {_STEP['en'][where]}",
                where,
            ) from None
        except BaseException as exc:  # the learner's code may raise anything
            at = _learner_frame(exc, path)
            where_at = (f"{at[0]}:{at[1]}: {at[2]}" if at[2] else f"{at[0]}:{at[1]}") if at else ""
            line = f" ({where_at})" if at else ""
            line_zh = f"（{where_at}）" if at else ""
            if isinstance(exc, ModuleNotFoundError) and exc.name:
                err = _missing(exc.name, line_zh, line, where)
            else:
                what = f"{type(exc).__name__}: {clip(' '.join(str(exc).split()), 600)}"
                hint = cap_hint(exc)
                if where == "import" and _top_level(exc, path):
                    from attnlab.audit.outcome import AT_IMPORT as hint
                err = LearnerError(
                    f"你的代码在{_STEP['zh'][where]}时抛出 {what}{line_zh}{hint['zh']}",
                    f"your code raised {what} while {_STEP['en'][where]}{line}{hint['en']}",
                    where,
                )
            err.raised, err.line = type(exc).__name__, at
            raise err from None


#: The packages an audited file may import, beside the standard library: attnlab's own.
IMPORTABLE = ("torch", "numpy")


def _missing(name: str, line_zh: str, line: str, where: str) -> LearnerError:
    """A module the learner's code imports that neither its folder nor the audit's Python has."""
    top = name.split(".")[0]
    allowed = ", ".join(IMPORTABLE)
    return LearnerError(
        f"你的代码在{_STEP['zh'][where]}时导入了 {top}{line_zh}，但审计环境里没有这个库，你的"
        f"文件夹里也没有这个模块：被审计的文件可以导入 Python 标准库、{'、'.join(IMPORTABLE)} "
        f"和你自己文件夹里的模块。把注意力类放进不导入 {top} 的文件，或去掉这个导入",
        f"your code imports {top}{line} while {_STEP['en'][where]}, which is neither installed "
        f"where the audit runs nor a module in your folder: an audited file may import the "
        f"standard library, {allowed} and the modules of its own folder. Move the attention "
        f"class into a file that does not import {top}, or drop the import",
        where,
    )


def cap_hint(exc: BaseException) -> dict[str, str]:
    """``{"zh", "en"}``: the audit's cap that ``exc`` ran into, and how much it allows (a
    sentence to add to the learner's error), or empty strings when it is none of them."""
    import errno

    from attnlab.audit.sandbox import FILE_BYTES, OPEN_FILES, SHM_BYTES, TASKS, TMP_BYTES

    code = getattr(exc, "errno", None)
    mib = 2**20
    if (isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)) or (
        isinstance(exc, OSError) and code == errno.EAGAIN
    ):
        zh, en = f"进程和线程合计上限 {TASKS} 个", f"the cap of {TASKS} processes and threads"
    elif code in (errno.EMFILE, errno.ENFILE):
        zh, en = f"每个进程最多打开 {OPEN_FILES} 个文件", f"the cap of {OPEN_FILES} open files"
    elif code == errno.EFBIG:
        zh, en = f"单个文件上限 {FILE_BYTES // mib} MiB", f"the {FILE_BYTES // mib} MiB file cap"
    elif code == errno.ENOSPC:
        zh = f"/tmp 上限 {TMP_BYTES // mib} MiB、/dev/shm 上限 {SHM_BYTES // mib} MiB"
        en = f"the caps of /tmp ({TMP_BYTES // mib} MiB) and /dev/shm ({SHM_BYTES // mib} MiB)"
    else:
        return {"zh": "", "en": ""}
    return {"zh": f"（审计的资源上限：{zh}）", "en": f" (the audit's resource cap: {en})"}


def _top_level(exc: BaseException, path: Path) -> bool:
    """The learner's innermost frame in ``path`` is its module body, at a statement that is
    not an import: code the file runs when imported (a data file read, a training loop)."""
    import ast

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    if not frames or frames[-1].name != "<module>" or frames[-1].lineno is None:
        return False
    try:
        body = ast.parse(path.read_text(encoding="utf-8")).body
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return False
    at = frames[-1].lineno
    stmt = next((s for s in body if s.lineno <= at <= (s.end_lineno or s.lineno)), None)
    return stmt is not None and not isinstance(stmt, ast.Import | ast.ImportFrom)


_STEP = {
    "zh": {"import": "导入文件", "build": "构造模块", "call": "运行 forward "},
    "en": {
        "import": "importing the file",
        "build": "building the module",
        "call": "running forward",
    },
}


@contextlib.contextmanager
def feeding(target: Any, sizes: tuple[int, ...], shape: tuple[int, ...]) -> Iterator[None]:
    """A forward that fails on the auditor's input says which input it was and how to
    reproduce the failure in two lines of Python."""
    try:
        yield
    except LearnerError as err:
        if err.where != "call":
            raise
        name = getattr(target, "__name__", "Module")
        fed = "[" + ", ".join(map(str, shape)) + "]"
        built = getattr(target, "built", {}).get(tuple(sizes)) or f"{name}{tuple(sizes)}"
        call = getattr(target, "call", None)
        run = call.reproduce(shape) if call is not None else f"m(torch.randn{tuple(shape)})"
        again = f"m = {built}.eval(); {run}"
        raise LearnerError(
            f"{err.zh}（审计器输入的是形状为 {fed} 的 x；复现：{again}）",
            f"{err.en} (the auditor fed x of shape {fed}; to reproduce: {again})",
            "call",
        ) from None


def _learner_frame(exc: BaseException, path: Path) -> tuple[str, int, str] | None:
    """The innermost frame in the learner's own files (``path``, or a module of its folder or
    package: ``LMConfig.py`` beside ``model.py``): file name, line and code (empty when the
    line is over 200 characters: shown cut, it would leave a quote or bracket open)."""
    root = package_root(path.resolve())
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.lineno is not None and _within(Path(f.filename), path.resolve(), root)
    ]
    if not frames:
        return None
    last = frames[-1]
    shown = Path(last.filename).name
    code = (last.line or "").strip()
    return shown, int(last.lineno or 0), code if len(code) <= 200 else ""


def _within(file: Path, path: Path, root: Path | None) -> bool:
    """``file`` is the learner's: ``path``, a sibling module, or a module of its package."""
    try:
        resolved = file.resolve()
    except OSError:
        return False
    if resolved == path:
        return True
    if resolved.suffix != ".py" or "site-packages" in resolved.parts:
        return False
    return resolved.parent == path.parent or (root is not None and root in resolved.parents)


def load_target(path: Path, name: str) -> Callable[..., Any]:
    """Import ``path`` as a fresh module and return its attribute ``name``.

    The file's folder goes on ``sys.path``; a file inside a package (``mingpt/model.py``) is
    imported under its dotted name, with the folder above the package root on ``sys.path``
    too, so that ``from mingpt.utils import ...`` and ``from .utils import ...`` work."""
    path = path.resolve()
    dotted = dotted_name(path)
    spec = importlib.util.spec_from_file_location(dotted or f"attnlab_learner_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise LearnerError(f"无法导入 {path}", f"cannot import {path}", "import")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    root = package_root(path)
    if root is not None and dotted is not None:
        sys.path.insert(0, str(root.parent))
    with guarded("import", path):
        if dotted is not None and spec.parent:
            importlib.import_module(spec.parent)  # the packages around it, for its imports
        spec.loader.exec_module(module)
    target = getattr(module, name, None)
    if target is None:
        found = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        listed = ", ".join(sorted(found)[:12]) or "-"
        raise LearnerError(
            f"{path.name} 中没有名为 {name} 的类或函数（找到：{listed}）",
            f"{path.name} has no class or function called {name} (found: {listed})",
            "import",
        )
    if not callable(target):
        raise LearnerError(
            f"{name} 应是类或函数，实际是 {type(target).__name__}",
            f"{name} must be a class or a function, got {type(target).__name__}",
            "import",
        )
    return target


def build(
    target: Callable[..., Any],
    kind: str,
    sizes: tuple[int, int, int],
    path: Path,
    init: dict[str, Any] | None = None,
) -> tuple[nn.Module, str]:
    """Call ``target`` with each parameter set by the meaning of its name
    (:func:`~attnlab.audit.construct.arguments`) and check it gives a Module.

    A constructor that takes a config object is tried with each candidate config in turn
    (the file's own config class first); when all fail, the first failure is reported.

    Returns:
        The module (float32, eval mode) and the call that built it, as Python text.

    Raises:
        LearnerError: the parameters cannot be mapped, the constructor raised, or it did not
            give an ``nn.Module``.
    """
    from attnlab.audit.construct import BuildError, arguments

    try:
        plan = arguments(target, kind, sizes, init)
    except BuildError as err:
        raise LearnerError(err.zh, err.en, "build") from None
    name = getattr(target, "__name__", "target")
    slot = plan.config_slot
    tries = [(c, text) for c, text in plan.configs] if slot else [(None, None)]
    first: LearnerError | None = None
    for config, config_text in tries:
        kwargs = {**plan.kwargs, **({slot: config} if slot else {})}
        try:
            with guarded("build", path):
                module = target(*plan.args, **kwargs)
        except LearnerError as err:
            first = first or err
            continue
        text = plan.text(name, config_text)
        if not isinstance(module, nn.Module):
            raise LearnerError(
                f"{text} 应返回 nn.Module，实际是 {type(module).__name__}",
                f"{text} must give an nn.Module, got {type(module).__name__}",
                "build",
            )
        return module.float().eval(), text
    assert first is not None
    if first.raised == "AssertionError" and first.line is not None:
        config = tries[0][0]
        raise _rejected(first, plan.text(name, tries[0][1]), config, plan.kwargs) from None
    raise first


def _rejected(err: LearnerError, built: str, config: Any, kwargs: dict[str, Any]) -> LearnerError:
    """The learner's assert rejected the module the auditor built: what was built, the values
    the assert reads (those the auditor left at their defaults said so) and the ``--init`` to
    give them."""
    import ast
    import re

    file, number, code = err.line or ("", 0, "")
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        tree = None
    read: list[str] = []
    for node in ast.walk(tree) if tree is not None else []:
        name = node.attr if isinstance(node, ast.Attribute) else None
        if name is not None and name not in read:
            read.append(name)
    set_here = set(re.findall(r"(\w+)=", built)) | set(kwargs)
    facts, left = [], []
    for name in read:
        value = (
            getattr(config, name, kwargs.get(name, _MISSING))
            if config is not None
            else (kwargs.get(name, _MISSING))
        )
        if value is _MISSING or callable(value):
            continue
        facts.append((name, value, name in set_here))
        if name not in set_here:
            left.append(name)
    zh_facts = "，".join(f"{n}={v!r}" + ("" if mine else "（默认值，审计器没有设置）")
                         for n, v, mine in facts)  # fmt: skip
    en_facts = ", ".join(f"{n}={v!r}" + ("" if mine else " (its default: the auditor left it)")
                         for n, v, mine in facts)  # fmt: skip
    say = ", ".join(f"{n}=..." for n in left) or "name=value"
    zh_what = f"：其中 {zh_facts}" if facts else ""
    en_what = f": there {en_facts}" if facts else ""
    return LearnerError(
        f"审计器构造了 {built}，你在 {file}:{number} 的 assert（{code}）拒绝了它{zh_what}。"
        f'请用 --init "{say}" 给出这些值（C 嵌入维度、H 头数、D 每头维度、T 上下文长度也可用），'
        f"或审计一个工厂函数",
        f"the auditor built {built}, which your assert at {file}:{number} ({code}) rejects"
        f'{en_what}. Give these values with --init "{say}" (the symbols C, H, D, T work too) or '
        f"audit a factory function",
        "build",
    )


_MISSING = object()


#: Constructor argument names that give a head count (a multi-head module).
HEAD_COUNTS = construct.HEAD_COUNTS

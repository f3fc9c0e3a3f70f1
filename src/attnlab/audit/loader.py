"""Load a learner's file and build the module to audit, turning every failure into a
:class:`LearnerError` with one clear bilingual line (the runner reports it, exit code 2)."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from torch import nn

#: Constructor arguments the lesson uses, by kind (the third is always ``context_length``).
SIGNATURES: dict[str, tuple[str, str, str]] = {
    "head": ("embed_dim", "head_size", "context_length"),
    "multihead": ("embed_dim", "num_heads", "context_length"),
}


class LearnerError(Exception):
    """The learner's code could not be audited: it raised, exited or has the wrong shape.

    Args:
        zh, en: one-line messages; where: the step ("import", "build", "call") that failed.
    """

    def __init__(self, zh: str, en: str, where: str) -> None:
        super().__init__(en)
        self.zh, self.en, self.where = zh, en, where


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
            line = _learner_line(exc, path)
            what = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            raise LearnerError(
                f"你的代码在{_STEP['zh'][where]}时抛出 {what}{line}",
                f"your code raised {what} while {_STEP['en'][where]}{line}",
                where,
            ) from None


_STEP = {
    "zh": {"import": "导入文件", "build": "构造模块", "call": "运行 forward"},
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
        again = f"m = {name}{tuple(sizes)}.eval(); m(torch.randn{tuple(shape)})"
        raise LearnerError(
            f"{err.zh}（审计器输入的是形状为 {fed} 的 x；复现：{again}）",
            f"{err.en} (the auditor fed x of shape {fed}; to reproduce: {again})",
            "call",
        ) from None


def _learner_line(exc: BaseException, path: Path) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    if not frames:
        return ""
    last = frames[-1]
    return f" ({path.name}:{last.lineno}: {(last.line or '').strip()[:80]})"


def load_target(path: Path, name: str) -> Callable[..., Any]:
    """Import ``path`` as a fresh module and return its attribute ``name``."""
    path = path.resolve()
    spec = importlib.util.spec_from_file_location(f"attnlab_learner_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise LearnerError(f"无法导入 {path}", f"cannot import {path}", "import")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    with guarded("import", path):
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


def _check_signature(target: Callable[..., Any], kind: str) -> None:
    want = SIGNATURES[kind]
    try:
        sig = inspect.signature(target)
        sig.bind(1, 1, 1)
    except ValueError:
        return  # no introspectable signature: let the call decide
    except TypeError:
        params = ", ".join(p for p in sig.parameters if p != "self")
        raise LearnerError(
            f"签名不对：应能以 ({', '.join(want)}) 调用，实际参数是 ({params})",
            f"wrong signature: expected ({', '.join(want)}), found ({params})",
            "build",
        ) from None


def build(
    target: Callable[..., Any], kind: str, sizes: tuple[int, int, int], path: Path
) -> nn.Module:
    """Call ``target(*sizes)`` (positionally, as the lesson does) and check it gives a Module."""
    _check_signature(target, kind)
    with guarded("build", path):
        module = target(*sizes)
    if not isinstance(module, nn.Module):
        raise LearnerError(
            f"{getattr(target, '__name__', target)}{sizes} 应返回 nn.Module，实际是 "
            f"{type(module).__name__}",
            f"{getattr(target, '__name__', target)}{sizes} must give an nn.Module, got "
            f"{type(module).__name__}",
            "build",
        )
    return module.float().eval()


#: Second constructor arguments that name a head count (a multi-head module).
HEAD_COUNTS = {
    "num_heads", "num_head", "n_head", "n_heads", "heads", "nhead", "nheads", "h",
    "head_num", "heads_num", "num_attention_heads", "n_heads_attn",
}  # fmt: skip

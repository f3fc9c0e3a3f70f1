"""Where the learner's code runs: a bubblewrap sandbox, or, where none can start, a bare process.

With bubblewrap (Debian ``bubblewrap``, https://github.com/containers/bubblewrap) the learner's
process gets new user, PID, network, IPC, UTS and cgroup namespaces, all capabilities dropped,
and a file system of its own: the Python environment (the interpreter's prefixes and the
folders on ``sys.path``), the system's ``/usr``, ``/lib*``, ``/bin`` and ``/etc``, and the
learner's file with its sibling ``.py`` files (and its package's, for a file inside a
package), all read-only, plus an empty size-capped
``/tmp`` as its home (its only writable folder). It cannot see the progress store, ``$HOME``,
the network or any other process; when its PID namespace's first process exits, the kernel
kills every process left in it, and ``--die-with-parent`` ends the sandbox if the keeper dies.

Where bubblewrap is missing or cannot create namespaces (another OS, a container that forbids
them), :func:`learner_command` returns the bare command and :func:`isolation` says why, so the
report can say in one line that the code was not isolated.

Standard library only: the keeper imports this module and must start in milliseconds.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from attnlab.audit.package import package_files

#: ``ATTNLAB_AUDIT_SANDBOX=off`` runs the learner's code without bubblewrap (tests of the keeper).
SWITCH = "ATTNLAB_AUDIT_SANDBOX"
#: The variable every learner process carries: how leftover processes are recognised.
MARK = "ATTNLAB_AUDIT_MARK"
#: Bytes the learner's ``/tmp`` may hold (it is memory: a tmpfs).
TMP_BYTES = 64 * 2**20
#: Bytes the learner's ``/dev/shm`` may hold (a tmpfs of its own: bubblewrap's ``/dev`` has no
#: size cap, so memory written to files there would escape the memory cap).
SHM_BYTES = 64 * 2**20
#: Processes and threads the learner's code may have at once (``RLIMIT_NPROC``; in bubblewrap
#: counted for the sandbox's user alone). The keeper stops the audit when the tree reaches it.
TASKS = 256
#: Files one learner process may have open at once (``RLIMIT_NOFILE``).
OPEN_FILES = 1024
#: Bytes one file the learner's code writes may hold (``RLIMIT_FSIZE``: also a memfd's).
FILE_BYTES = 64 * 2**20
#: The unprivileged user and group the learner's code runs as. Started by root, bubblewrap
#: makes no user namespace (root inside one would still be root to the files bound in) and
#: the learner's process drops to this real uid before anything else (:data:`DROP`).
NOBODY = 65534
#: Set in the learner's environment when it must drop from root to ``uid:gid`` at once.
DROP = "ATTNLAB_AUDIT_DROP"
#: Variables passed into the learner's process; the rest of the environment stays outside.
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONHASHSEED", "ATTNLAB_TEST_PIDS")
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def learner_tmp(mark: str) -> Path:
    """The temp folder (``TMPDIR``, working folder) the keeper makes for the learner's process
    of the audit ``mark`` outside bubblewrap; named by the mark, so the caller can remove it
    should the keeper be killed."""
    return Path(tempfile.gettempdir()) / f"attnlab-audit-{mark}"


def judge_tmp(mark: str) -> Path:
    """The judge's working folder for the audit ``mark``: empty, its own, beside
    :func:`learner_tmp` (the caller removes both should the keeper be killed)."""
    return Path(tempfile.gettempdir()) / f"attnlab-judge-{mark}"


#: Variables the judge's interpreter never reads from the caller: they would run or import
#: code of someone else's before the judge's own (``-P`` already keeps the working folder and
#: the script's folder off ``sys.path``).
_JUDGE_DROPPED = ("PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONHOME", "PYTHONEXECUTABLE")


def judge_command(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The judge's command line and environment: ``python -P -s`` (``sys.path`` is the
    interpreter's own folders and, when set, the caller's ``PYTHONPATH`` made absolute: never
    the working folder, the learner's folder or the user's site folder).

    The keeper starts it in :func:`judge_tmp`, so a ``functools.py`` beside the audited file
    or in the folder the audit was started from is never imported by the judge."""
    env = {k: v for k, v in os.environ.items() if k not in _JUDGE_DROPPED}
    env.pop("PYTHONPATH", None)
    env.update(_pythonpath())
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return [sys.executable, "-P", "-s", *args], env


def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def isolation() -> str | None:
    """``None`` when learner code runs isolated, else the reason it cannot (one line, English;
    the report words it in the viewer's language from :data:`REASONS`)."""
    if os.environ.get(SWITCH, "").lower() in ("off", "0", "no"):
        return "off"
    bwrap = _bwrap()
    if bwrap is None:
        return "missing"
    try:
        probe = subprocess.run(
            [bwrap, *_namespaces(), "--ro-bind", "/", "/", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "refused"
    return None if probe.returncode == 0 else "refused"


#: Why the code was not isolated, by :func:`isolation`'s reason.
REASONS = {
    "off": {
        "zh": f"未隔离：{SWITCH}=off，你的代码在普通进程中运行",
        "en": f"not isolated: {SWITCH}=off, your code ran in a plain process",
    },
    "missing": {
        "zh": "未隔离：没有找到 bubblewrap（bwrap），你的代码在普通进程中运行"
        "（Debian/Ubuntu：apt install bubblewrap）",
        "en": "not isolated: bubblewrap (bwrap) was not found, so your code ran in a plain "
        "process (Debian/Ubuntu: apt install bubblewrap)",
    },
    "refused": {
        "zh": "未隔离：这台机器不允许 bubblewrap 创建命名空间，你的代码在普通进程中运行",
        "en": "not isolated: this machine does not let bubblewrap create namespaces, so your "
        "code ran in a plain process",
    },
}


#: ``ATTNLAB_AUDIT_USERNS=1``: run as root, still sandbox the way an unprivileged caller is
#: (a user namespace, uid 65534 inside it): the tests of that path, which learners' laptops take.
USERNS_SWITCH = "ATTNLAB_AUDIT_USERNS"


def _as_root() -> bool:
    return os.geteuid() == 0 and os.environ.get(USERNS_SWITCH) != "1"


def _namespaces() -> list[str]:
    common = ["--die-with-parent", "--new-session"]  # new session: no TIOCSTI into a terminal
    if not _as_root():
        return ["--unshare-all", *common, "--cap-drop", "ALL"]  # user, pid, net, ipc, uts, cgroup
    # Root: no user namespace (its root maps to the real root, who reads every root-owned file
    # bound in); the learner's process keeps only what it needs to drop to NOBODY, then has none.
    unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try"]  # fmt: skip
    keep = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return [*unshare, *common, *keep]


def _python_roots() -> list[Path]:
    """The folders the interpreter and its packages live in (venv, base install, sys.path)."""
    found = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    found |= {Path(p) for p in sys.path if p and Path(p).is_dir()}
    found.add(Path(sys.executable).resolve().parent.parent)
    roots = sorted(p.resolve() for p in found if p.exists())
    return [p for p in roots if not any(q != p and q in p.parents for q in roots)]


def _learner_files(path: Path) -> list[Path]:
    """The learner's file, its sibling ``.py`` files (a file may import its neighbours) and,
    for a file inside a package, the package's ``.py`` files (:mod:`~attnlab.audit.package`)."""
    siblings = sorted(p for p in path.parent.glob("*.py") if p.is_file() and p != path)
    found = [path, *siblings[:200]]
    seen = {p.resolve() for p in found}
    return found + [p for p in package_files(path) if p not in seen]


def _pythonpath() -> dict[str, str]:
    """``PYTHONPATH`` with each folder made absolute, when it is set: the learner's process
    runs in its own working folder and must import the same attnlab as the judge (its folders
    are on ``sys.path``, so the sandbox shows them read-only)."""
    found = os.environ.get("PYTHONPATH")
    if not found:
        return {}
    return {
        "PYTHONPATH": os.pathsep.join(str(Path(p).resolve()) for p in found.split(os.pathsep) if p)
    }


def learner_command(
    argv: list[str], learner_file: Path, mark: str, tmp: Path
) -> tuple[list[str], dict]:
    """The command and environment that run ``argv`` (a Python command) on ``learner_file``.

    Args:
        tmp: an empty folder, the learner's ``TMPDIR`` (and working folder) when it runs
            without bubblewrap, which gives it a ``/tmp`` of its own.

    Returns:
        ``(command, env)``: inside bubblewrap when :func:`isolation` is ``None``, else
        ``argv`` itself; ``env`` is the environment the learner's process gets.
    """
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    env.update({MARK: mark, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"})
    env.update(_pythonpath())
    if isolation() is not None:
        plain = {MARK: mark, "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp)}
        return argv, {**os.environ, **plain, **_pythonpath()}
    bwrap = _bwrap()
    assert bwrap is not None  # isolation() found it
    # /tmp first: a later bind of a file under /tmp (the learner's, a venv's) lands on top of it.
    tmpfs = ["--perms", "1777", "--size"]
    cmd = [bwrap, *_namespaces(), *tmpfs, str(TMP_BYTES), "--tmpfs", "/tmp"]
    cmd += ["--proc", "/proc", "--dev", "/dev", *tmpfs, str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    for folder in _SYSTEM:
        cmd += ["--ro-bind-try", folder, folder]
    bound, made = [Path(f) for f in _SYSTEM], {Path("/tmp"), Path("/dev"), Path("/proc")}
    for root in _python_roots():
        cmd += [*_parents(root, bound, made), "--ro-bind", str(root), str(root)]
        bound.append(root)
    for file, shown in _staged(_learner_files(learner_file), tmp):
        cmd += [*_parents(file, bound, made), "--ro-bind", str(shown), str(file)]
    cmd += ["--remount-ro", "/"]  # the root bubblewrap made for the mounts: no writes there
    cmd += ["--chdir", "/tmp", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    if _as_root():
        cmd += ["--setenv", DROP, f"{NOBODY}:{NOBODY}", "--"]
        env[DROP] = f"{NOBODY}:{NOBODY}"
    else:
        cmd += ["--uid", str(NOBODY), "--gid", str(NOBODY), "--"]
    env["HOME"], env["TMPDIR"] = "/tmp", "/tmp"
    return [*cmd, *argv], env


def _parents(path: Path, bound: list[Path], made: set[Path]) -> list[str]:
    """``--dir`` options making ``path``'s folders, readable by all (bubblewrap would copy the
    modes of the real ones: the real ``/root`` is 0700, so NOBODY could not reach a Python under
    it), but those already made (``made`` gets each new one) or inside a folder in ``bound``."""
    found: list[str] = []
    for parent in reversed(path.parents[:-1]):  # outermost first, "/" left out
        if parent in made or any(b == parent or b in parent.parents for b in bound):
            continue
        found += ["--perms", "0755", "--dir", str(parent)]
        made.add(parent)
    return found


def _staged(files: list[Path], tmp: Path) -> list[tuple[Path, Path]]:
    """``(path, what to bind there)`` for each learner file. Run as root, the learner's code is
    NOBODY, who may not read a submitted file (a 0600 one): it sees a readable copy, made in
    ``tmp`` (the keeper's, which the sandbox never shows), at the file's own path."""
    if not _as_root():
        return [(f, f) for f in files]
    staged = tmp / "files"
    staged.mkdir(mode=0o700, exist_ok=True)
    found = []
    for n, file in enumerate(files):
        copy = staged / f"{n}.py"
        try:
            shutil.copyfile(file, copy)
        except OSError:
            continue  # gone or unreadable even to root: the learner's import says so
        copy.chmod(0o444)
        found.append((file, copy))
    return found


def drop_root() -> None:
    """In the learner's process, first of all: become :data:`DROP`'s ``uid:gid`` (no
    supplementary groups) when started as root for it. Nothing else has run yet."""
    wanted = os.environ.pop(DROP, None)
    if not wanted or os.getuid() != 0:
        return
    uid, gid = (int(n) for n in wanted.split(":"))
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:  # never run learner code as root
        raise SystemExit(f"attnlab audit: could not drop to uid {uid}")

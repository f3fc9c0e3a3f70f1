"""The built wheel, installed in a fresh virtual environment and run from a folder outside the
repository: the version, the lesson, a listing that runs, and the files ``attnlab serve`` reads.

No network: the fresh environment reaches the dependencies already installed for this test run
through a ``.pth`` file naming their folder (after its own site-packages), and installs only the
wheel. The editable install of the development environment is not on that path (a ``.pth``
file is only read in a site folder, not in a folder another ``.pth`` adds), so the code that
runs is the wheel's.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from published import row

import attnlab
from attnlab.text.fmt import compact_shape

pytestmark = [pytest.mark.release, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attnlab"
#: Folders of files the package reads at run time, other than its modules.
DATA_FOLDERS = ("web/templates", "web/static", "data")
#: The lesson's published numbers that ``attnlab --lang en lesson`` must print.
LESSON_ROWS = (
    "weights.A.final",
    "weights.B.final",
    "mask_demo.zero_fill",
    "cost.elements_long",
    "shapes.raw_scores",
)
#: Run inside the fresh environment: the installed web lesson serves a page, a static file, a
#: figure with Chinese labels (the CJK font comes from the mplfonts dependency) and its web fonts.
SERVE_PROBE = """
import sys
from fastapi.testclient import TestClient
from attnlab.web.app import create_app

client = TestClient(create_app(sys.argv[1]), base_url="http://127.0.0.1")
for url in ("/lesson?lang=en", "/glossary?lang=zh", "/static/style.css", "/figures/zh/mask.svg"):
    answer = client.get(url)
    print(url, answer.status_code, len(answer.content))
    assert answer.status_code == 200, (url, answer.status_code)
assert "<svg" in client.get("/figures/zh/mask.svg").text
from attnlab.web.fonts import FACES, url  # the served fonts are package data
for family in FACES:
    answer = client.get(url(family))
    assert answer.status_code == 200 and answer.content[:4] == b"wOF2", (family, answer.status_code)
"""


class Installed:
    """The wheel, the fresh environment it is installed in, and how to run commands there."""

    def __init__(self, wheel: Path, venv: Path, work: Path) -> None:
        self.wheel, self.venv, self.work = wheel, venv, work
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        self.env.update(
            PYTHONNOUSERSITE="1",
            PIP_NO_INDEX="1",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            ATTNLAB_DATA_DIR=str(work / "data"),
            ATTNLAB_CACHE_DIR=str(work / "cache"),
        )
        self.env.pop("ATTNLAB_LANG", None)

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.venv / "bin" / program), *args],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{program} {' '.join(args)}: {done.stderr[-2000:]}"
        return done


def _build_wheel(dest: Path, scratch: Path) -> Path:
    # Built from a copy, so the build leaves nothing (build/, *.egg-info) in the repository.
    source = scratch / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dest), "."]
    done = subprocess.run(build, cwd=source, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = dest.glob("attnlab-*.whl")
    return wheel


def _install(base: Path) -> None:
    """Build the wheel into ``base/dist`` and install it in the fresh ``base/venv``."""
    wheel = _build_wheel(base / "dist", base)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    env = Installed(wheel, venv, base)
    site = env.run("python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    here = sysconfig.get_paths()
    folders = dict.fromkeys([here["purelib"], here["platlib"]])  # this run's dependencies
    pth = Path(site.stdout.strip()) / "attnlab_test_dependencies.pth"
    pth.write_text("\n".join(folders) + "\n", encoding="utf-8")
    env.run("pip", "install", "--no-deps", str(wheel))


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """One wheel and one fresh environment for the whole run: the first xdist worker to get
    here builds them (under a lock in the folder the workers share), the other reuses them.
    Each worker runs its commands from an empty folder of its own."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "wheel"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (shared / "installed").exists():
            shutil.rmtree(shared, ignore_errors=True)  # a build that failed half-way
            shared.mkdir()
            _install(shared)
            (shared / "installed").touch()
    (wheel,) = (shared / "dist").glob("attnlab-*.whl")
    work = tmp_path_factory.mktemp("elsewhere")
    return Installed(wheel, shared / "venv", work)


def test_the_installed_package_is_the_wheel(installed: Installed) -> None:
    where = installed.run("python", "-c", "import attnlab; print(attnlab.__file__)").stdout
    assert Path(where.strip()).is_relative_to(installed.venv), where


def test_version(installed: Installed) -> None:
    out = installed.run("attnlab", "--version").stdout
    assert out == f"attnlab {attnlab.__version__}\n"
    assert installed.wheel.name.startswith(f"attnlab-{attnlab.__version__}-")


def test_lesson_prints_the_published_rows(installed: Installed) -> None:
    out = installed.run("attnlab", "--lang", "en", "lesson").stdout
    for key in LESSON_ROWS:
        shown = row(key).text
        if key.startswith("shapes."):  # the section's shape table writes [1,2,3,3]
            shown = compact_shape(row(key).value)
        assert shown in out, f"{key} ({shown}) missing from attnlab lesson"


def test_the_code_listing_runs(installed: Installed) -> None:
    listing = installed.run("attnlab", "--lang", "en", "code", "script").stdout
    (installed.work / "s.py").write_text(listing, encoding="utf-8")
    out = installed.run("python", "s.py").stdout
    assert f"Prompt A weights: {row('weights.A.final').text}" in out, out[-1000:]
    assert f"Prompt B weights: {row('weights.B.final').text}" in out, out[-1000:]


def test_the_wheel_holds_every_file_of_the_package(installed: Installed) -> None:
    # Modules and the data read at run time (templates, static files, the TOML data) alike.
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = {n for n in wheel.namelist() if n.startswith("attnlab/")}
    source = {
        f"attnlab/{p.relative_to(PACKAGE).as_posix()}"
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    assert in_wheel == source, (
        f"missing {sorted(source - in_wheel)}, extra {sorted(in_wheel - source)}"
    )
    for folder in DATA_FOLDERS:
        assert any(n.startswith(f"attnlab/{folder}/") for n in in_wheel), f"no files in {folder}"


def test_the_installed_web_lesson_serves_pages_files_and_figures(installed: Installed) -> None:
    out = installed.run("python", "-c", SERVE_PROBE, str(installed.work / "web-data")).stdout
    assert out.count(" 200 ") == 4, out

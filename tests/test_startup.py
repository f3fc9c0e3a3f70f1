"""What the lesson scripts and ``attnlab trace`` import, run as a learner runs them.

A plain walk imports torch but neither ``torch._dynamo`` nor sympy (about a second of start-up
on the meta device's kernels); a mistyped option, ``--help`` and ``attnlab --version`` are
answered before torch is imported. The report
comes from ``benchmarks/startup.py --check``'s wrapper; the timing itself stays in the benchmark.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

import attnlab
from attnlab.cli import main

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]


def _load_startup() -> ModuleType:
    spec = importlib.util.spec_from_file_location("startup", ROOT / "benchmarks" / "startup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


startup = _load_startup()


@pytest.mark.parametrize("name", ["walk", "walk-json", "grad", "trace"])
def test_a_walk_imports_neither_dynamo_nor_sympy(name: str) -> None:
    report = startup.probe(name)
    assert report["exit"] == 0, report
    assert report["torch"], f"{name} never imported torch: the wrapper did not run it"
    assert report["heavy"] == [], f"{name} imported {report['heavy']}"


@pytest.mark.parametrize("name", ["walk-bad-lang", "grad-bad-lang", "walk-help", "version"])
def test_options_are_handled_before_torch_is_imported(name: str) -> None:
    report = startup.probe(name)
    assert report["exit"] == startup.CHECKS[name].exit, report
    assert report["torch"] is False, f"{name} imported torch before handling its options"


def test_the_check_mode_fails_a_command_that_breaks_its_expectation() -> None:
    # A report that imported torch where torch is not allowed, or sympy anywhere, fails.
    assert not startup.passes("walk-bad-lang", {"exit": 2, "torch": True, "heavy": []})
    assert not startup.passes("walk", {"exit": 0, "torch": True, "heavy": ["sympy"]})
    assert not startup.passes("walk", {"exit": 1, "torch": True, "heavy": []})
    assert startup.passes("walk", {"exit": 0, "torch": True, "heavy": []})


def test_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(main.app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"attnlab {metadata.version('attnlab')}\n"


def test_version_falls_back_to_the_package_without_metadata(monkeypatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert main.version() == attnlab.__version__

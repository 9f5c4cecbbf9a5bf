"""The commands people type first stay light: no torch, SciPy, scikit-learn or transformers.

Timings live in ``benchmarks/startup.py``; this checks the cause of slow start-up, which is
a heavy import reached from task or model metadata.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "scipy", "sklearn", "transformers", "datasets", "pandas")

PROBE = """
import json, sys
from typer.testing import CliRunner
from audiobench.cli import app
result = CliRunner().invoke(app, {args!r})
assert result.exit_code == 0, result.output
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["list", "tasks"],
        ["list", "tasks", "--json"],
        ["list", "models"],
        ["list", "benchmarks"],
    ],
    ids=" ".join,
)
def test_listing_imports_no_heavy_library(args: list[str]) -> None:
    code = PROBE.format(args=args, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_task_and_model_metadata_read_without_heavy_imports() -> None:
    code = (
        "import json, sys\n"
        "from audiobench import registry\n"
        "tasks = registry.tasks.load_all()\n"
        "[t.metadata for t in tasks.values()]\n"
        "[m.meta for m in registry.models.load_all().values() if hasattr(m, 'meta')]\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("package", ["audiobench.metrics", "audiobench.vocsim"])
def test_no_lazy_metric_export_is_shadowed_by_a_submodule(package: str) -> None:
    """Importing ``audiobench.metrics.X`` binds X on the package, so an export named like a
    submodule would turn into that module once anything imported it."""
    import importlib
    import pkgutil

    metrics = importlib.import_module(package)

    submodules = {info.name for info in pkgutil.iter_modules(metrics.__path__)}
    assert not submodules & set(metrics._EXPORTS)
    for name, module in metrics._EXPORTS.items():
        assert module in submodules, name

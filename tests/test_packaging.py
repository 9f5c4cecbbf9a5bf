"""Guards on the package layout that a fresh install depends on."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_every_package_directory_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapping = config["package-dir"]
    found = set()
    for package, directory in mapping.items():
        for init in (ROOT / directory).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / directory)
            found.add(".".join([package, *rel.parts]) if rel.parts else package)
    # Sub-packages of mapped packages must be listed explicitly, or a regular
    # (non-editable) install silently leaves them out.
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_builtins_register_through_entry_points() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "SyntheticVocalisations" in project["entry-points"]["audiobench.tasks"]
    assert "log-mel" in project["entry-points"]["audiobench.models"]

"""Public names of a package imported on first use (PEP 562).

A package that re-exports many functions (``audiobench.metrics``, ``audiobench.vocsim``)
would otherwise import every submodule, and with them torch, SciPy and scikit-learn, as soon
as anything imports one light submodule (or lists tasks).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` for ``exports``.

    ``exports`` maps each public name to the submodule that defines it; a name is imported
    once, on first use, and then bound on the package.
    """
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__

"""Lazy package attributes: a package ``__init__`` that names its public objects without
importing the modules that define them (PEP 562).

    from hermes_memory_core.lazy import lazy_getattr

    __getattr__ = lazy_getattr(__name__, {"MyProvider": "my_memory.provider"})

The first ``my_memory.MyProvider`` imports ``my_memory.provider``; importing ``my_memory``
(what the plugin loader does for the entry-point module inside it) stays cheap.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving ``exports`` (name -> defining module) on first use.

    A resolved name is stored on the package, so later lookups are plain attribute reads;
    an unknown name raises ``AttributeError`` as usual.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

"""Regenerate docs/reference/hooks.md from the one contract: ``python docs/gen_hook_reference.py``.

The source is the `MemoryProvider` base class (its members and their docstrings) plus the
plugin registration hook in `hermes_memory_core._hookspecs`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_memory_core import MemoryProvider
from hermes_memory_core import _hookspecs as hookspecs
from hermes_memory_core.plugins import PROVIDER_HOOK_NAMES

#: Members every provider has that are not lifecycle hooks, documented first.
REQUIRED_MEMBERS: tuple[str, ...] = ("name", "is_available", "unavailable_reason")
#: Typed settings (declared with ``settings_class``), documented after the required members.
SETTINGS_MEMBERS: tuple[str, ...] = ("configure", "settings", "settings_error")

INTRO = """# Hook reference

The provider contract of hermes-memory, generated from the `MemoryProvider` base class
(`hermes_memory_core/_provider.py`) and the registration hook (`hermes_memory_core/_hookspecs.py`)
by `docs/gen_hook_reference.py`, and checked by `tests/core/test_core_docs.py` (a member
without a section here, or with a different signature, fails the test suite). Provider hooks
are plain methods of `MemoryProvider`: override the ones you need. Arguments are passed by
keyword where your signature accepts them, and an implementation may accept fewer arguments
than listed (never an argument the base method does not name).
"""


def contract() -> Iterator[tuple[str, str, Callable[..., Any]]]:
    """(section title, member name, function) for every documented member."""
    yield (
        "Registration hook",
        "register_memory_providers",
        (hookspecs.RegistrationSpec.register_memory_providers),
    )
    for name in (*REQUIRED_MEMBERS, *SETTINGS_MEMBERS, *PROVIDER_HOOK_NAMES):
        member = inspect.getattr_static(MemoryProvider, name)
        fn = member.fget if isinstance(member, property) else member
        assert callable(fn), name
        title = (
            "Provider members"
            if name in REQUIRED_MEMBERS
            else "Typed settings (`settings_class`)"
            if name in SETTINGS_MEMBERS
            else "Provider lifecycle hooks"
        )
        yield title, name, fn


def params(fn: Callable[..., Any]) -> list[str]:
    """The named parameters of ``fn`` (no ``self``, no ``*args``/``**kwargs``)."""
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self" and p.kind not in kinds
    ]


def render() -> str:
    """The whole reference page as Markdown."""
    parts = [INTRO]
    current = ""
    for title, name, fn in contract():
        if title != current:
            parts.append(f"## {title}\n")
            current = title
        doc = inspect.cleandoc(fn.__doc__ or "").replace("``", "`")
        parts.append(f"### {name}({', '.join(params(fn))})\n\n{doc}\n")
    return "\n".join(parts)


if __name__ == "__main__":
    target = Path(__file__).parent / "reference" / "hooks.md"
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")

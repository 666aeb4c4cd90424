"""Regenerate docs/reference/hooks.md from the hookspecs: ``python docs/gen_hook_reference.py``."""

from __future__ import annotations

import inspect
from pathlib import Path

from hermes_memory_core import hookspecs

INTRO = """# Hook reference

Every hook of hermes-memory, generated from `hermes_memory_core/hookspecs.py` by
`docs/gen_hook_reference.py` and checked by `tests/core/test_core_docs.py` (a hook without a
section here, or with a different signature, fails the test suite). Provider hooks are plain
methods of `MemoryProvider`: override the ones you need. Arguments are passed by keyword
where your signature accepts them, and an implementation may accept fewer arguments than
listed.
"""


def render() -> str:
    """The whole reference page as Markdown."""
    parts = [INTRO]
    groups = (
        ("Registration hook", hookspecs.RegistrationSpec),
        ("Provider lifecycle hooks", hookspecs.ProviderSpec),
    )
    for title, cls in groups:
        parts.append(f"## {title}\n")
        for name, fn in vars(cls).items():
            if name.startswith("_") or not callable(fn):
                continue
            params = ", ".join(p for p in inspect.signature(fn).parameters if p != "self")
            doc = inspect.cleandoc(fn.__doc__ or "").replace("``", "`")
            parts.append(f"### {name}({params})\n\n{doc}\n")
    return "\n".join(parts)


if __name__ == "__main__":
    target = Path(__file__).parent / "reference" / "hooks.md"
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")

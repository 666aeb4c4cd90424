"""Benign tuning text for the learned hold signal, from public sources with a permissive
licence (the weights derived from them ship in an MIT package).

Every source declares its licence in ``SOURCES``; `require_permissive` refuses a source whose
licence is not in ``PERMISSIVE``, and the installed-wheel reader omits every distribution whose
own metadata does not declare a permissive licence.

- ``chatterbot``: the ``chatterbot-corpus`` 1.3.3 wheel from PyPI (BSD-3-Clause; conversations
  in about twenty languages, Chinese included): every utterance and every conversation joined.
- ``stdlib``: docstrings of the CPython 3.11 standard library's own ``.py`` files (PSF-2.0):
  document-shaped English prose about software.
- ``emails``: the sample messages of CPython 3.11's ``Lib/test/test_email/data`` (PSF-2.0):
  a few headers and the plain-text body, real letters and notices of a mailing-list era.
- ``reference``: ``Lib/pydoc_data/topics.py`` of CPython 3.11 (PSF-2.0), the language
  reference and library manual topics (CPython's ``Doc/``) as plain text: long document prose
  with lists, grammar and tables, cut into blocks of about half an entry.
- ``wheels``: the long description (README) in the ``METADATA`` of installed distributions whose
  metadata declares MIT, BSD, Apache-2.0, ISC or PSF, cut into paragraphs of about one entry;
  distributions installed from a local tree (this project's own packages) are left out.

Refused: DailyDialog (CC BY-NC-SA 4.0, non-commercial) and KVRET (no licence stated), which
trained an earlier model.
"""

from __future__ import annotations

import ast
import email.parser
import random
import re
import zipfile
from pathlib import Path

ENTRY_CHARS = 2200

PERMISSIVE = frozenset({"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "PSF-2.0"})
SOURCES = {
    "chatterbot": ("chatterbot-corpus 1.3.3 (PyPI wheel)", "BSD-3-Clause"),
    "stdlib": ("CPython 3.11 standard library docstrings", "PSF-2.0"),
    "emails": ("CPython 3.11 Lib/test/test_email/data messages", "PSF-2.0"),
    "reference": ("CPython 3.11 Lib/pydoc_data/topics.py (the Doc/ manual)", "PSF-2.0"),
    "wheels": ("READMEs of installed MIT/BSD/Apache/ISC/PSF wheels", "per distribution"),
    "dailydialog": ("DailyDialog (Li et al. 2017)", "CC-BY-NC-SA-4.0"),
    "kvret": ("KVRET, Stanford in-car assistant dialogues", "unstated"),
}


class LicenceRefused(ValueError):
    """A tuning source whose licence would not let its derived weights ship under MIT."""


def require_permissive(source: str) -> None:
    """Raise `LicenceRefused` unless the source's licence is permissive."""
    title, licence = SOURCES[source]
    if licence != "per distribution" and licence not in PERMISSIVE:
        raise LicenceRefused(
            f"{title}: licence {licence} is not permissive; weights trained on it cannot "
            "ship in an MIT package"
        )


def _distinct(texts: list[str]) -> list[str]:
    return [t for t in dict.fromkeys(t.strip() for t in texts) if t]


def chatterbot(path: Path, limit: int, seed: int = 4) -> list[str]:
    """Utterances and whole conversations of the chatterbot-corpus wheel (or its unpacked
    tree), a fixed sample of ``limit``."""
    import yaml  # tools only: PyYAML is in the dev environment, not a package dependency

    require_permissive("chatterbot")
    files: list[tuple[str, str]] = []
    if path.is_file():
        with zipfile.ZipFile(path) as wheel:
            files = [
                (n, wheel.read(n).decode("utf-8")) for n in sorted(wheel.namelist())
                if n.endswith(".yml")
            ]  # fmt: skip
    else:
        files = [(str(p), p.read_text(encoding="utf-8")) for p in sorted(path.rglob("*.yml"))]
    out: list[str] = []
    for _, text in files:
        data = yaml.safe_load(text) or {}
        for conversation in data.get("conversations") or []:
            turns = [str(t).strip() for t in conversation if isinstance(t, str | int | float)]
            turns = [t for t in turns if t]
            out += turns
            if len(turns) > 1:
                out.append("\n".join(turns)[:ENTRY_CHARS])
    out = _distinct(out)
    random.Random(seed).shuffle(out)  # noqa: S311 - a reproducible sample, not a secret
    return out[:limit]


def stdlib(lib: Path, limit: int, seed: int = 3) -> list[str]:
    """Docstrings (at least eight words) of the standard library's top-level modules and
    packages, a fixed sample of ``limit``."""
    require_permissive("stdlib")
    out: list[str] = []
    skip = {"site-packages", "test", "idlelib", "lib2to3", "tkinter", "turtledemo"}
    for file in sorted(lib.rglob("*.py")):
        if skip & set(file.relative_to(lib).parts):
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc and len(doc.split()) >= 8:
                    out.append(doc[:ENTRY_CHARS])
    out = _distinct(out)
    random.Random(seed).shuffle(out)  # noqa: S311 - a reproducible sample, not a secret
    return out[:limit]


def emails(lib: Path) -> list[str]:
    """The messages of ``Lib/test/test_email/data`` as a reader sees them: From, To, Subject
    and Date, then each plain-text part (at least eight words), cut to one entry."""
    import email
    import email.policy

    require_permissive("emails")
    out: list[str] = []
    for file in sorted((lib / "test" / "test_email" / "data").glob("msg_*.txt")):
        message = email.message_from_bytes(file.read_bytes(), policy=email.policy.compat32)
        head = "\n".join(
            f"{name}: {message[name]}"
            for name in ("From", "To", "Subject", "Date")
            if message[name]
        )
        parts = []
        for part in message.walk():
            if part.get_content_type() == "text/plain" and not part.is_multipart():
                body = part.get_payload(decode=True)
                if isinstance(body, bytes):
                    parts.append(body.decode("utf-8", "replace").strip())
        body = "\n\n".join(p for p in parts if p)
        if len(body.split()) >= 8:
            out.append(f"{head}\n\n{body}"[:ENTRY_CHARS])
    return _distinct(out)


def _blocks(text: str, size: int) -> list[str]:
    """Consecutive paragraphs of ``text`` joined up to about ``size`` characters."""
    out: list[str] = []
    block = ""
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        if block and len(block) + len(para) > size:
            out.append(block)
            block = ""
        block = f"{block}\n\n{para}" if block else para[:ENTRY_CHARS]
    if block:
        out.append(block)
    return out


def reference(lib: Path, limit: int, seed: int = 6) -> list[str]:
    """Blocks of CPython's manual topics (``pydoc_data/topics.py``, read with ``ast``, never
    imported), a fixed sample of ``limit``."""
    require_permissive("reference")
    tree = ast.parse((lib / "pydoc_data" / "topics.py").read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out += _blocks(value.value, ENTRY_CHARS // 2)
    out = [t for t in _distinct(out) if len(t.split()) >= 8]
    random.Random(seed).shuffle(out)  # noqa: S311 - a reproducible sample, not a secret
    return out[:limit]


_LICENCE_NAMES = (
    ("apache", "Apache-2.0"),
    ("bsd", "BSD-3-Clause"),
    ("mit", "MIT"),
    ("isc", "ISC"),
    ("python software foundation", "PSF-2.0"),
    ("psf", "PSF-2.0"),
)
_COPYLEFT = re.compile(r"\b(?:a?gpl|lgpl|mpl|eupl|cc[- ]by|proprietary|commercial)", re.I)


def wheel_licence(meta: email.message.Message) -> str | None:
    """The permissive licence a distribution's metadata declares, or None (omitted)."""
    declared = [
        str(meta.get("License-Expression") or ""),
        *[str(c) for c in meta.get_all("Classifier") or [] if str(c).startswith("License ::")],
    ]
    licence = str(meta.get("License") or "")
    if len(licence) < 60:  # a name, not a whole licence text pasted in
        declared.append(licence)
    text = " ".join(d for d in declared if d)
    if not text or _COPYLEFT.search(text) or " or " in text.lower() or " and " in text.lower():
        return None
    for word, name in _LICENCE_NAMES:
        if re.search(rf"\b{word}\b", text, re.I):
            return name
    return None


def wheels(site_packages: Path, limit: int, seed: int = 5) -> tuple[list[str], dict[str, str]]:
    """Paragraph blocks of the long descriptions of permissively licensed installed
    distributions, a fixed sample of ``limit``; with the licence of every distribution read."""
    out: list[str] = []
    used: dict[str, str] = {}
    parser = email.parser.Parser()
    for meta_file in sorted(site_packages.glob("*.dist-info/METADATA")):
        meta = parser.parsestr(meta_file.read_text(encoding="utf-8", errors="replace"))
        licence = wheel_licence(meta)
        body = meta.get_payload()
        if licence is None or licence not in PERMISSIVE or not isinstance(body, str):
            continue
        if (meta_file.parent / "direct_url.json").exists():
            continue  # installed from a local tree (this project's own packages): not public
        used[f"{meta.get('Name')} {meta.get('Version')}"] = licence
        block = ""
        for para in re.split(r"\n\s*\n", body):
            para = para.strip()
            if not para or para.startswith(("```", "    ", ">>>", "|", "..", "<")):
                continue  # code, tables, directives and markup: not prose
            if len(block) + len(para) > ENTRY_CHARS // 2 and block:
                out.append(block)
                block = ""
            block = f"{block}\n\n{para}" if block else para
        if block:
            out.append(block)
    out = [t for t in _distinct(out) if len(t.split()) >= 8]
    random.Random(seed).shuffle(out)  # noqa: S311 - a reproducible sample, not a secret
    return out[:limit], used

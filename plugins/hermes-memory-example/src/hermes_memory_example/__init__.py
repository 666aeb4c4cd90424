"""A tiny reference memory provider: keyword-matched notes in one JSON file.

It exists to show the smallest complete provider (the docs tutorial walks through it) and to
exercise the plugin machinery in tests. It is not meant for real use.
"""

from hermes_memory_example.provider import NotesProvider

__all__ = ["NotesProvider"]

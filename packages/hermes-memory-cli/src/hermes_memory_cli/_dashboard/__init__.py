"""The local web dashboard behind ``hermes-memory dashboard`` (private modules only).

Imported by that command alone: nothing else in the CLI or the library imports it, so the
web stack (Starlette, uvicorn, Jinja2) costs nothing to the other commands. Install it with
the ``hermes-memory-cli[dashboard]`` extra.
"""

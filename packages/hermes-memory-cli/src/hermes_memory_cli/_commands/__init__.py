"""Handlers of the ``hermes-memory`` commands, one module per command group.

Each handler takes a `hermes_memory_cli._context.Context` and returns the exit status.
"""

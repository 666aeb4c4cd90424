"""The dashboard's login token: the MCP HTTP transport's token code, another file.

`hermes_memory_mcp_server` already generates tokens (``secrets.token_urlsafe(32)``,
``O_EXCL``, mode 0600 in a 0700 directory) and reads them back only from private files; the
dashboard keeps its own token in ``<home>/dashboard/token`` with the same code, so a leaked
dashboard link does not open the MCP server and the other way round.
"""

from __future__ import annotations

from pathlib import Path

from hermes_memory_cli._context import CLIError, Context

__all__ = ["token_for"]


def token_for(ctx: Context, state_dir: Path, *, create: bool) -> str:
    """The token (``--token-file``, else ``<home>/dashboard/token``, made when ``create``).

    :raises CLIError: the file is unsafe or unreadable, or missing and not to be created.
    """
    try:
        from hermes_memory_mcp_server import TokenError, load_or_create_token, read_token_file
    except ImportError:
        raise CLIError("the dashboard's token needs hermes-memory-mcp-server") from None
    from hermes_memory_cli._dashboard._state import TOKEN_FILE

    given = getattr(ctx.args, "token_file", None)
    try:
        if given:
            return read_token_file(given)
        path = state_dir / TOKEN_FILE
        if not create:
            return read_token_file(path)
        return load_or_create_token(ctx.home, path=path).value
    except TokenError as exc:
        raise CLIError(str(exc)) from None

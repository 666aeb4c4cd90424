"""The Starlette application: routes, the request frame, and the shared archive handle.

Every page is a plain function run in a worker thread (the stores block); it gets a
`Dashboard` and the request's query or form, and returns a template with its values, or a
redirect with flash messages (post/redirect/get, so reloading never repeats a change).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._dashboard._frame import Dashboard, Page, Redirect
from hermes_memory_cli._dashboard._security import CSP, Guard, Keys, check_csrf
from hermes_memory_cli._dashboard._web import HERE, N_, FlashBox, Problem, Renderer

__all__ = ["build_app"]

logger = logging.getLogger(__name__)
UNEXPECTED = N_("Something went wrong: %(detail)s")


Handler = Callable[..., Page | Redirect | Response]


def build_app(ctx: Context, *, token: str, host: str, port: int) -> Any:
    """The ASGI application, wrapped in the security `Guard`."""
    from hermes_memory_cli._dashboard import _memory, _sessions, _system

    keys = Keys(token, port)
    renderer = Renderer(csrf=keys.csrf, port=port)
    dash = Dashboard(ctx)

    def page(handler: Handler) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            return await _respond(request, handler, None)

        return endpoint

    def action(handler: Handler) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            form = await request.form()
            if not check_csrf(keys, form):
                return _refusal_response(request, 403, "csrf")
            data = {k: v for k, v in form.items() if isinstance(v, str)}
            return await _respond(request, handler, data)

        return endpoint

    async def _respond(request: Request, handler: Handler, form: dict[str, str] | None) -> Response:
        args = (dash, request.query_params, request.path_params)
        try:
            if form is None:
                result = await run_in_threadpool(handler, *args)
            else:
                result = await run_in_threadpool(handler, *args, form)
        except Problem as exc:
            result = Page("error.html", {"problem": exc}, status=exc.status)
        except CLIError as exc:  # the CLI's own one-line reasons (English)
            result = Page("error.html", {"message": str(exc)}, status=400)
        except Exception as exc:  # never a traceback in the browser; the log has it
            logger.exception("dashboard: %s %s failed", request.method, request.url.path)
            detail = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            result = Page("error.html", {"problem": Problem(UNEXPECTED, detail=detail)}, status=500)
        if isinstance(result, Response):
            return _secure(result)
        if isinstance(result, Redirect):
            response = RedirectResponse(result.to, status_code=303)
            if result.flashes:
                key = renderer.flashes.put(result.flashes)
                response.set_cookie(FlashBox.COOKIE, key, httponly=True, samesite="strict")
            return _secure(response)
        return _secure(
            renderer.render(request, result.template, status=result.status, **result.values)
        )

    def _refusal_response(request: Request, status: int, reason: str) -> Response:
        body, kind = refuse(request.scope, status, reason)
        return _secure(Response(body, status_code=status, media_type=kind.split(";")[0]))

    def refuse(scope: Any, status: int, reason: str) -> tuple[str, str]:
        from starlette.requests import Request as _Req

        from hermes_memory_cli._dashboard._web import language_of

        code, _chosen = language_of(_Req(scope))
        body = renderer.render_text(code, "refused.html", status=status, reason=reason)
        return body, "text/html; charset=utf-8"

    async def healthz(request: Request) -> Response:
        return JSONResponse({"app": "hermes-memory-dashboard", "pid": os.getpid()})

    async def root(request: Request) -> Response:
        return _secure(RedirectResponse("/memory", status_code=303))

    routes = [
        Route("/", root),
        Route("/healthz", healthz),
        Route("/memory", page(_memory.memory_page)),
        Route("/memory/add", action(_memory.add), methods=["POST"]),
        Route("/memory/edit", action(_memory.edit), methods=["POST"]),
        Route("/memory/remove", action(_memory.remove), methods=["POST"]),
        Route("/pending", page(_memory.pending_page)),
        Route("/pending/approve", action(_memory.approve), methods=["POST"]),
        Route("/pending/reject", action(_memory.reject), methods=["POST"]),
        Route("/sessions", page(_sessions.sessions_page)),
        Route("/sessions/{session_id:str}", page(_sessions.session_page)),
        Route("/sessions/{session_id:str}/export", page(_sessions.export)),
        Route("/sessions/{session_id:str}/rename", action(_sessions.rename), methods=["POST"]),
        Route("/sessions/{session_id:str}/delete", action(_sessions.delete), methods=["POST"]),
        Route("/providers", page(_system.providers_page)),
        Route("/providers/use", action(_system.choose_provider), methods=["POST"]),
        Route("/archive", page(_system.archive_page)),
        Route("/archive/progress", page(_system.progress)),
        Route("/archive/embed", action(_system.embed), methods=["POST"]),
        Route("/archive/import", action(_system.import_hermes), methods=["POST"]),
        Route("/settings", page(_system.settings_page)),
        Route("/settings", action(_system.save_settings), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        try:
            yield
        finally:
            await run_in_threadpool(dash.close)

    app = Starlette(routes=routes, lifespan=lifespan)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _secure(
            renderer.render(
                request, "error.html", status=404, message=None, not_found=request.url.path
            )
        )

    app.add_exception_handler(404, not_found)
    return Guard(app, keys=keys, host=host, port=port, refuse=refuse)


def _secure(response: Response) -> Response:
    """Headers every answer carries: no caching, no framing, no referrer to other sites, no
    remote assets."""
    response.headers.setdefault("cache-control", "no-store")
    response.headers["content-security-policy"] = CSP
    response.headers["x-frame-options"] = "DENY"
    response.headers["x-content-type-options"] = "nosniff"
    response.headers["referrer-policy"] = "same-origin"
    return response

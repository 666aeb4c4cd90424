"""The Honcho SDK behind the kit's `Guard`: one client, peers and sessions created once.

Every SDK call goes through `HonchoClient.call` (breaker, failure taxonomy, health record).
The SDK is imported and its client built on first use, on a background thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import httpx

from hermes_memory_core.kit import CallFailed, Failure, FailureKind, Guard
from hermes_memory_honcho._config import HonchoConfig
from hermes_memory_honcho._transport import build_http_client

__all__ = ["HonchoClient"]

T = TypeVar("T")


class HonchoClient:
    """Peers ``user_id`` and ``ai_id`` and their sessions in one workspace.

    :param transport: replaces the network under the shared ``httpx`` client (tests).
    """

    def __init__(
        self,
        cfg: HonchoConfig,
        guard: Guard,
        *,
        user_id: str,
        ai_id: str,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.cfg = cfg
        self.guard = guard
        self.user_id = user_id
        self.ai_id = ai_id
        self._transport = transport
        self._lock = threading.Lock()
        self._setup_lock = threading.Lock()
        self._http: httpx.Client | None = None
        self._honcho: Any = None
        self.peers: dict[str, Any] = {}
        self._sessions: dict[str, Any] = {}

    def call(self, operation: str, fn: Callable[[], T]) -> T:
        """One guarded SDK call (`Unavailable` / `CallFailed` on trouble)."""
        return self.guard.call(operation, fn)

    def sdk(self) -> Any:
        """The Honcho client, built on first use (imports the SDK, loads TLS certificates)."""
        with self._lock:
            if self._honcho is None:
                try:
                    self._http = build_http_client(self.cfg, transport=self._transport)
                    self._honcho = self._build(self._http)
                except Exception as exc:
                    failure = Failure(FailureKind.OTHER, f"cannot build the Honcho client: {exc}")
                    self.guard.record_failure(failure, operation="client setup")
                    raise CallFailed(failure) from exc
            return self._honcho

    def _build(self, client: httpx.Client) -> Any:
        from honcho import Honcho  # type: ignore[import-untyped]

        from hermes_memory_honcho import __version__

        cfg = self.cfg
        return Honcho(
            api_key=cfg.api_key or None,
            base_url=cfg.resolved_base_url,
            workspace_id=cfg.workspace,
            timeout=cfg.timeout,
            max_retries=cfg.max_retries,
            http_client=client,
            default_headers={"X-Honcho-Host": f"hermes-memory-honcho/{__version__}"},
        )

    def peer(self, peer_id: str) -> Any:
        """Peer ``peer_id`` (not cached: tools may name any peer).

        The SDK answers this from its own state once the workspace exists, so a success
        says nothing about the server now: only failures count (a hung server is never
        marked healthy by it).
        """
        honcho = self.sdk()
        return self.guard.call(
            "peer get-or-create", partial(honcho.peer, peer_id), informative=False
        )

    def ensure_peers(self) -> tuple[Any, Any, Any]:
        """Get-or-create both peers (once each): (Honcho client, user peer, AI peer)."""
        with self._setup_lock:
            return self._peers()

    def _peers(self) -> tuple[Any, Any, Any]:
        honcho = self.sdk()
        for peer_id in (self.user_id, self.ai_id):
            if peer_id not in self.peers:
                self.peers[peer_id] = self.peer(peer_id)
        return honcho, self.peers[self.user_id], self.peers[self.ai_id]

    def ensure(self, key: str) -> tuple[Any, Any, Any]:
        """Get-or-create both peers and session ``key`` (once each): (session, user, ai)."""
        with self._setup_lock:
            honcho, user, ai = self._peers()
            if key not in self._sessions:
                from honcho.api_types import SessionPeerConfig  # type: ignore[import-untyped]

                conf = SessionPeerConfig(
                    observe_me=self.cfg.observe_me, observe_others=self.cfg.observe_others
                )
                session = self.guard.call(
                    "session get-or-create", lambda: honcho.session(key), informative=False
                )
                self.call(
                    "session.add_peers", partial(session.add_peers, [(user, conf), (ai, conf)])
                )
                self._sessions[key] = session
            return self._sessions[key], user, ai

    def warm(self, key: str) -> None:
        """`ensure` in the background: a failure is already counted and reported."""
        try:
            self.ensure(key)
        except Exception:
            logging.getLogger("hermes_memory_honcho").debug("Honcho setup failed", exc_info=True)

    def close(self, *, idle: Callable[[], bool]) -> None:
        """Close the HTTP client now if ``idle()``, else once it is (bounded by timeouts)."""
        client = self._http
        if client is None:
            return
        if idle():
            client.close()
            return
        cfg = self.cfg
        deadline = time.monotonic() + cfg.timeout * (cfg.max_retries + 1) * 3 + 5

        def later() -> None:
            while time.monotonic() < deadline and not idle():
                time.sleep(0.05)
            client.close()

        threading.Thread(target=later, name="honcho-close", daemon=True).start()

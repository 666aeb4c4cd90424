"""``hermes-memory sessions embed``: backfill the vector index, tier by tier.

With a fast tier (``sessions.fast_embedder``, ``static`` by default) the fast model embeds
every pending message first (minutes for a large archive: hybrid recall everywhere), then
the quality model embeds newest first (``--limit`` bounds its share only); each tier
reports its throughput and coverage, and
what the quality tier has left is given with an estimate of the time it needs.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_memory_cli._commands.sessions import _drop_vectors
from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._i18n import cli_gettext as _

__all__ = ["embed", "eta_text"]


def eta_text(seconds: float) -> str:
    """``"3 h 20 min"``, ``"12 min"``, ``"40 s"``: a duration to read at a glance."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def _build(ctx: Context) -> tuple[Any, Any, str]:
    """``(quality, fast, note)``: the embedders to run (either may be None) and a note
    when the quality model cannot run here and the fast one stands in for it."""
    from hermes_memory_core.config import ConfigError
    from hermes_memory_sessions.vectors import (
        build_embedder,
        build_fast_embedder,
        configured_embedder_section,
        configured_fast_section,
    )

    section = configured_embedder_section(ctx.config)
    if section is None and not ctx.args.reset:
        raise CLIError(
            _(
                "no embedder configured: set sessions.embedder in config.yaml (e.g. 'embedder:"
                " default'; see docs/how-to/embeddings.md)"
            )
        )
    fast_section = configured_fast_section(ctx.config)
    fast = build_fast_embedder(fast_section, section or {}) if fast_section else None
    try:
        quality = build_embedder(section, strict=True)
    except ConfigError as exc:
        if fast is None:
            raise CLIError(str(exc)) from None
        note = _("{error}; only the fast tier ({model}) is embedded").format(
            error=exc, model=fast.name
        )
        return fast, None, note
    return quality, fast, ""


def embed(ctx: Context) -> int:
    """``sessions embed [--limit N] [--batch-size N] [--reset]``: backfill the vector index."""
    limit = ctx.args.limit
    if limit is not None and limit < 0:
        raise CLIError(_("--limit must be 0 or more"))
    batch = int(ctx.args.batch_size)
    if not 1 <= batch <= 4096:
        raise CLIError(_("--batch-size must be between 1 and 4096"))
    embedder, fast, note = _build(ctx)
    if note:
        ctx.note(note)
    with ctx.session_store(create=False) as opened:
        store: Any = opened  # the archives' vector methods are not in the protocol
        if store is None:
            raise CLIError(
                _("no session archive yet ({path} does not exist)").format(path=ctx.db_path)
            )
        if not hasattr(store, "_attach_embedder"):
            raise CLIError(_("vectors are kept by the SQLite archive only (sessions.backend)"))
        if getattr(store, "read_only", False):
            raise CLIError(
                _("the archive {path} is read-only: nothing can be embedded").format(
                    path=ctx.db_path
                )
            )
        dropped = 0
        if ctx.args.reset:
            dropped = _drop_vectors(store)
            if embedder is None:
                if ctx.json:
                    ctx.emit_json({"dropped": dropped, "embedded": 0})
                else:
                    ctx.say(
                        _("Dropped {n} stored vectors; search is lexical.").format(n=f"{dropped:,}")
                    )
                return 0
        if fast is None:
            store._attach_embedder(embedder, background=False)
        else:
            store._attach_embedder(embedder, background=False, fast=fast)
        index = store.vector_index
        tiers = list(getattr(index, "tiers", ()))[::-1] or [index]  # the fast tier first
        started = time.monotonic()
        # --limit bounds the quality model's work; the fast tier always does everything.
        runs = [
            _run_tier(ctx, store, tier, None if tier is not tiers[-1] else limit, batch)
            for tier in tiers
        ]
        after = store.vector_coverage()
    seconds = time.monotonic() - started
    _report(ctx, after, runs, dropped, seconds, note)
    return 0


def _run_tier(ctx: Context, store: Any, tier: Any, limit: int | None, batch: int) -> dict[str, Any]:
    """Embed one tier's pending messages with a progress bar; ``{"model", "embedded",
    "seconds"}``. Raises `CLIError` on an interruption or an embedder failure (what was
    embedded is kept)."""
    fast = getattr(tier, "above", None) is not None
    cov = store.vector_coverage()
    searched = {t["tier"]: int(t["searched"]) for t in cov.get("tiers") or []}
    have = searched.get("fast" if fast else "quality", int(cov.get("embedded") or 0))
    todo = max(0, int(cov.get("total") or 0) - have)
    if limit is not None:
        todo = min(todo, limit)
    done = 0
    started = time.monotonic()
    label = (
        _("Embedding with {model} (fast tier)") if fast else _("Embedding with {model}")
    ).format(model=tier.model)
    try:
        with ctx.progress(label, rate_unit=_("messages")) as progress:
            progress(0, todo)

            def step(n: int) -> None:
                nonlocal done
                done += n
                progress(done, todo)

            tier.embed_pending(limit, batch_size=max(batch, 256) if fast else batch, progress=step)
    except KeyboardInterrupt:
        raise CLIError(
            _("interrupted after {n} messages (kept); run it again to resume").format(n=f"{done:,}")
        ) from None
    except Exception as exc:  # the embedder failed: what was embedded is kept
        raise CLIError(
            _("embedding stopped after {n} messages ({error}); run it again to resume").format(
                n=f"{done:,}", error=exc
            )
        ) from None
    return {
        "tier": "fast" if fast else "quality",
        "model": tier.model,
        "embedded": done,
        "seconds": round(time.monotonic() - started, 3),
    }


def _report(
    ctx: Context,
    after: dict[str, Any],
    runs: list[dict[str, Any]],
    dropped: int,
    seconds: float,
    note: str,
) -> None:
    total = int(after["total"])
    covered = {t["tier"]: t for t in after.get("tiers") or []}
    for run in runs:
        run["rate"] = round(run["embedded"] / run["seconds"], 1) if run["seconds"] > 0 else None
        searched = int(covered.get(run["tier"], {}).get("searched", after["embedded"]))
        left = max(0, total - searched)
        run["coverage"] = {"searched": searched, "total": total, "left": left}
        run["eta_seconds"] = (
            round(left / run["rate"], 1) if left and run["rate"] else (0.0 if not left else None)
        )
    main = runs[-1]  # the quality tier (or the only one)
    if ctx.json:
        payload: dict[str, Any] = {
            "embedded": main["embedded"],
            "dropped": dropped,
            "seconds": round(seconds, 3),
            "model": after["model"],
            "coverage": {"embedded": after["embedded"], "total": total},
        }
        if len(runs) > 1 or note:
            payload["tiers"] = runs[::-1]  # best first, as in the coverage
        if note:
            payload["note"] = note
        ctx.emit_json(payload)
        return
    if dropped:
        ctx.say(_("Dropped {n} stored vectors.").format(n=f"{dropped:,}"))
    for run in runs[:-1]:  # the fast tier
        rate = f" ({run['rate']:.1f}/s)" if run["embedded"] and run["rate"] else ""
        ctx.say(
            _(
                "Fast tier: embedded {n} messages{rate} with {model}; hybrid recall covers"
                " {searched} / {total}."
            ).format(
                n=f"{run['embedded']:,}",
                rate=rate,
                model=run["model"],
                searched=f"{run['coverage']['searched']:,}",
                total=f"{total:,}",
            )
        )
    rate = f" ({main['rate']:.1f}/s)" if main["embedded"] and main["rate"] else ""
    ctx.say(
        _("Embedded {n} messages{rate} with {model}; coverage {embedded} / {total}.").format(
            n=f"{main['embedded']:,}",
            rate=rate,
            model=after["model"],
            embedded=f"{after['embedded']:,}",
            total=f"{total:,}",
        )
    )
    left = main["coverage"]["left"]
    if left and len(runs) > 1:
        eta = main["eta_seconds"]
        ctx.say(
            _(
                "{left} messages still wait for {model} (the fast tier covers them meanwhile);"
                " {eta} run it again to continue."
            ).format(
                left=f"{left:,}",
                model=after["model"],
                eta=_("about {time} at this rate;").format(time=eta_text(eta)) if eta else "",
            )
        )

"""The parts of `hermes_memory_postgres._sessions.PostgresSessionArchive`, one job each.

* `core`: the pool, bounded retries, the local spool and exactly-once replay;
* `titles`: titles and lineage (numbered continuations, compression heirs, roots, tips);
* `writes`: the agent's turn writes (sessions, appends, ends, deletes, pruning);
* `ingest`: imports (one session, bulk ``COPY``, several bulk batches in flight on separate
  connections, `bulk_loading` into an empty database, incremental import bookkeeping);
* `termstats`: each owner's document frequency per word (``hm_term_df``), kept by every
  insert and delete;
* `reads`: sessions and messages (listing, scrolling, anchored views, statistics);
* `search`: discovery (implicit AND, CJK, snippets, context), `natural`: the
  natural-language fallback's ranking; `filters` and `rows`: what they share.
"""

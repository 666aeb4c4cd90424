"""The rooms of `hermes_memory_postgres.PostgresSessionArchive`, one job each (internal: the
package root is the public surface).

* `_core`: the pool, bounded retries, the local spool and exactly-once replay;
* `_titles`: titles and lineage (numbered continuations, compression heirs, roots, tips);
* `_writes`: the agent's turn writes (sessions, appends, ends, deletes, pruning);
* `_ingest`: imports (one session, bulk ``COPY``, several bulk batches in flight on separate
  connections, `bulk_loading` into an empty database, incremental import bookkeeping);
* `_termstats`: each owner's document frequency per word (``hm_term_df``), kept by every
  insert and delete;
* `_reads`: sessions and messages (listing, scrolling, anchored views, statistics);
* `_search`: discovery (implicit AND, CJK, snippets, context), `_natural`: the
  natural-language fallback's ranking; `_filters` and `_rows`: what they share.
"""

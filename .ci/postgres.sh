# Sourced by .ci/run: start Debian's PostgreSQL, create the test role and database, and export
# the DSN the PostgreSQL tests use (tests/postgres, tests/backends). The test database is
# dropped and created anew each time.
# Locally: `source .ci/postgres.sh` as root (or run the same steps by hand; see CONTRIBUTING.md).
if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
_hm_pg_version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
if ! pg_lsclusters -h | awk -v v="$_hm_pg_version" '$1 == v && $2 == "main"' | grep -q .; then
    pg_createcluster "$_hm_pg_version" main >/dev/null
fi
pg_ctlcluster "$_hm_pg_version" main start >/dev/null 2>&1 || true
for _ in $(seq 1 30); do
    su postgres -c "psql -qtAc 'SELECT 1'" >/dev/null 2>&1 && break
    sleep 1
done
su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname = 'hermes_test'\"" | grep -q 1 \
    || su postgres -c "psql -qc \"CREATE ROLE hermes_test LOGIN PASSWORD 'hermes_test' CREATEDB\""
# A new, empty database every run: what an earlier run (or another release's schema) left
# behind must not decide this one.
su postgres -c "psql -qc 'DROP DATABASE IF EXISTS hermes_test WITH (FORCE)'" >/dev/null
su postgres -c "psql -qc 'CREATE DATABASE hermes_test OWNER hermes_test'" >/dev/null
export HERMES_MEMORY_TEST_PG_DSN="postgresql://hermes_test:hermes_test@127.0.0.1:5432/hermes_test"
# The fault tests restart this server in the middle of a run of turns.
export HERMES_MEMORY_TEST_PG_RESTART="pg_ctlcluster $_hm_pg_version main restart"
unset _hm_pg_version

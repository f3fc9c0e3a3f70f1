#!/usr/bin/env bash
# Start Debian's PostgreSQL cluster (creating it when missing) and a role and database the store
# tests may create schemas in; print their libpq URL. Safe to run again: what exists is kept.
set -euo pipefail
# Only the URL goes to standard output (the caller captures it); everything the tools print
# (pg_ctlcluster's "Removed stale pid file.", for one) goes to standard error.

role=attnlab_test
password=attnlab_test  # a throwaway local test role, reachable only on this machine
version="$(ls /usr/lib/postgresql | sort -n | tail -1)"

{
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {found = 1} END {exit !found}'; then
  pg_createcluster "$version" main >/dev/null
fi
port="$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')"
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" && $4 == "online" {ok = 1} END {exit !ok}'; then
  # A server that was killed (a machine image saved while it ran) leaves its socket lock behind;
  # pg_ctlcluster removes a stale pid file itself, not this lock.
  lock="/var/run/postgresql/.s.PGSQL.$port.lock"
  if [ -f "$lock" ] && ! kill -0 "$(head -n1 "$lock")" 2>/dev/null; then
    rm -f "$lock" "/var/run/postgresql/.s.PGSQL.$port"
  fi
  pg_ctlcluster "$version" main start
fi
for _ in $(seq 100); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.2
done

as_postgres() { su postgres -c "psql -p $port -qtAX -v ON_ERROR_STOP=1 $*"; }
if [ "$(as_postgres "-c \"SELECT 1 FROM pg_roles WHERE rolname = '$role'\"")" != 1 ]; then
  as_postgres "-c \"CREATE ROLE $role LOGIN PASSWORD '$password'\""
fi
if [ "$(as_postgres "-c \"SELECT 1 FROM pg_database WHERE datname = '$role'\"")" != 1 ]; then
  as_postgres "-c \"CREATE DATABASE $role OWNER $role\""
fi
} >&2
echo "postgresql://$role:$password@127.0.0.1:$port/$role"

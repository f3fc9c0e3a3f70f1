#!/usr/bin/env bash
# Start Debian's PostgreSQL cluster (creating it when missing) and a role and database the store
# tests may create schemas in; print their libpq URL. Safe to run again: what exists is kept.
set -euo pipefail

role=attnlab_test
password=attnlab_test  # a throwaway local test role, reachable only on this machine
version="$(ls /usr/lib/postgresql | sort -n | tail -1)"

if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {found = 1} END {exit !found}'; then
  pg_createcluster "$version" main >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" && $4 == "online" {ok = 1} END {exit !ok}'; then
  pg_ctlcluster "$version" main start
fi
port="$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')"
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
echo "postgresql://$role:$password@127.0.0.1:$port/$role"

#!/usr/bin/env bash
# Prints a DATABASE_URL for local development: the one set in the environment, else the local
# server on 127.0.0.1:5432 when it answers, else a private cluster under ./.data/pg started from
# the local PostgreSQL binaries (initdb once, then pg_ctl on a free port).
# SDODS_PRIVATE_PG=1 forces the private cluster.
set -euo pipefail

if [ -n "${DATABASE_URL:-}" ]; then echo "$DATABASE_URL"; exit 0; fi

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [ "${SDODS_PRIVATE_PG:-0}" != 1 ] && answers 5432; then
  echo "postgres://postgres@127.0.0.1:5432/sdods?sslmode=disable"; exit 0
fi

bindir=""
if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then bindir=$(pg_config --bindir); fi
if [ -z "$bindir" ]; then
  bindir=$(ls -d /usr/lib/postgresql/*/bin /usr/local/opt/postgresql*/bin /opt/homebrew/opt/postgresql*/bin 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "devdb: no PostgreSQL answers on 127.0.0.1:5432 and no initdb was found; install PostgreSQL or set DATABASE_URL" >&2
  exit 1
fi

data="$PWD/.data/pg"
mkdir -p "$PWD/.data"
# initdb and postgres refuse to run as root: run them as the postgres user then.
as_owner=()
if [ "$(id -u)" = 0 ]; then
  as_owner=(runuser -u postgres --)
  chmod o+x "$PWD/.data"
fi

if [ ! -f "$data/PG_VERSION" ]; then
  mkdir -p "$data"
  [ ${#as_owner[@]} -gt 0 ] && chown postgres "$data"
  "${as_owner[@]}" "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >"$PWD/.data/initdb.log" 2>&1 \
    || { echo "devdb: initdb failed, see .data/initdb.log" >&2; exit 1; }
fi

port=""
if [ -f "$PWD/.data/pg.port" ] && "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  port=$(cat "$PWD/.data/pg.port")
else
  for p in $(seq 54320 54399); do
    if ! answers "$p"; then port=$p; break; fi
  done
  [ -n "$port" ] || { echo "devdb: no free port in 54320-54399" >&2; exit 1; }
  "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $data" start >/dev/null \
    || { echo "devdb: pg_ctl start failed, see .data/pg/server.log" >&2; exit 1; }
  echo "$port" >"$PWD/.data/pg.port"
fi
echo "postgres://postgres@127.0.0.1:$port/sdods?sslmode=disable"

#!/usr/bin/env bash
# Prints the database URL on stdout; everything else goes to stderr.
#
# Idempotently prepares a local PostgreSQL 15 + pgvector 0.8 cluster for toolgate on
# Debian bookworm, run as root. Every step is skipped when it is already done, so the
# README's run command, its test command and CI can all call this script.
#
# Environment:
#   TOOLGATE_PG_PORT  port of the project's own cluster (default 55432)
#   TOOLGATE_PG_DATA  data directory (default /var/lib/toolgate/pg15)
#   TOOLGATE_PG_DB    database to create (default toolgate)
set -euo pipefail

PORT=${TOOLGATE_PG_PORT:-55432}
DATA=${TOOLGATE_PG_DATA:-/var/lib/toolgate/pg15}
DB=${TOOLGATE_PG_DB:-toolgate}
PGBIN=/usr/lib/postgresql/15/bin
APT=(apt-get -o DPkg::Lock::Timeout=300 -y -q)

log() { printf 'pg-setup: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  echo "pg-setup: must run as root (it installs packages and runs the cluster as postgres)" >&2
  exit 1
fi

have_pkgs() { dpkg -s "$@" >/dev/null 2>&1; }

if ! have_pkgs postgresql-15 postgresql-server-dev-15 make gcc; then
  log "installing postgresql-15 and build tools"
  "${APT[@]}" update >&2
  DEBIAN_FRONTEND=noninteractive "${APT[@]}" install postgresql-15 postgresql-server-dev-15 make gcc >&2
fi

if [ ! -f /usr/share/postgresql/15/extension/vector.control ] || \
   [ ! -f /usr/lib/postgresql/15/lib/vector.so ]; then
  log "building pgvector from Debian's source package"
  src=/etc/apt/sources.list.d/trixie-src.sources
  if [ ! -f "$src" ]; then
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    uri=${uri:-http://deb.debian.org/debian}
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" >"$src"
  fi
  "${APT[@]}" update >&2
  work=$(mktemp -d)
  (
    cd "$work"
    apt-get source --download-only pgvector >&2
    tar xzf pgvector_*.orig.tar.gz
    dir=$(find . -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
    make -C "$dir" PG_CONFIG=$PGBIN/pg_config OPTFLAGS="" >/dev/null
    make -C "$dir" PG_CONFIG=$PGBIN/pg_config OPTFLAGS="" install >/dev/null
  )
  rm -rf "$work"
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
  log "initdb in $DATA"
  mkdir -p "$DATA"
  chown postgres:postgres "$DATA"
  runuser -u postgres -- $PGBIN/initdb -D "$DATA" --locale=C.UTF-8 -U postgres --auth=trust >/dev/null
  cat >>"$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
max_connections = 300
shared_buffers = 512MB
maintenance_work_mem = 1GB
unix_socket_directories = '/tmp'
CONF
fi

if ! runuser -u postgres -- $PGBIN/pg_ctl -D "$DATA" status >/dev/null 2>&1; then
  log "starting cluster on port $PORT"
  runuser -u postgres -- $PGBIN/pg_ctl -D "$DATA" -l "$DATA/server.log" -w -t 60 start >/dev/null
fi

for _ in $(seq 1 30); do
  $PGBIN/pg_isready -h 127.0.0.1 -p "$PORT" -q && break
  sleep 1
done

psql_() { psql -X -q -h 127.0.0.1 -p "$PORT" -U postgres "$@"; }
if [ "$(psql_ -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
  log "creating database $DB"
  psql_ -d postgres -c "CREATE DATABASE \"$DB\"" >&2
fi
psql_ -d "$DB" -c 'CREATE EXTENSION IF NOT EXISTS vector' 2>/dev/null

echo "postgres://postgres@127.0.0.1:$PORT/$DB?sslmode=disable"

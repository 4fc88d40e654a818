#!/usr/bin/env bash
# Sets up PostgreSQL + pgvector (idempotent), builds toolgate and serves the demo catalog
# on LISTEN_ADDR (default :8080) with the built-in, offline providers.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null; then
  echo "run-demo.sh: Go $(sed -n 's/^go //p' go.mod) or newer must be on PATH (https://go.dev/dl/)" >&2
  exit 1
fi
echo "== PostgreSQL 15 + pgvector (installed and started once; about a minute the first time)" >&2
url=$(./scripts/pg-setup.sh)
export DATABASE_URL=${DATABASE_URL:-$url}
echo "== building bin/toolgate" >&2
go build -ldflags "$(./scripts/ldflags.sh)" -o bin/toolgate ./cmd/toolgate
echo "== toolgate demo (Ctrl-C stops it)" >&2
exec ./bin/toolgate demo "$@"

#!/usr/bin/env bash
# Sets up PostgreSQL + pgvector (idempotent), builds toolgate and serves the demo catalog
# on LISTEN_ADDR (default :8080) with the built-in, offline providers.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null; then
  echo "run-demo.sh: Go $(sed -n 's/^go //p' go.mod) or newer must be on PATH (https://go.dev/dl/)" >&2
  exit 1
fi
url=$(./scripts/pg-setup.sh)
export DATABASE_URL=${DATABASE_URL:-$url}
go build -o bin/toolgate ./cmd/toolgate
exec ./bin/toolgate demo "$@"

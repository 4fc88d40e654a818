#!/usr/bin/env bash
# Sets up PostgreSQL + pgvector (idempotent), builds toolgate and serves the demo catalog
# on LISTEN_ADDR (default :8080) with the built-in, offline providers.
set -euo pipefail
cd "$(dirname "$0")/.."
url=$(./scripts/pg-setup.sh)
export DATABASE_URL=${DATABASE_URL:-$url}
go build -o bin/toolgate ./cmd/toolgate
exec ./bin/toolgate demo "$@"

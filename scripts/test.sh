#!/usr/bin/env bash
# The whole test suite, from a fresh Debian bookworm machine (as root) or an already
# prepared one: PostgreSQL 15 + pgvector, Go modules, sqlc, staticcheck, Chromium; then
# formatting, vet, staticcheck, the generated-code check, the tests against the real
# database, and short fuzz runs.
set -euo pipefail
cd "$(dirname "$0")/.."

SQLC_VERSION=v1.31.1
STATICCHECK_VERSION=v0.8.2 # staticcheck 2026.2.2, which reads Go 1.26 code
if ! command -v go >/dev/null; then
  echo "test.sh: Go $(sed -n 's/^go //p' go.mod) or newer must be on PATH (https://go.dev/dl/; the project's CI machines have it)" >&2
  exit 1
fi
export PATH="$PATH:$(go env GOPATH)/bin"

# sqlc takes minutes to build on a bare machine: build it while PostgreSQL is set up.
sqlc_log=$(mktemp)
if ! command -v sqlc >/dev/null || [ "$(sqlc version)" != "$SQLC_VERSION" ]; then
  (go install "github.com/sqlc-dev/sqlc/cmd/sqlc@$SQLC_VERSION" >"$sqlc_log" 2>&1 || echo "sqlc install failed" >>"$sqlc_log") &
  sqlc_pid=$!
fi
if ! command -v staticcheck >/dev/null || ! staticcheck -version | grep -qF "(${STATICCHECK_VERSION#v})"; then
  echo "== go install staticcheck@$STATICCHECK_VERSION"
  go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

./scripts/pg-setup.sh >/dev/null
go mod download

# The reference MCP server the sync tests also run against over stdio (internal/sources/everything_test.go).
EVERYTHING_VERSION=2026.8.31
if [ ! -f .cache/server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js ] ||
   ! grep -q "\"version\": \"$EVERYTHING_VERSION\"" .cache/server-everything/node_modules/@modelcontextprotocol/server-everything/package.json; then
  if ! command -v npm >/dev/null; then
    echo "== apt-get install nodejs npm"
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  fi
  echo "== npm install @modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
  npm install --silent --no-audit --no-fund --prefix .cache/server-everything "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
fi

# The OAuth tests' authorization server (oidc-provider) and the MCP TypeScript SDK client that
# runs the authorization code flow against toolgate (internal/mcptest.StartAuthServer).
OIDC_PROVIDER_VERSION=9.13.3
MCP_SDK_VERSION=1.32.2
if ! grep -q "\"version\": \"$OIDC_PROVIDER_VERSION\"" .cache/oauth-as/node_modules/oidc-provider/package.json 2>/dev/null ||
   ! grep -q "\"version\": \"$MCP_SDK_VERSION\"" .cache/oauth-as/node_modules/@modelcontextprotocol/sdk/package.json 2>/dev/null; then
  echo "== npm install oidc-provider@$OIDC_PROVIDER_VERSION @modelcontextprotocol/sdk@$MCP_SDK_VERSION"
  npm install --silent --no-audit --no-fund --prefix .cache/oauth-as "oidc-provider@$OIDC_PROVIDER_VERSION" "@modelcontextprotocol/sdk@$MCP_SDK_VERSION"
fi

# The vendors' SDKs and the TypeScript compiler that type-checks the recipes of docs/vendors.md
# against them (api/vendors_tsc_test.go).
OPENAI_SDK_VERSION=6.49.0
ANTHROPIC_SDK_VERSION=1.15.0
AI_SDK_VERSION=7.0.173
TYPESCRIPT_VERSION=7.0.2
TYPES_NODE_VERSION=26.6.11
if ! grep -q "\"version\": \"$OPENAI_SDK_VERSION\"" .cache/vendors/node_modules/openai/package.json 2>/dev/null ||
   ! grep -q "\"version\": \"$ANTHROPIC_SDK_VERSION\"" .cache/vendors/node_modules/@anthropic-ai/sdk/package.json 2>/dev/null ||
   ! grep -q "\"version\": \"$AI_SDK_VERSION\"" .cache/vendors/node_modules/ai/package.json 2>/dev/null ||
   ! grep -q "\"version\": \"$TYPESCRIPT_VERSION\"" .cache/vendors/node_modules/typescript/package.json 2>/dev/null ||
   ! grep -q "\"version\": \"$TYPES_NODE_VERSION\"" .cache/vendors/node_modules/@types/node/package.json 2>/dev/null; then
  echo "== npm install openai@$OPENAI_SDK_VERSION @anthropic-ai/sdk@$ANTHROPIC_SDK_VERSION ai@$AI_SDK_VERSION typescript@$TYPESCRIPT_VERSION @types/node@$TYPES_NODE_VERSION"
  npm install --silent --no-audit --no-fund --prefix .cache/vendors "openai@$OPENAI_SDK_VERSION" \
    "@anthropic-ai/sdk@$ANTHROPIC_SDK_VERSION" "ai@$AI_SDK_VERSION" "typescript@$TYPESCRIPT_VERSION" "@types/node@$TYPES_NODE_VERSION"
fi

# The console's browser tests (internal/console) drive Debian's Chromium, headless.
if ! command -v chromium >/dev/null; then
  echo "== apt-get install chromium"
  apt-get -o DPkg::Lock::Timeout=300 update -qq && apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium >/dev/null
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted"; exit 1; fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
staticcheck ./...

echo "== sqlc diff (generated code must match sql/)"
if [ -n "${sqlc_pid:-}" ]; then wait "$sqlc_pid"; cat "$sqlc_log"; fi
sqlc diff

echo "== go test"
export TOOLGATE_TEST_DATABASE_URL=${TOOLGATE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:${TOOLGATE_PG_PORT:-55432}/postgres?sslmode=disable}
# The tests that need the npm server installed above skip without it (make test-short on a
# machine prepared by make pg); here its absence fails them (internal/mcptest.EverythingServer).
export TOOLGATE_TEST_REQUIRE_NPM=1
go test -count=1 -timeout 20m ./...

# The deployment files: the Helm chart linted, rendered and decoded into the Kubernetes API
# types, the Dockerfile and docker-compose.yml checked against it and the binary. A module of
# its own (the Helm and Kubernetes modules stay out of toolgate's go.mod), so ./... above
# does not reach it.
echo "== go test deploy/helm/chartcheck"
(cd deploy/helm/chartcheck && go vet ./... && go test -count=1 -timeout 10m ./...)

if [ -x scripts/fuzz.sh ]; then
  echo "== fuzz (short)"
  ./scripts/fuzz.sh 5000x
fi
echo "== all tests passed"

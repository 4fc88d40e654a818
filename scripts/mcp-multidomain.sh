#!/usr/bin/env bash
# Rebuilds testdata/mcp-multidomain/tools.jsonl from the real MCP servers listed in
# testdata/mcp-multidomain/servers.json (docs/eval.md, "The multi-domain set"):
#
#   1. installs the servers' npm packages, at the exact versions of servers.json and with
#      the dependency tree of the committed package-lock.json, into .cache/mcp-multidomain/
#      (`npm ci --ignore-scripts`: no install script runs, so nothing downloads a browser or
#      builds a native module);
#   2. runs `toolgate dataset mcp`, which starts every server over stdio with dummy keys,
#      lists its tools and writes tools.jsonl (queries.jsonl is written by hand and is only
#      checked against the new tools).
#
# scripts/mcp-multidomain.sh            install (if needed) and list
# scripts/mcp-multidomain.sh --lock     re-resolve the packages after editing servers.json
#                                       and rewrite package-lock.json, then list
set -euo pipefail
cd "$(dirname "$0")/.."

data=testdata/mcp-multidomain
cache=.cache/mcp-multidomain
mkdir -p "$cache"

# package.json is made from servers.json, so the two cannot disagree; npm ci refuses a lock
# that does not match it.
jq '{name: "toolgate-mcp-multidomain", private: true,
     dependencies: (map(.package | capture("^(?<n>.+)@(?<v>[^@]+)$") | {(.n): .v}) | add)}' \
  "$data/servers.json" >"$cache/package.json.new"

if [ "${1:-}" = "--lock" ]; then
  mv "$cache/package.json.new" "$cache/package.json"
  rm -f "$cache/package-lock.json"
  npm install --ignore-scripts --no-audit --no-fund --prefix "$cache"
  cp "$cache/package-lock.json" "$data/package-lock.json"
elif ! cmp -s "$cache/package.json.new" "$cache/package.json" ||
     ! cmp -s "$data/package-lock.json" "$cache/package-lock.json" ||
     [ ! -d "$cache/node_modules" ]; then
  mv "$cache/package.json.new" "$cache/package.json"
  cp "$data/package-lock.json" "$cache/package-lock.json"
  npm ci --ignore-scripts --no-audit --no-fund --prefix "$cache"
else
  rm "$cache/package.json.new"
fi

# The servers run from the repository root: servers.json names their entry points under
# .cache/mcp-multidomain/node_modules and the dummy OAuth files under testdata/.
go run ./cmd/toolgate dataset mcp --servers "$data/servers.json" --out "$data"

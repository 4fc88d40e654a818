#!/usr/bin/env bash
# Rebuilds testdata/mcp-multidomain/tools.jsonl from the real MCP servers listed in
# testdata/mcp-multidomain/servers.json (docs/eval.md, "The multi-domain set"):
#
#   1. installs the servers' npm packages, at the exact versions of servers.json and with
#      the dependency tree of the committed package-lock.json, into .cache/mcp-multidomain/
#      (--ignore-scripts: no install script runs, so nothing downloads a browser or builds
#      a native module);
#   2. runs `toolgate dataset mcp`, which starts every server over stdio with dummy keys,
#      lists its tools and writes tools.jsonl (queries.jsonl is written by hand and is only
#      checked against the new tools).
#
# The install is `npm install` over the committed lock, not `npm ci`: one locked package
# (@sylphx/gust-server, under the pdf server) names an optional dependency that the registry
# does not have, which npm install skips and npm ci refuses. npm install keeps the locked
# versions; the script fails if it had to change the lock.
#
# scripts/mcp-multidomain.sh            install (if needed) and list
# scripts/mcp-multidomain.sh --lock     re-resolve the packages after editing servers.json
#                                       and rewrite package-lock.json, then list
# MCP_SET=mcp-multilingual scripts/mcp-multidomain.sh
#                                       the same for another set of testdata/ built the same
#                                       way (the multilingual one: docs/eval.md)
set -euo pipefail
cd "$(dirname "$0")/.."

set_name=${MCP_SET:-mcp-multidomain}
data=testdata/$set_name
cache=.cache/$set_name
mkdir -p "$cache"

# package.json is made from servers.json, so the two cannot disagree; npm would re-resolve a
# lock that does not match it, which the lock check below catches.
jq --arg name "toolgate-$set_name" '{name: $name, private: true,
     dependencies: (map(.package | capture("^(?<n>.+)@(?<v>[^@]+)$") | {(.n): .v}) | add)}' \
  "$data/servers.json" >"$cache/package.json.new"

# A set may carry npm settings of its own (the multilingual one resolves peer dependencies the
# legacy way: with the default resolver, npm install loops on two servers' React peers).
if [ -f "$data/npmrc" ]; then
  cp "$data/npmrc" "$cache/.npmrc"
fi

stamp="$cache/.installed-lock.json"
if [ "${1:-}" = "--lock" ]; then
  mv "$cache/package.json.new" "$cache/package.json"
  # Resolve from scratch, so that nothing of an older tree leaks into the lock.
  rm -rf "$cache/package-lock.json" "$cache/node_modules" "$stamp"
  npm install --ignore-scripts --no-audit --no-fund --prefix "$cache"
  # A fresh resolution marks a few packages "extraneous" in the lock, and an install from
  # that lock drops them again: install once more from it, as the default path does, so
  # that the committed lock is the one an install keeps unchanged.
  rm -rf "$cache/node_modules"
  npm install --ignore-scripts --no-audit --no-fund --prefix "$cache"
  cp "$cache/package-lock.json" "$data/package-lock.json"
  cp "$data/package-lock.json" "$stamp"
elif ! cmp -s "$cache/package.json.new" "$cache/package.json" ||
     ! cmp -s "$data/package-lock.json" "$stamp" ||
     [ ! -d "$cache/node_modules" ]; then
  mv "$cache/package.json.new" "$cache/package.json"
  rm -rf "$cache/node_modules" "$stamp"
  cp "$data/package-lock.json" "$cache/package-lock.json"
  npm install --ignore-scripts --no-audit --no-fund --prefix "$cache"
  if ! cmp -s "$data/package-lock.json" "$cache/package-lock.json"; then
    echo "mcp-multidomain.sh: npm changed the lock while installing it; run $0 --lock and review the diff" >&2
    exit 1
  fi
  cp "$data/package-lock.json" "$stamp"
else
  rm "$cache/package.json.new"
fi

# The servers run from the repository root: servers.json names their entry points under
# .cache/<set>/node_modules and the dummy OAuth files under testdata/.
go run ./cmd/toolgate dataset mcp --servers "$data/servers.json" --out "$data"

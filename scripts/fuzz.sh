#!/usr/bin/env bash
# Runs every fuzz target of the module (each `func FuzzXxx` in a _test.go file) for
# DURATION each (default 10s): ./scripts/fuzz.sh 10m for a long run by hand. A crash stops
# the script with the failing input written under the package's testdata/fuzz/<Target>/,
# where `go test` keeps replaying it as a regression test once committed.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}

# "dir target" lines; go test fuzzes one target of one package per run.
targets=$(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . |
  sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)$#\1 \2#' | sort)
if [ -z "$targets" ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
while read -r pkg name; do
  echo "-- $name ($pkg, $duration)"
  if ! out=$(go test -run='^$' -fuzz="^${name}\$" -fuzztime="$duration" -parallel=2 "$pkg" 2>&1); then
    echo "$out"
    exit 1
  fi
  echo "$out" | tail -n 1
done <<<"$targets"

#!/usr/bin/env bash
# Runs every fuzz target for DURATION each (default 10s): ./scripts/fuzz.sh 10m for a long
# run by hand. A crash stops the script with the failing input written under the
# package's testdata/fuzz/<Target>/, where `go test` keeps replaying it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}

# package target (one -fuzz run each: go test fuzzes one target of one package at a time)
targets=(
  "./internal/catalog FuzzParse"
  "./internal/catalog FuzzValidate"
  "./internal/catalog FuzzCanonical"
  "./internal/catalog FuzzHash"
  "./internal/config FuzzLoad"
)
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "-- $name ($pkg, $duration)"
  if ! out=$(go test -run='^$' -fuzz="^${name}\$" -fuzztime="$duration" -parallel=2 "$pkg" 2>&1); then
    echo "$out"
    exit 1
  fi
  echo "$out" | tail -n 1
done

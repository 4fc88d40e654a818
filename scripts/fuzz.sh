#!/usr/bin/env bash
# Runs every fuzz target of the module (each `func FuzzXxx` in a _test.go file) for BUDGET
# each, a -fuzztime value (default 5000x: 5,000 inputs): ./scripts/fuzz.sh 10m for a long run
# by hand. The default is a count, not a duration: with a duration, Go's fuzz coordinator
# before Go 1.27 can report a clean stop at the deadline as "context deadline exceeded" when
# a worker is slow to stop on a loaded machine (golang/go#75804), and a count has no
# deadline to race. A crash stops
# the script with the failing input written under the package's testdata/fuzz/<Target>/,
# where `go test` keeps replaying it as a regression test once committed.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-5000x}

# "dir target" lines; go test fuzzes one target of one package per run.
targets=$(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . |
  sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)$#\1 \2#' | sort)
if [ -z "$targets" ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
while read -r pkg name; do
  echo "-- $name ($pkg, $budget)"
  if ! out=$(go test -run='^$' -fuzz="^${name}\$" -fuzztime="$budget" -parallel=2 "$pkg" 2>&1); then
    echo "$out"
    exit 1
  fi
  echo "$out" | tail -n 1
done <<<"$targets"

#!/usr/bin/env bash
# Prints the -X linker flags that stamp toolgate's version, commit and date into a build
# (internal/version): go build -ldflags "$(scripts/ldflags.sh)" ./cmd/toolgate. make build,
# make run (scripts/run-demo.sh) and the Dockerfile (through make toolgate) use it.
#
# Each value is taken from the environment when set there (the Makefile's VERSION, the
# Dockerfile's build args VERSION, COMMIT and BUILD_DATE), else:
#   VERSION     the release tag git describe finds, without its v (0.9.0 on the tag,
#               0.9.0-3-g4897f80c1a2b-dirty after it); without a tag, or outside a git
#               checkout, the VERSION file at the top of the repository
#   COMMIT      the checkout's commit, 12 digits, with -dirty when tracked files changed;
#               empty outside a checkout (the binary then omits it)
#   BUILD_DATE  now, in UTC, RFC 3339
set -euo pipefail
cd "$(dirname "$0")/.."

version=${VERSION:-}
commit=${COMMIT:-}
date=${BUILD_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
if git rev-parse --git-dir >/dev/null 2>&1; then
  if [ -z "$version" ]; then
    version=$(git describe --tags --match 'v[0-9]*' --dirty --abbrev=12 2>/dev/null || true)
    version=${version#v}
  fi
  if [ -z "$commit" ]; then
    # every tag excluded, --always names the commit itself
    commit=$(git describe --always --exclude '*' --dirty --abbrev=12 2>/dev/null || true)
  fi
fi
if [ -z "$version" ]; then
  version=$(tr -d '[:space:]' <VERSION)
fi

pkg=github.com/toolgate/toolgate/internal/version
echo "-X $pkg.version=$version -X $pkg.commit=$commit -X $pkg.date=$date"

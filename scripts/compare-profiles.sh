#!/usr/bin/env bash
# A paired A/B of two weight profiles on an evaluation dataset's queries, against a running
# toolgate: each query is searched (POST /search, k 10) once with each profile (the request's
# "profile", so each search fuses with that profile's vectors and fusion weights), and scored
# by the reciprocal rank of its first gold tool in the top 10 (0 when none is there). It
# prints each profile's MRR and the mean paired difference (candidate - baseline) with a 95%
# percentile bootstrap interval (2,000 resamples of the queries, seeded). Where a live
# experiment (docs/experiments.md) sends each search to one arm, this sends every query to
# both, so the difference is measured on the same queries. For the learning loop's worked
# example (docs/profiles.md#the-loop-a-worked-example); the searches are logged as any others.
#
#   scripts/compare-profiles.sh DATASET_DIR BASELINE CANDIDATE [--source NAME] [--url URL]
#
# --source   the catalog source the dataset's tools were loaded as (default demo)
# --url      toolgate's address (default http://localhost:8080); TOOLGATE_KEY, when set, is
#            sent as the bearer key
set -euo pipefail

usage() { echo "usage: $0 DATASET_DIR BASELINE CANDIDATE [--source NAME] [--url URL]" >&2; exit 2; }
[ $# -ge 3 ] || usage
dir=$1 base=$2 cand=$3; shift 3
source=demo url=http://localhost:8080
while [ $# -gt 0 ]; do
  case $1 in
    --source) source=${2:?}; shift 2 ;;
    --url) url=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$dir/queries.jsonl" ] || { echo "$0: $dir/queries.jsonl not found" >&2; exit 1; }
for c in curl jq awk; do command -v $c >/dev/null || { echo "$0: $c is needed" >&2; exit 1; }; done

auth=()
[ -n "${TOOLGATE_KEY:-}" ] && auth=(-H "Authorization: Bearer $TOOLGATE_KEY")
# rr PROFILE LINE: the reciprocal rank of the query's first gold tool in that profile's top 10
rr() {
  curl -sS --fail-with-body "${auth[@]}" -H 'Content-Type: application/json' -X POST "$url/search" \
    -d "$(jq -c --arg p "$1" '{query: .query, k: 10, profile: $p}' <<<"$2")" |
    jq --arg s "${source}__" --argjson q "$2" \
      '[.results | to_entries[] | select(.value.name | ltrimstr($s) as $t | $q.gold | index($t)) | .key + 1] |
       if length > 0 then 1 / min else 0 end'
}

pairs=$(mktemp)
trap 'rm -f "$pairs"' EXIT
n=0
total=$(wc -l <"$dir/queries.jsonl")
while IFS= read -r line; do
  n=$((n + 1))
  echo "$(rr "$base" "$line") $(rr "$cand" "$line")" >>"$pairs"
  if [ $((n % 100)) -eq 0 ]; then echo "compare: $n of $total queries" >&2; fi
done <"$dir/queries.jsonl"
# the bootstrap means of the paired differences, sorted: the 50th and the 1951st of 2,000
ci=$(awk 'BEGIN { srand(1) } { d[NR] = $2 - $1 }
  END { for (r = 1; r <= 2000; r++) { s = 0; for (i = 1; i <= NR; i++) s += d[int(rand() * NR) + 1]; print s / NR } }' "$pairs" |
  sort -g | sed -n '50p;1951p' | tr '\n' ' ')
awk -v base="$base" -v cand="$cand" -v ci="$ci" '{ sa += $1; sb += $2 }
  END { split(ci, c, " "); printf "%d queries; MRR@10 %s %.4f, %s %.4f; difference %+.4f, 95%% CI [%+.4f, %+.4f]\n",
        NR, base, sa / NR, cand, sb / NR, (sb - sa) / NR, c[1], c[2] }' "$pairs"

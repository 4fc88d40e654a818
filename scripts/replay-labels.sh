#!/usr/bin/env bash
# Replays an evaluation dataset's queries against a running toolgate as an agent's traffic
# would look: each query is searched (POST /search, k 10), and each of its gold tools the
# search returned is reported as used (POST /search/{id}/feedback, success true), which
# records a label. For trying the learning loop (docs/profiles.md#the-loop-a-worked-example)
# on a demo; real labels come from real agents.
#
#   scripts/replay-labels.sh DATASET_DIR [--source NAME] [--url URL] [--limit N] [--sessions]
#
# --source   the catalog source the dataset's tools were loaded as (their names get the
#            NAME__ prefix; default demo, as `toolgate demo` loads them)
# --url      toolgate's address (default http://localhost:8080); TOOLGATE_KEY, when set, is
#            sent as the bearer key (a search key is enough)
# --limit    replay only the first N queries
# --sessions give every query its own session_id (replay-<n>), so that an experiment that
#            assigns by session spreads the queries over its arms
# It prints its progress every 100 queries on stderr, and one line at the end: queries
# replayed, searches labelled.
set -euo pipefail

usage() { echo "usage: $0 DATASET_DIR [--source NAME] [--url URL] [--limit N] [--sessions]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1; shift
source=demo url=http://localhost:8080 limit=0 sessions=0
while [ $# -gt 0 ]; do
  case $1 in
    --source) source=${2:?}; shift 2 ;;
    --url) url=${2:?}; shift 2 ;;
    --limit) limit=${2:?}; shift 2 ;;
    --sessions) sessions=1; shift ;;
    *) usage ;;
  esac
done
[ -f "$dir/queries.jsonl" ] || { echo "$0: $dir/queries.jsonl not found" >&2; exit 1; }
for c in curl jq; do command -v $c >/dev/null || { echo "$0: $c is needed" >&2; exit 1; }; done

auth=()
[ -n "${TOOLGATE_KEY:-}" ] && auth=(-H "Authorization: Bearer $TOOLGATE_KEY")
post() { curl -sS --fail-with-body "${auth[@]}" -H 'Content-Type: application/json' -X POST "$url$1" -d "$2"; }

n=0 labelled=0
total=$(wc -l <"$dir/queries.jsonl")
if [ "$limit" -gt 0 ] && [ "$limit" -lt "$total" ]; then total=$limit; fi
while IFS= read -r line; do
  n=$((n + 1))
  [ "$limit" -gt 0 ] && [ "$n" -gt "$limit" ] && { n=$((n - 1)); break; }
  body=$(jq -c --argjson s "$sessions" --arg id "replay-$n" \
    '{query: .query, k: 10} + (if $s == 1 then {session_id: $id} else {} end)' <<<"$line")
  resp=$(post /search "$body")
  # the gold tools among the results, as feedback
  fb=$(jq -c --arg p "${source}__" --argjson q "$line" \
    '[.results[].name | select(startswith($p) and (ltrimstr($p) as $t | $q.gold | index($t)))] |
     {tools: map({name: ., success: true})}' <<<"$resp")
  if [ "$(jq '.tools | length' <<<"$fb")" -gt 0 ]; then
    post "/search/$(jq -r .search_id <<<"$resp")/feedback" "$fb" >/dev/null
    labelled=$((labelled + 1))
  fi
  if [ $((n % 100)) -eq 0 ]; then echo "replay: $n of $total queries, $labelled searches labelled" >&2; fi
done <"$dir/queries.jsonl"
echo "replayed $n queries, labelled $labelled searches"

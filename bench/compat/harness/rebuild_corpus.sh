#!/bin/bash
# Rebuild $COMPAT_DIR/corpus (default /tmp/compat/corpus) from bench/compat/MANIFEST.tsv.
# Needs every repository of the manifest under $CLONES/OWNER+NAME (default CLONES=/work/.mirror), as a
# clone (OWNER+NAME/.git) or a bare repository, holding the listed commit. Extracts that commit with
# extract.py (its file selection), in the manifest's order, then checks that the new
# corpus/MANIFEST.tsv equals bench/compat/MANIFEST.tsv.
set -euo pipefail
H=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=$(realpath -m "${COMPAT_DIR:-/tmp/compat}")
M=$H/../MANIFEST.tsv
if [ -n "$(ls -A "$C/corpus" 2>/dev/null)" ]; then
  echo "rebuild_corpus.sh: $C/corpus is not empty; move it away first" >&2; exit 2
fi
mkdir -p "$C/corpus"
export COMPAT_DIR=$C
# one line per repository, in manifest order
cut -f1,2 "$M" | awk '!seen[$0]++' | while IFS=$'\t' read -r repo commit; do
  python3 "$H/extract.py" "${repo/\//+}" "$commit"
done
if cmp -s "$M" "$C/corpus/MANIFEST.tsv"; then
  echo "corpus rebuilt in $C/corpus; its MANIFEST.tsv equals $M"
else
  echo "rebuild_corpus.sh: $C/corpus/MANIFEST.tsv differs from $M (diff them)" >&2; exit 1
fi

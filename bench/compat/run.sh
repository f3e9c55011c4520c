#!/bin/bash
# Re-run the whole httpyac-vs-Volley comparison on the corpus in $COMPAT_DIR/corpus (see README.md).
# Env knobs: COMPAT_DIR (/tmp/compat: corpus/, node/ with httpyac, work/, baseline/, reports; the scripts
#              are read from this script's directory)
#            HTTPYAC_WORKERS (2) VOLLEY_WORKERS (1) FILE_TIMEOUT (20 s per file)
#            ONLY="id-regex" (run a subset of jobs, for testing; its report/results go to work/ and
#              neither the reports in $COMPAT_DIR nor the baseline are touched) VOLLEY (binary, $COMPAT_DIR/volley)
#            VOLLEY_ONLY=1: re-run only Volley and compare it with the httpyac side of the last full run,
#              kept in $COMPAT_DIR/baseline/ (jobs.tsv = file ids, environment chosen, `--var` fillers;
#              httpyac's captures, outputs and exit codes). The Volley copy of the corpus is made by the
#              same prepare.py code (same rewrite, same port), the fillers/environments are the baseline's
#              (not recomputed with the new binary), and compare.py is the same. Refuses to run when the
#              corpus changed since the baseline (then a full run is needed).
# Outputs (runs without ONLY): report.md + results.json (this run); the run before is kept as
#   report-previous.md + results-previous.json; report-movement.md = headline and top 25 causes of this
#   run beside the previous run, with how many requests moved in/out of each cause.
# A full run without ONLY replaces baseline/ with its own httpyac side (the old one goes to baseline.old/).
set -euo pipefail
H=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/harness
C=$(realpath -m "${COMPAT_DIR:-/tmp/compat}")
export COMPAT_DIR=$C  # read by the harness scripts (worker.py keeps it out of the tools' environment)
W=$C/work
B=$C/baseline
HW=${HTTPYAC_WORKERS:-2}; VW=${VOLLEY_WORKERS:-1}; TMO=${FILE_TIMEOUT:-20}
MODE=full
if [ -n "${VOLLEY_ONLY:-}" ] && [ "${VOLLEY_ONLY}" != 0 ]; then MODE=volley-only; fi
SUBSET=${ONLY:-}
# the tools inherit the environment: keep this script's own knobs out of it (VOLLEY stays: worker.py reads it)
export -n VOLLEY_ONLY HTTPYAC_WORKERS VOLLEY_WORKERS FILE_TIMEOUT ONLY 2>/dev/null || true
VOLLEY=$(realpath -e "${VOLLEY:-$C/volley}") || { echo "run.sh: Volley binary not found" >&2; exit 2; }
[ -x "$VOLLEY" ] || { echo "run.sh: $VOLLEY is not executable" >&2; exit 2; }
export VOLLEY
[ -d $C/corpus ] || { echo "run.sh: no corpus in $C/corpus (see README.md)" >&2; exit 2; }
if [ $MODE = full ] && [ ! -x $C/node/node_modules/.bin/httpyac ]; then
  echo "run.sh: httpyac not installed in $C/node (see README.md)" >&2; exit 2
fi

corpus_hash() { (cd $C/corpus && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1); }

if [ $MODE = volley-only ]; then
  for f in jobs.tsv corpus.sha256 capture out/httpyac; do
    [ -e $B/$f ] || { echo "run.sh: VOLLEY_ONLY=1 needs $B/$f (saved by a full run)" >&2; exit 3; }
  done
  if [ "$(corpus_hash)" != "$(cat $B/corpus.sha256)" ]; then
    echo "run.sh: the corpus changed since the baseline's full run ($B/INFO); run a full run first (without VOLLEY_ONLY)" >&2
    exit 3
  fi
fi

if [ -f $W/capture.pid ]; then kill "$(cat $W/capture.pid)" 2>/dev/null || true; fi
rm -rf $W; mkdir -p $W
cap_pid=
trap '[ -n "$cap_pid" ] && kill $cap_pid 2>/dev/null; true' EXIT
targets=(); ports=()
if [ $MODE = full ]; then
  for ((i=0;i<HW;i++)); do targets+=("httpyac$i:$((18081+i))"); ports+=($((18081+i))); done
fi
for ((i=0;i<VW;i++)); do targets+=("volley$i:$((18091+i))"); ports+=($((18091+i))); done
if [ $MODE = full ]; then
  python3 $H/prepare.py $W "${targets[@]}"
else
  # the httpyac side of the last full run, unchanged
  cp $B/jobs.tsv $W/jobs.tsv
  mkdir -p $W/capture $W/out
  cp $B/capture/*.jsonl $W/capture/
  cp -r $B/out/httpyac $W/out/
  cp $B/out/httpyac*.meta.jsonl $W/out/
  chmod -R u+w $W
  PREPARE_COPIES_ONLY=1 python3 $H/prepare.py $W "${targets[@]}"
fi
if [ -n "$SUBSET" ]; then awk -F'\t' -v re="^(${SUBSET})\$" '$1 ~ re' $W/jobs.tsv > $W/jobs.sub && mv $W/jobs.sub $W/jobs.tsv; fi
python3 $H/capture.py $W/capture "${ports[@]}" > $W/capture.log 2>&1 &
cap_pid=$!
echo $cap_pid > $W/capture.pid
sleep 1
vinfo="$($VOLLEY --version) ($VOLLEY, sha256 $(sha256sum "$VOLLEY" | cut -c1-16)…)"
if [ $MODE = full ]; then
  echo "$(wc -l < $W/jobs.tsv) files; httpyac $($C/node/node_modules/.bin/httpyac --version); $vinfo; $HW+$VW workers, ${TMO}s per file"
else
  echo "VOLLEY_ONLY: $(wc -l < $W/jobs.tsv) files; httpyac side from $B ($(sed -n 1p $B/INFO | cut -c1-60)…); $vinfo; $VW Volley workers, ${TMO}s per file"
fi
start=$(date +%s)
pids=()
if [ $MODE = full ]; then
  for ((i=0;i<HW;i++)); do python3 $H/worker.py $W httpyac httpyac$i $((18081+i)) $i $HW $TMO & pids+=($!); done
fi
for ((i=0;i<VW;i++)); do python3 $H/worker.py $W volley volley$i $((18091+i)) $i $VW $TMO & pids+=($!); done
for p in "${pids[@]}"; do wait $p; done
sleep 1
kill $cap_pid 2>/dev/null || true; cap_pid=; rm -f $W/capture.pid
secs=$(( $(date +%s) - start ))
echo "runs took $secs s"

if [ -n "$SUBSET" ]; then
  python3 $H/compare.py $W $W/results.json $W/report.md
  exit 0
fi
if [ -f $C/report.md ]; then cp -p $C/report.md $C/report-previous.md; fi
if [ -f $C/results.json ]; then cp -p $C/results.json $C/results-previous.json; fi
python3 $H/compare.py $W $C/results.json $C/report.md
{
  echo
  echo "## This run"
  echo
  echo "- $(date -u +%FT%TZ), mode: $MODE$([ $MODE = volley-only ] && echo " (httpyac side reused from $B: $(sed -n 1p $B/INFO))")"
  echo "- Volley: $($VOLLEY --version), $VOLLEY, sha256 $(sha256sum "$VOLLEY" | cut -d' ' -f1); runs took $secs s"
} >> $C/report.md

if [ $MODE = full ]; then
  # keep this run's httpyac side for later VOLLEY_ONLY=1 runs
  T=$B.new; rm -rf $T; mkdir -p $T/capture $T/out $T/previous-volley-run/capture $T/previous-volley-run/out
  cp -p $W/jobs.tsv $W/capture.log $T/
  for ((i=0;i<HW;i++)); do cp -p $W/capture/$((18081+i)).jsonl $T/capture/; done
  cp -a $W/out/httpyac $T/out/; cp -p $W/out/httpyac*.meta.jsonl $T/out/
  for ((i=0;i<VW;i++)); do cp -p $W/capture/$((18091+i)).jsonl $T/previous-volley-run/capture/; done
  cp -a $W/out/volley $T/previous-volley-run/out/; cp -p $W/out/volley*.meta.jsonl $T/previous-volley-run/out/
  cp -p $C/report.md $C/results.json $T/
  corpus_hash > $T/corpus.sha256
  cat > $T/INFO <<EOF
Saved $(date -u +%FT%TZ) by run.sh from the full run that ended then.
httpyac: $($C/node/node_modules/.bin/httpyac --version)
volley used in that run: $VOLLEY sha256 $(sha256sum "$VOLLEY" | cut -d' ' -f1)
corpus fingerprint (sha256 of sorted 'sha256sum' of every corpus file): $(cat $T/corpus.sha256)
httpyac side: jobs.tsv (ids, environment, --var fillers), capture/1808x.jsonl, out/httpyac/, out/httpyac*.meta.jsonl
previous-volley-run/: that run's Volley side
EOF
  if [ -d $B.old ]; then chmod -R u+w $B.old; rm -rf $B.old; fi; if [ -d $B ]; then mv $B $B.old; fi; mv $T $B
  echo "httpyac side saved in $B for VOLLEY_ONLY=1 runs"
fi

if [ $MODE = volley-only ]; then
  daynote=$(python3 $H/daynote.py $B/capture)
  if [ -n "$daynote" ]; then echo "$daynote"; echo "- $daynote" >> $C/report.md; fi
fi
echo
if [ -f $C/results-previous.json ]; then
  python3 $H/movement.py $C/results-previous.json $C/results.json $C/report-movement.md 25
  echo "(this table: $C/report-movement.md; previous report: $C/report-previous.md)"
fi

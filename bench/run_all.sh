#!/usr/bin/env bash
# Generate the benchmark tree (once; kept in bench/out/tree, which git ignores) and run every
# benchmark. Figures go to the terminal and to bench/out/*.txt / *.json. Never asserts times.
#   bench/run_all.sh                 # defaults: 40,000 files, seed 1, 15 repetitions
#   REPS=5 FILES=10000 bench/run_all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
REPS=${REPS:-15}
FILES=${FILES:-40000}
SEED=${SEED:-1}
OUT=bench/out
mkdir -p "$OUT"

echo "== tree (files=$FILES seed=$SEED)"
"$PY" bench/gen_tree.py "$OUT/tree" --files "$FILES" --seed "$SEED"

echo "== scan benchmarks (reps=$REPS)"
"$PY" bench/bench_scan.py --tree "$OUT/tree" --reps "$REPS" --json "$OUT/scan.json" | tee "$OUT/scan.txt"

echo "== step-log append benchmark"
"$PY" bench/bench_append.py --json "$OUT/append.json" | tee "$OUT/append.txt"

echo "== profiles"
"$PY" bench/profile_scan.py --tree "$OUT/tree" | tee "$OUT/profile.txt"

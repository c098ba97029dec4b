#!/usr/bin/env bash
# One device call of a study that takes several: checks the GPU, installs the package if the box is
# fresh, seeds the lane file and the autotuning picks from the committed copies, runs gpu_bench.sh
# for what is left of the call, and copies what must come back to $OUT (the lane file and its log
# first, then the picks as one tarball: a call brings back a few files only).  Run it as every
# call's command, the same line each time, and commit what comes back before the next call
# (scripts/take_back.py): a call on a box kept started resumes from the box's newer lane file, one
# on a fresh box (the last one may have gone back between calls) from the committed one.
#
#   [gpu_bench.sh's variables] [GPU=H200] [RESUME=committed-lane.json] [SEED_PICKS=docs/results/picks] \
#       bash scripts/device_call.sh MODE CONFIGS SECONDS
#
# GPU: a part of the name nvidia-smi must print (else one line, exit 2, nothing run): a lane file
#   written on one GPU does not resume on another, and a study's files keep to one GPU.
# RESUME: a committed lane file of the same line, copied to results/cuda-TAG-part1of1.json when the
#   box has none there (one GPU only: on more, give it as SKIP_DONE).
# SEED_PICKS: committed picks, copied without overwriting into results/picks (kept on a box that
#   stays started, where folders under docs/ are not), which becomes gpu_bench.sh's PICKS.
# SECONDS: the call's seconds from this script's start; the install and copies come out of them.
set -uo pipefail
START=$(date +%s)
MODE=${1:?MODE}; CONFIGS=${2:?CONFIGS}; CALL_SECONDS=${3:?SECONDS}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-device-out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
fail() { echo "device_call.sh: $*" >&2; exit 2; }
NAME=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "GPU: ${NAME:-none found by nvidia-smi}"
if [ -n "${GPU:-}" ] && [[ "$NAME" != *"$GPU"* ]]; then
  fail "this box's GPU is '${NAME:-none}', not $GPU (GPU=$GPU); nothing run"
fi
[ -z "${RESUME:-}" ] || [ -f "$RESUME" ] || fail "RESUME=$RESUME: no such file"  # before anything is changed
[ -z "${SEED_PICKS:-}" ] || [ -d "$SEED_PICKS" ] || fail "SEED_PICKS=$SEED_PICKS: no such folder"
python3 -c "import inductor_ablate" 2>/dev/null || (cd "$HERE/.." && export OUT && source scripts/gpu_install.sh && mv "$OUT/pip.txt" /tmp/)
TAG="${SUITE:-embedded}-${DTYPE:-float32}-$MODE${BASE:+-base-$BASE}"  # as gpu_bench.sh names it
LANE="results/cuda-$TAG-part1of1.json"
mkdir -p results
if [ -n "${RESUME:-}" ]; then
  N=$(python3 -c "import torch; print(torch.cuda.device_count())")
  [ "$N" = 1 ] || fail "RESUME resumes one lane, and this box has $N GPUs; give the file as SKIP_DONE instead"
  if [ -f "$LANE" ]; then echo "resuming $LANE (the box's, newer than $RESUME)"; else cp "$RESUME" "$LANE"; echo "resuming $RESUME"; fi
fi
if [ -n "${SEED_PICKS:-}" ]; then
  mkdir -p results/picks
  cp -r --update=none "$SEED_PICKS"/. results/picks/ 2>/dev/null || cp -rn "$SEED_PICKS"/. results/picks/
  export PICKS=results/picks
fi
LEFT=$(( CALL_SECONDS - ($(date +%s) - START) - 15 ))  # 15 s to copy what comes back
[ "$LEFT" -gt 30 ] || fail "$CALL_SECONDS s: $LEFT s would be left for the run after the set-up"
bash "$HERE/gpu_bench.sh" "$MODE" "$CONFIGS" "$LEFT"
cp results/cuda-"$TAG"-part*.json results/cuda-"$TAG"-part*.log "$OUT"/ 2>/dev/null
[ -n "${PICKS:-}" ] && [ -d "$PICKS" ] && tar czf "$OUT/picks.tgz" "$PICKS"
ls -l "$OUT"

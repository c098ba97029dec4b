#!/usr/bin/env bash
# One device call of a hunt for what makes one generated program wrong in some processes and right
# in others (docs/correctness.md, "A case on CUDA, closed"): runs a model_latency.py line in fresh
# processes, each saving its code and its Triton kernels' picks (--save-code), and keeps each
# process's exit status (0 right, 1 wrong, else an error or its time limit); then runs processes
# pinned (--pin) to the picks of the first wrong one, or of PIN.  Resumable: a call on a box kept
# started goes on from $HUNT (a fresh box starts over).  To $OUT: the log, the status list and the
# picks files as one tarball (a device call brings few files back).
#
#   [PIN=triton-picks.txt] [HUNT=results/hunt] [PROCESS_SECONDS=150] \
#       bash scripts/process_hunt.sh UNPINNED PINNED SECONDS -- MODEL_LATENCY_ARGS...
#
# UNPINNED, PINNED: how many processes of each kind in all, over calls.  SECONDS: this call's, from
# the script's start; a process is not started with less than PROCESS_SECONDS left, and is stopped
# at that length (150 s: ConvNeXt-T's first process on a fresh H200 box was stopped at 110 s as it
# exited, its checks printed; the other ten took 67 to 99 s).  status.txt has one line a process:
# `N unpinned exit E` or `N pinned exit E PICKS`.
set -uo pipefail
START=$(date +%s)
HERE=$(cd "$(dirname "$0")" && pwd)
fail() { echo "process_hunt.sh: $*" >&2; exit 2; }
UNPINNED=${1:-}; PINNED=${2:-}; CALL_SECONDS=${3:-}
for n in "$UNPINNED" "$PINNED" "$CALL_SECONDS"; do
  [[ "$n" =~ ^[0-9]+$ ]] || fail "usage: process_hunt.sh UNPINNED PINNED SECONDS -- MODEL_LATENCY_ARGS... ('$n' is not a count)"
done
shift 3
[ "${1:-}" = "--" ] || fail "the model_latency.py line goes after --"
shift
[ $# -gt 0 ] || fail "no model_latency.py line after --"
for arg in "$@"; do
  case "$arg" in --save-code*|--pin*) fail "$arg: the hunt gives each process its own --save-code and --pin";; esac
done
[ -z "${PIN:-}" ] || [ -f "$PIN" ] || fail "PIN=$PIN: no such file"
PROCESS_SECONDS=${PROCESS_SECONDS:-150}
HUNT=${HUNT:-results/hunt}; mkdir -p "$HUNT"; touch "$HUNT/status.txt"
OUT=${OUT:-device-out}; mkdir -p "$OUT"
python3 -c "import inductor_ablate" 2>/dev/null || (cd "$HERE/.." && export OUT && source scripts/gpu_install.sh)

count() { awk -v kind="$1" '$2 == kind' "$HUNT/status.txt" | wc -l; }
left() { echo $(( CALL_SECONDS - ($(date +%s) - START) - 10 )); }
run_one() {  # KIND PICKS-or-empty LINE...: one fresh process of the line, its code and picks in $HUNT/N
  local kind=$1 pins=$2 n
  shift 2
  n=$(( $(wc -l < "$HUNT/status.txt") + 1 ))
  echo "process $n ($kind${pins:+, pinned to $pins}): start $(date -u +%T)" >> "$HUNT/log.txt"
  timeout "$PROCESS_SECONDS" python3 "$HERE/model_latency.py" "$@" --save-code "$HUNT/$n" \
    ${pins:+--pin "$pins"} >> "$HUNT/log.txt" 2>&1
  local status=$?
  echo "$n $kind exit $status${pins:+ $pins}" >> "$HUNT/status.txt"
  echo "process $n ($kind): exit $status $(date -u +%T)" | tee -a "$HUNT/log.txt"
}

while [ "$(count unpinned)" -lt "$UNPINNED" ] && [ "$(left)" -ge "$PROCESS_SECONDS" ]; do
  run_one unpinned "" "$@"
done
PICKS=${PIN:-}
if [ -z "$PICKS" ]; then
  WRONG=$(awk '$2 == "unpinned" && $4 == 1 {print $1; exit}' "$HUNT/status.txt")
  [ -z "$WRONG" ] || PICKS="$HUNT/$WRONG/triton-picks.txt"
fi
if [ "$PINNED" -gt 0 ] && [ -z "$PICKS" ]; then
  echo "no wrong process yet, and no PIN: no process pinned" | tee -a "$HUNT/log.txt"
else
  while [ "$(count pinned)" -lt "$PINNED" ] && [ "$(left)" -ge "$PROCESS_SECONDS" ]; do
    run_one pinned "$PICKS" "$@"
  done
fi
echo "status: $(count unpinned) unpinned, $(count pinned) pinned; $(awk '$4 == 1' "$HUNT/status.txt" | wc -l) wrong"
cp "$HUNT/log.txt" "$HUNT/status.txt" "$OUT"/
(cd "$HUNT" && tar czf "$OUT/hunt-picks.tgz" */triton-picks.txt 2>/dev/null)

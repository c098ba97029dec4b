#!/usr/bin/env bash
# The study on a CUDA box, one lane per GPU: lane k runs `bench --shard k/N --claims DIR` on GPU k-1,
# taking whole models from a queue the lanes share (a lane whose models were cheap takes more of
# them), so N GPUs take about 1/N of the wall time; then `merge` joins the lanes.  Each lane's results file resumes, and
# each lane keeps its shared Inductor caches beside it until its cells are done, so a run cut short
# (by `timeout`, a scheduler, Ctrl-C) is finished, warm, by running the same line again.
#
#   [SUITE=real] [MODELS=a,b] [DTYPE=bfloat16] [SKIP_DONE=earlier.json] [REPEATS=2] [PICKS=dir] [BASE=row] bash scripts/gpu_bench.sh MODE CONFIGS [SECONDS]
#   e.g.  SUITE=real DTYPE=bfloat16 bash scripts/gpu_bench.sh inference paper 540
# SKIP_DONE: results files of earlier runs (comma list); their ok cells are not run again (bench --skip-done).
# REPEATS: processes per cell (bench --cell-repeats, default 1); from 2 on, `all`'s later processes
# compile warm, and the report compares each warm row with that warm `all`.
# SECONDS: each lane is killed after that long (`timeout`), and does not start a cell that it would
# likely not finish by then (bench --budget, priced from the SKIP_DONE and HISTORY files and the lane
# file), but goes on with later models' cells that fit, so a time limit ends the lane between cells
# instead of in one whose work would be lost; with PICKS, a minute or more left then goes to the
# autotuning of the first model's first cell left behind, whose picks a cut keeps (bench --budget).
# HISTORY: more results files to price cells from (comma list), e.g. another dtype's or mode's run.
# PICKS: a folder of autotuning picks (bench --picks), shared by the lanes: a model's first cell starts
# from its picks there instead of benchmarking every matmul choice again, and each cell's picks are
# saved there; keep the folder (bring it back from the box) and a later call on a fresh box resumes
# the autotuning, a cut cold cell's included.
# BASE: a row whose Inductor settings every row takes (bench --base, e.g. no-matmul-templates); its
# files are tagged -base-ROW, apart from the plain run's.
#
# Lane files and logs: results/cuda-TAG-part{k}of{N}.json|log, TAG = SUITE-DTYPE-MODE[-base-ROW];
# merged: results/cuda-TAG.json|csv|png.  Prints this invocation's wall time last.
set -uo pipefail
MODE=${1:-inference}; CONFIGS=${2:-full}; SECONDS_LEFT=${3:-86400}
SUITE=${SUITE:-embedded}; DTYPE=${DTYPE:-float32}; MODELS=${MODELS:-}; SKIP_DONE=${SKIP_DONE:-}; REPEATS=${REPEATS:-1}
HISTORY=${HISTORY:-}; PICKS=${PICKS:-}; BASE=${BASE:-}
BUDGET=$(( SECONDS_LEFT > 30 ? SECONDS_LEFT - 10 : SECONDS_LEFT ))  # 10 s for the lane's start and exit
TAG="$SUITE-$DTYPE-$MODE${BASE:+-base-$BASE}"
export PYTHONUNBUFFERED=1
N=$(python3 -c "import torch; print(torch.cuda.device_count())")
[ "$N" -ge 1 ] || { echo "no CUDA device" >&2; exit 2; }
mkdir -p results
START=$(date +%s)
# one GPU: one lane, no queue to share
CLAIMS=""; [ "$N" -ge 2 ] && CLAIMS="--claims results/cuda-$TAG-claims-of$N"
# Each lane gets its own share of the CPU cores, for its compile workers too: a lane's eager timing
# is CPU-bound for launch-bound models, and must not share cores with the next lane's autotuning.
CORES=$(nproc); PER=$(( CORES / N ))
for k in $(seq 1 "$N"); do
  PIN=""; command -v taskset >/dev/null && [ "$PER" -ge 1 ] && PIN="taskset -c $(( (k-1)*PER ))-$(( k*PER-1 ))"
  CUDA_VISIBLE_DEVICES=$((k-1)) TORCHINDUCTOR_COMPILE_THREADS=$PER $PIN timeout -k 20 "$SECONDS_LEFT" python3 -m inductor_ablate bench --device cuda \
      --suite "$SUITE" ${MODELS:+--models "$MODELS"} ${SKIP_DONE:+--skip-done "$SKIP_DONE"} --dtype "$DTYPE" --mode "$MODE" --configs "$CONFIGS" \
      --cell-repeats "$REPEATS" --shard "$k/$N" $CLAIMS --json "results/cuda-$TAG-part${k}of$N.json" --no-progress \
      --budget "$BUDGET" ${HISTORY:+--history "$HISTORY"} ${PICKS:+--picks "$PICKS"} ${BASE:+--base "$BASE"} \
      > "results/cuda-$TAG-part${k}of$N.log" 2>&1 &
done
wait
tail -n 4 results/cuda-"$TAG"-part*of"$N".log
python3 -m inductor_ablate merge results/cuda-"$TAG"-part*of"$N".json --json "results/cuda-$TAG.json" \
    --csv "results/cuda-$TAG.csv" --plot "results/cuda-$TAG.png"
echo "gpu_bench.sh wall: $(( $(date +%s) - START )) s (lanes: $N)"

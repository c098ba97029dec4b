#!/usr/bin/env bash
# The study on a CUDA box, one lane per GPU: lane k runs `bench --shard k/N` on GPU k-1 (so N GPUs
# take 1/N of the wall time), then `merge` joins the lanes.  Each lane's results file resumes, so a
# run cut short (by `timeout`, a scheduler, Ctrl-C) is finished by running the same line again.
#
#   bash scripts/gpu_bench.sh MODE CONFIGS [SECONDS]      e.g.  inference paper,ours 540
#
# Lane files and logs: results/cuda-MODE-part{k}of{N}.json|log; merged: results/cuda-MODE.json|csv|png.
set -uo pipefail
MODE=${1:-inference}; CONFIGS=${2:-full}; SECONDS_LEFT=${3:-86400}
export PYTHONUNBUFFERED=1
N=$(python3 -c "import torch; print(torch.cuda.device_count())")
[ "$N" -ge 1 ] || { echo "no CUDA device" >&2; exit 2; }
mkdir -p results
for k in $(seq 1 "$N"); do
  CUDA_VISIBLE_DEVICES=$((k-1)) timeout -k 20 "$SECONDS_LEFT" python3 -m inductor_ablate bench --device cuda \
      --mode "$MODE" --configs "$CONFIGS" --shard "$k/$N" --json "results/cuda-$MODE-part${k}of$N.json" \
      --no-progress > "results/cuda-$MODE-part${k}of$N.log" 2>&1 &
done
wait
tail -n 3 results/cuda-"$MODE"-part*of"$N".log
python3 -m inductor_ablate merge results/cuda-"$MODE"-part*of"$N".json --json "results/cuda-$MODE.json" \
    --csv "results/cuda-$MODE.csv" --plot "results/cuda-$MODE.png"

#!/usr/bin/env bash
# The CUDA checks, as run on the H200 (device tool): install, patch status, off-means-stock identity,
# kernel census of the program suite.  Writes everything under ${OUT:-gpu-out}.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source scripts/gpu_install.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m inductor_ablate status 2>&1 | tee "$OUT/status.txt"
python3 -m inductor_ablate list 2>&1 | tee "$OUT/list.txt"
python3 scripts/check_stock_identity.py --device cuda --json "$OUT/identity-cuda.json" 2>&1 | tee "$OUT/identity-cuda.txt"
python3 scripts/kernel_census_report.py --device cuda --json "$OUT/census-cuda.json" 2>&1 | tee "$OUT/census-cuda.txt"

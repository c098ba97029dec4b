#!/usr/bin/env bash
# The CUDA checks, as run on the H200 (device tool): install, patch status, off-means-stock identity,
# kernel census of the program suite.  Writes everything under ${OUT:-gpu-out}.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . > "$OUT/pip.txt" 2>&1
if ! python3 -c "import inductor_ablate" 2>/dev/null; then
  # no network there and pip could not build: lay the package out by hand, start-up hook included
  SP=$(python3 -c "import site; print(site.getsitepackages()[0])")
  mkdir -p /tmp/ia_site/inductor_ablate
  for f in overlay/*; do ln -sf "$PWD/$f" /tmp/ia_site/inductor_ablate/; done
  ln -sfn "$PWD/patches" /tmp/ia_site/inductor_ablate/patches
  echo /tmp/ia_site > "$SP/__inductor_ablate_path.pth"   # sorts before inductor_ablate.pth
  cp overlay/inductor_ablate.pth "$SP/"
  echo "installed by hand into $SP" | tee -a "$OUT/pip.txt"
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m inductor_ablate status 2>&1 | tee "$OUT/status.txt"
python3 -m inductor_ablate list 2>&1 | tee "$OUT/list.txt"
python3 scripts/check_stock_identity.py --device cuda --json "$OUT/identity-cuda.json" 2>&1 | tee "$OUT/identity-cuda.txt"
python3 scripts/kernel_census_report.py --device cuda --json "$OUT/census-cuda.json" 2>&1 | tee "$OUT/census-cuda.txt"

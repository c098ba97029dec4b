#!/usr/bin/env bash
# Install inductor_ablate on a machine with no network (the H200 image): pip's editable install
# first; if pip cannot build there, lay the package out by hand, start-up hook included.
# Usage: source scripts/gpu_install.sh   (log in $OUT/pip.txt)
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-build-isolation -e . > "$OUT/pip.txt" 2>&1
if ! python3 -c "import inductor_ablate" 2>/dev/null; then
  SP=$(python3 -c "import site; print(site.getsitepackages()[0])")
  mkdir -p /tmp/ia_site/inductor_ablate
  for f in overlay/*; do ln -sf "$PWD/$f" /tmp/ia_site/inductor_ablate/; done
  ln -sfn "$PWD/patches" /tmp/ia_site/inductor_ablate/patches
  echo /tmp/ia_site > "$SP/__inductor_ablate_path.pth"   # sorts before inductor_ablate.pth
  cp overlay/inductor_ablate.pth "$SP/"
  echo "installed by hand into $SP" | tee -a "$OUT/pip.txt"
fi

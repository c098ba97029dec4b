"""``bench --picks``: a folder of autotuning picks, one subfolder per model and setting, seeded into
a model's first cell and saved after each.  Two kinds, both Inductor's own caches, so Inductor
reads them back itself: which matmul choice won for which shape (select_algorithm's
PersistentCache) and which config each generated Triton kernel settled on (its ``.best_config``
file beside the kernel, under ``triton-configs/DEVICE/``)."""
from __future__ import annotations

import json
import os
import shutil

from ..errors import UsageError, check_writable

def cache_name(cell: dict) -> str:
    """The name of a model's shared cache directory (one per model, dtype, mode and device), and of
    its folder of autotuning picks under ``bench --picks``."""
    return "-".join(str(cell[k]) for k in ("model", "dtype", "mode", "device")).replace(":", "_").replace("/", "_")


#: where, under an Inductor cache directory, the autotuning picks live: select_algorithm's
#: PersistentCache, one JSON file per system (GPU or CPU, torch, triton) holding each matmul
#: template choice's benchmarked time, keyed by op and input shapes and layouts
PICKS_SUBDIR = "cache"

#: where, in a model's folder of picks, the Triton kernels' picks live: Inductor's ``.best_config``
#: files (the config a kernel settled on, keyed by a hash of its source and torch), one folder per
#: GPU (the files do not name it), laid out as under the Inductor cache directory
CONFIGS_SUBDIR = "triton-configs"
BEST_CONFIG = ".best_config"


def device_folder(device_name: str) -> str:
    """A GPU's name as a folder name: ``NVIDIA H100 80GB HBM3`` -> ``NVIDIA_H100_80GB_HBM3``."""
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in device_name)


def check_picks_folder(picks: str, writable: bool = True) -> None:
    """``--picks DIR`` (bench's, model_latency.py's): one line before any compile when it is a file,
    or (``writable``) a folder where the picks, saved after each compile, cannot be written."""
    if os.path.exists(picks) and not os.path.isdir(picks):
        raise UsageError(f"--picks {picks}: not a folder; give a folder of picks saved by an earlier --picks run, "
                         f"or a new one")
    if writable:
        check_writable(os.path.join(picks, "picks"), "picks folder", "choose another --picks folder")


def has_picks(picks: str, cell: dict, device_name: str | None = None) -> bool:
    """Whether ``bench --picks`` holds autotuning picks for this cell's model and setting; with
    ``device_name``, picks benchmarked on that device: Inductor keys each file by the system (the
    GPU's name among it), so the H200's picks do not seed an H100's compile, and a cell given them
    is cold, not seeded.  A file whose system cannot be read counts as a match."""
    folder = os.path.join(picks, cache_name(cell))
    if device_name is None:
        return has_files(folder)
    return (any(name in (device_name, None) for name in _picks_devices(folder))
            or has_files(os.path.join(folder, CONFIGS_SUBDIR, device_folder(device_name))))


def _picks_devices(folder: str) -> set[str | None]:
    """The device names of the picks files under ``folder`` (select_algorithm's PersistentCache
    writes ``{"system": {"device": {"name": ...}, ...}, ...}``); None for a file not of that shape."""
    names: set[str | None] = set()
    for root, dirs, files in os.walk(folder):
        if root == folder and CONFIGS_SUBDIR in dirs:
            dirs.remove(CONFIGS_SUBDIR)  # Triton kernels' picks, one folder per GPU: has_picks reads those
        for name in files:
            try:
                with open(os.path.join(root, name)) as f:
                    names.add(json.load(f)["system"]["device"]["name"])
            except (OSError, ValueError, KeyError, TypeError):
                names.add(None)
    return names


def seed_picks(picks: str, cell: dict, cache_dir: str, device_name: str | None = None) -> None:
    """Copy the saved picks of the cell's model and setting into its (empty) cache directory, so its
    first cell compiles with them instead of benchmarking every matmul choice, and every Triton
    kernel's configs, again.  Picks of another torch or triton on the same GPU sit in a file, or
    under a key, Inductor does not read there: that cell autotunes as a cold one does, which its
    ``autotune_s`` shows (another GPU's picks are not seeded: ``has_picks``; its Triton configs sit in
    another folder)."""
    folder = os.path.join(picks, cache_name(cell))
    shutil.copytree(folder, os.path.join(cache_dir, PICKS_SUBDIR), dirs_exist_ok=True,
                    ignore=lambda root, names: [CONFIGS_SUBDIR] if root == folder else [])
    configs = os.path.join(folder, CONFIGS_SUBDIR, device_folder(device_name)) if device_name else None
    if configs and os.path.isdir(configs):
        shutil.copytree(configs, cache_dir, dirs_exist_ok=True)


def save_picks(picks: str, cell: dict, cache_dir: str, device_name: str | None = None) -> None:
    """Copy the cache directory's picks (what the cell benchmarked, and what it was seeded with) to
    ``picks``, where a later run, on a fresh machine too, starts from them; with ``device_name``, the
    Triton kernels' picks too."""
    src, folder = os.path.join(cache_dir, PICKS_SUBDIR), os.path.join(picks, cache_name(cell))
    if has_files(src):
        shutil.copytree(src, folder, dirs_exist_ok=True)
    for path in best_configs(cache_dir) if device_name else []:
        to = os.path.join(folder, CONFIGS_SUBDIR, device_folder(device_name), os.path.relpath(path, cache_dir))
        os.makedirs(os.path.dirname(to), exist_ok=True)
        shutil.copyfile(path, to)


def best_configs(cache_dir: str) -> list[str]:
    """Every Triton kernel's ``.best_config`` under an Inductor cache directory."""
    return sorted(os.path.join(root, name) for root, _, files in os.walk(cache_dir)
                  for name in files if name.endswith(BEST_CONFIG))


def has_files(path: str) -> bool:
    return any(files for _, _, files in os.walk(path))

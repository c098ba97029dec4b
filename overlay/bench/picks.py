"""``bench --picks``: a folder of autotuning picks (which matmul choice won for which shape), one
subfolder per model and setting, seeded into a model's first cell and saved after each."""
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
    return any(name in (device_name, None) for name in _picks_devices(folder))


def _picks_devices(folder: str) -> set[str | None]:
    """The device names of the picks files under ``folder`` (select_algorithm's PersistentCache
    writes ``{"system": {"device": {"name": ...}, ...}, ...}``); None for a file not of that shape."""
    names: set[str | None] = set()
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                with open(os.path.join(root, name)) as f:
                    names.add(json.load(f)["system"]["device"]["name"])
            except (OSError, ValueError, KeyError, TypeError):
                names.add(None)
    return names


def seed_picks(picks: str, cell: dict, cache_dir: str) -> None:
    """Copy the saved picks of the cell's model and setting into its (empty) cache directory, so its
    first cell compiles with them instead of benchmarking every matmul choice again.  Picks of another
    torch or triton on the same GPU sit in a file Inductor does not read there: that cell autotunes as
    a cold one does, which its ``autotune_s`` shows (another GPU's picks are not seeded: ``has_picks``)."""
    shutil.copytree(os.path.join(picks, cache_name(cell)), os.path.join(cache_dir, PICKS_SUBDIR), dirs_exist_ok=True)


def save_picks(picks: str, cell: dict, cache_dir: str) -> None:
    """Copy the cache directory's picks (what the cell benchmarked, and what it was seeded with) to
    ``picks``, where a later run, on a fresh machine too, starts from them."""
    src = os.path.join(cache_dir, PICKS_SUBDIR)
    if has_files(src):
        shutil.copytree(src, os.path.join(picks, cache_name(cell)), dirs_exist_ok=True)


def has_files(path: str) -> bool:
    return any(files for _, _, files in os.walk(path))

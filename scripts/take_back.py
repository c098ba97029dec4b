"""Takes what one call of scripts/device_call.sh brought back into the repository, before the next call.

    python scripts/take_back.py FILES_AT RESUME.json --note TEXT [--picks docs/results/picks]

A device box can go back between two calls; the next call then starts a fresh box, which resumes
from the committed ``RESUME`` file, not from the lane file the last call left on the lost box. So
what a call brought back belongs in ``RESUME`` before the next call starts, and this does it in one
step: it copies the call's lane file (``FILES_AT/cuda-*-part1of1.json``) over ``RESUME``, appends
``# NOTE`` and the call's log to ``RESUME``'s ``.txt``, and copies the model folders of
``picks.tgz`` (the autotuning picks) into ``--picks``, printing which are new or changed.

It refuses, in one line with exit 2 and nothing changed, a lane file that lacks a process ``RESUME``
holds: that call resumed from something else (an older committed file, on a fresh box), and copying
it over would lose measured cells; keep it under another name instead.
"""
from __future__ import annotations

import filecmp
import glob
import os
import shutil
import tarfile
import tempfile

from inductor_ablate.bench.report import process_fingerprint
from inductor_ablate.bench.runner import read_results_file
from inductor_ablate.errors import OneLineParser, UsageError, run_script


def lane_files(files_at: str) -> tuple[str, str | None, str | None]:
    """The call's lane file, its log (or None) and its picks tarball (or None)."""
    if not os.path.isdir(files_at):
        raise UsageError(f"{files_at}: no such folder (give the folder the device call's files are in)")
    lanes = sorted(glob.glob(os.path.join(files_at, "cuda-*-part1of1.json")))
    if len(lanes) != 1:
        raise UsageError(f"{files_at}: {len(lanes)} lane files (cuda-*-part1of1.json); expected the one of a call of one GPU")
    log = lanes[0][:-len(".json")] + ".log"
    picks = os.path.join(files_at, "picks.tgz")
    return lanes[0], log if os.path.isfile(log) else None, picks if os.path.isfile(picks) else None


def lost_processes(lane_cells: list[dict], resume_cells: list[dict]) -> int:
    """How many of the ``RESUME`` file's processes the lane file does not hold (0: it resumed from
    that file or from a later state of it)."""
    held = {process_fingerprint(c) for c in lane_cells}
    return sum(process_fingerprint(c) not in held for c in resume_cells)


def unpack_picks(tgz: str, into: str) -> str:
    """Unpacks the tarball into ``into`` and returns the folder that holds the model folders
    (``results/picks`` as device_call.sh packs it); an unreadable tarball, or a member absolute or
    climbing out, is refused before anything is copied."""
    try:
        with tarfile.open(tgz) as tar:
            names = [m.name for m in tar.getmembers()]
            if not names or any(n.startswith("/") or ".." in n.split("/") for n in names):
                raise UsageError(f"{tgz}: not a picks tarball of device_call.sh (empty, or a path outside its folder)")
            tar.extractall(into, filter="data")
    except tarfile.TarError as exc:
        raise UsageError(f"{tgz}: not a readable tarball ({str(exc).splitlines()[0].rstrip(':')})") from None
    return os.path.join(into, os.path.commonpath(names))


def copy_picks(src_root: str, dest: str) -> list[str]:
    """Copies the model folders of ``src_root`` into ``dest``; returns 'new FOLDER' / 'changed FOLDER' lines."""
    changes = []
    for folder in sorted(os.listdir(src_root)):
        src, dst = os.path.join(src_root, folder), os.path.join(dest, folder)
        if not os.path.isdir(src):
            continue
        if not os.path.isdir(dst):
            changes.append(f"new {folder}")
        else:
            compared = filecmp.dircmp(src, dst)
            if not (compared.diff_files or compared.left_only):
                continue
            changes.append(f"changed {folder}")
        shutil.copytree(src, dst, dirs_exist_ok=True)
    return changes


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="scripts/take_back.py", description=__doc__.split("\n\n")[0])
    p.add_argument("files_at", help="the folder the device call's files were copied to")
    p.add_argument("resume", help="the committed lane file the call resumed (RESUME=), written over")
    p.add_argument("--note", required=True, help="the header of the log appended to RESUME's .txt: the date, the call, its command")
    p.add_argument("--picks", default="docs/results/picks", help="where the picks folders are kept (SEED_PICKS=)")
    args = p.parse_args(argv)
    lane, log, picks = lane_files(args.files_at)
    if not args.resume.endswith(".json"):
        raise UsageError(f"{args.resume}: expected the .json lane file (its log goes to the .txt beside it)")
    lane_cells = read_results_file(lane)["cells"]
    resume_cells = read_results_file(args.resume)["cells"] if os.path.exists(args.resume) else []
    if resume_cells and filecmp.cmp(lane, args.resume, shallow=False):
        print(f"{args.resume}: already this call's lane file; nothing done")
        return 0
    lost = lost_processes(lane_cells, resume_cells)
    if lost:
        raise UsageError(f"{lane} lacks {lost} process(es) that {args.resume} holds: the call resumed from something "
                         f"else (a fresh box, from an older file); keep it under another name, nothing copied")
    if picks and not os.path.isdir(args.picks):
        raise UsageError(f"--picks {args.picks}: no such folder")
    with tempfile.TemporaryDirectory() as tmp:
        unpacked = unpack_picks(picks, tmp) if picks else None  # checked before anything is written
        shutil.copyfile(lane, args.resume)
        with open(args.resume[:-len(".json")] + ".txt", "a") as f:
            f.write(f"\n# {args.note}\n")
            if log:
                with open(log) as src:
                    f.write(src.read())
        print(f"{args.resume}: {len(resume_cells)} -> {len(lane_cells)} cells; log {'appended' if log else 'missing (note only)'}")
        changes = copy_picks(unpacked, args.picks) if unpacked else ["no picks.tgz"]
        for line in changes or ["no model folder new or changed"]:
            print(f"picks: {line}")
    return 0


if __name__ == "__main__":
    run_script(main, "take_back.py")

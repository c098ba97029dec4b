"""``bench --launcher local|slurm``: the same study spread over jobs through submitit, then merged.

``slurm`` submits one job per model as a job array (a model's cells in sequence in one job, so they
share its autotuning); ``local`` runs one job per GPU of this machine (one on CPU), each taking whole
models as ``--total-partitions N --partition-id K`` does.  Each job is a plain ``bench`` writing its
own part file under ``<results>.jobs/``; a part file resumes, so a job that timed out or was
preempted (requeued by submitit's checkpointing) or a second run of the same command goes on where it
stopped and loses no measured cell.  The parts are merged into the one results file at the end."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ..errors import UsageError

#: bench's own options that name what the launcher decides per job (or the launcher itself)
LAUNCH_OPTIONS = {"--launcher": 1, "--slurm-partition": 1, "--gpus-per-job": 1, "--cpus-per-job": 1, "--time": 1,
                  "--json": 1, "--models": 1, "--total-partitions": 1, "--partition-id": 1, "--shard": 1,
                  "--no-progress": 0, "--fresh": 0}


def job_argv(argv: list[str], **options) -> list[str]:
    """``argv`` (bench's) without the launcher's options, plus one job's ``options``."""
    out, skip = [], 0
    for item in argv:
        if skip:
            skip -= 1
            continue
        name = item.split("=", 1)[0]
        if name in LAUNCH_OPTIONS:
            skip = LAUNCH_OPTIONS[name] if "=" not in item else 0
            continue
        out.append(item)
    for key, value in options.items():
        out += [f"--{key.replace('_', '-')}", str(value)]
    return out + ["--no-progress"]


class BenchJob:
    """One job: ``python -m inductor_ablate bench ARGV``.  On a time limit or preemption submitit
    calls ``checkpoint`` and submits the same job again, which resumes its part file.  ``cores``: the
    CPUs the job keeps to (``--launcher local``: the machine's split between its GPUs' jobs, so that
    one job's compiles never run on the core another job times on)."""

    def __init__(self, cores: list[int] | None = None):
        self.cores = cores

    def __call__(self, argv: list[str]) -> int:
        if self.cores:
            os.sched_setaffinity(0, self.cores)  # the bench and its cells inherit it
        rc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bench", *argv]).returncode
        if rc not in (0, 1):  # 1: every cell ran, some with an error row (a result, kept in the file)
            raise RuntimeError(f"bench exited {rc}")
        return rc

    def checkpoint(self, argv: list[str]):
        import submitit

        return submitit.helpers.DelayedSubmission(BenchJob(self.cores), argv)


def _submitit():
    try:
        import submitit
    except ImportError:
        raise UsageError("--launcher needs submitit: pip install 'inductor_ablate[cluster]' (or pip install "
                         "submitit)") from None
    return submitit


def slurm_partitions() -> list[str]:
    """The partitions the Slurm controller answers with; a UsageError where none answers."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        raise UsageError("--launcher slurm: no Slurm here (sinfo and sbatch not found); use --launcher local, or "
                         "run on a cluster's login node")
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise UsageError("--launcher slurm: no Slurm controller answered within 30 s (sinfo)") from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
        raise UsageError(f"--launcher slurm: no Slurm controller answers (sinfo: {why})")
    return sorted({line.strip() for line in proc.stdout.splitlines() if line.strip()})


def check(args, device: str) -> None:
    """Everything a launch needs, checked before anything is submitted."""
    if args.launcher is None:
        for option in ("slurm_partition", "gpus_per_job", "cpus_per_job", "time"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option.replace('_', '-')} goes with --launcher")
        return
    _submitit()
    if args.shard != (1, 1) or args.estimate is not None:
        raise UsageError(f"--launcher {args.launcher} decides each job's share itself: give it no --shard, "
                         "--total-partitions or --estimate")
    for option in ("gpus_per_job", "cpus_per_job", "time"):
        value = getattr(args, option)
        if value is not None and value < (0 if option == "gpus_per_job" else 1):
            raise UsageError(f"--{option.replace('_', '-')} {value}: expected {0 if option == 'gpus_per_job' else 1} "
                             "or more")
    if args.launcher == "slurm":
        partitions = slurm_partitions()
        if args.slurm_partition is not None and args.slurm_partition not in partitions:
            raise UsageError(f"--slurm-partition {args.slurm_partition}: Slurm has no such partition (it has: "
                             f"{', '.join(partitions) or 'none'})")
    elif args.slurm_partition is not None:
        raise UsageError("--slurm-partition goes with --launcher slurm")


def _gpus(device: str) -> int:
    if not device.startswith("cuda"):
        return 0
    import torch

    return torch.cuda.device_count()


def launch(args, argv: list[str], models: list[str], device: str, path: str, merge) -> int:
    """Submit, wait, merge into ``path`` (``merge``: bench's merge command's main).  Exit 0 when every
    job finished, 1 when one failed (its part file keeps what it measured; run the command again)."""
    submitit = _submitit()
    folder = path + ".jobs"
    if args.fresh:  # here, not in each job: a job submitted again after a time limit must resume
        shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "logs"), exist_ok=True)
    cuda = device.startswith("cuda")
    if args.launcher == "slurm":
        executor = submitit.AutoExecutor(folder=os.path.join(folder, "logs"), cluster="slurm")
        params = dict(timeout_min=args.time or 60, gpus_per_node=(args.gpus_per_job if args.gpus_per_job is not None
                                                                  else 1 if cuda else 0), nodes=1, tasks_per_node=1)
        if args.cpus_per_job:
            params["cpus_per_task"] = args.cpus_per_job
        if args.slurm_partition:
            params["slurm_partition"] = args.slurm_partition
        executor.update_parameters(name="inductor_ablate", **params)
        parts = {m: os.path.join(folder, f"part-{m}.json") for m in models}
        argvs = [job_argv(argv, models=m, json=p) for m, p in parts.items()]
        try:
            jobs = executor.map_array(BenchJob(), argvs)
        except Exception as exc:  # sbatch refused the array: one line, nothing measured yet
            raise UsageError(f"--launcher slurm: sbatch refused the jobs ({str(exc).strip().splitlines()[-1]})") from None
        print(f"submitted {len(jobs)} Slurm jobs (array {jobs[0].job_id.split('_')[0]}), one per model; "
              f"logs: {folder}/logs", flush=True)
    else:
        lanes = max(1, _gpus(device))
        if args.gpus_per_job not in (None, 1) and cuda:
            raise UsageError("--launcher local runs one job per GPU: --gpus-per-job takes 1 there")
        parts = {k: os.path.join(folder, f"part-{k}of{lanes}.json") for k in range(lanes)}
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        share = len(cores) // lanes
        jobs = []
        for k, part in parts.items():
            executor = submitit.AutoExecutor(folder=os.path.join(folder, "logs"), cluster="local")
            executor.update_parameters(timeout_min=args.time or 24 * 60, gpus_per_node=1 if cuda else 0,
                                       **({"visible_gpus": [k]} if cuda else {}))
            job = BenchJob(cores[k * share:(k + 1) * share] if cuda and lanes > 1 and share else None)
            jobs.append(executor.submit(job, job_argv(argv, models=",".join(models), json=part,
                                                             total_partitions=lanes, partition_id=k)))
        print(f"started {lanes} local job(s), {'one per GPU' if cuda else 'on the CPU'}; logs: {folder}/logs",
              flush=True)
    failed = []
    for job in jobs:
        try:
            job.result()
        except Exception as exc:  # a failed or timed-out job: its part file keeps its cells
            last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
            failed.append(f"job {job.job_id}: {last}")
    done = [p for p in parts.values() if os.path.exists(p)]
    for line in failed:
        print(f"failed: {line} (logs: {folder}/logs)")
    if not done:
        print("no job wrote a results file; nothing merged")
        return 1
    rc = merge([*done, "--json", path])
    if failed:
        print(f"{len(failed)} job(s) failed; the same command again resumes them from their part files")
    return 1 if failed else rc

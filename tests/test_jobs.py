"""``bench --jobs N``: cells compile side by side while one at a time has the device (devicelock).
On CPU with real Inductor compiles: the overlapped run generates the very code of the serial one,
no two cells ever time at once, and a model's rows start only after its `all`."""
import itertools
import json
import multiprocessing
import os
import time

from test_bench import SUITE, bench

from inductor_ablate.bench.devicelock import DeviceLock


def _cells(path):
    with open(path) as f:
        return {(c["model"], c["config"]): c for c in json.load(f)["cells"]}


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_jobs_overlap_compiles_keep_timing_to_one_cell_and_change_no_code(tmp_path):
    args = ("bench", "--suite", SUITE, "--models", "tiny,tiny2", "--configs", "all,no-inlining,no-fusion",
            "--repeat", "3")
    serial, overlapped = tmp_path / "serial.json", tmp_path / "overlapped.json"
    proc = bench(*args, "--json", str(serial), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = bench(*args, "--jobs", "3", "--json", str(overlapped), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--jobs 3 on CPU" in proc.stderr and "waiting for the device" in proc.stdout
    assert "the cells that finished had the device " in proc.stdout, proc.stdout
    one, many = _cells(serial), _cells(overlapped)
    assert set(one) == set(many) and len(many) == 6
    assert {k: c["code_hash"] for k, c in one.items()} == {k: c["code_hash"] for k, c in many.items()}
    assert json.load(open(overlapped))["meta"]["jobs"] == 3 and json.load(open(serial))["meta"]["jobs"] == 1
    rows = list(many.values())
    for a, b in itertools.combinations(rows, 2):  # the device to one cell at a time
        assert not _overlap(a["timed_at"], b["timed_at"]), (a["model"], a["config"], b["model"], b["config"])
    assert any(_overlap(a["ran_at"], b["ran_at"]) for a, b in itertools.combinations(rows, 2))  # side by side
    for model in ("tiny", "tiny2"):  # a model's rows reuse its `all`'s caches: they start once it ended
        lead = many[(model, "all")]
        assert lead["cache"] == "cold"
        for config in ("no-inlining", "no-fusion"):
            assert many[(model, config)]["ran_at"][0] >= lead["ran_at"][1] - 0.01
            assert many[(model, config)]["cache"] == "warm"
    # each compile took the device back for its own device work (freezing, the compiled graph's first run)
    assert all(c["compile_holds"] >= 1 and c["wait_s"] >= 0 for c in rows)
    assert all("wait_s" not in c for c in one.values())
    # one lock: no two cells had the device at once, so the seconds they held it fit in the run's wall
    assert all(c["held_s"] > 0 for c in rows)
    assert sum(c["held_s"] for c in rows) <= json.load(open(overlapped))["meta"]["wall_s"]
    assert all(abs(c["autotune_templates_s"] + c["autotune_configs_s"] - c["autotune_s"]) < 0.002 for c in rows)
    proc = bench("report", "--markdown", "--table", "cost", str(overlapped), str(serial), tmp_path=tmp_path)
    lines = [line for line in proc.stdout.splitlines() if " | cpu | " in line]  # one table, a row per run
    assert proc.returncode == 0 and proc.stdout.count("| results | device |") == 1, proc.stdout
    assert [line.split(" | ")[:4] for line in lines] == [
        [f"| {overlapped.name}", "cpu", "3", "6"], [f"| {serial.name}", "cpu", "1", "6"]], proc.stdout


def _hold(path, seconds, ready, released=None):
    lock = DeviceLock(path)
    with lock.hold():
        ready.set()
        time.sleep(seconds)
        if released is not None:
            released.value = time.time()


def test_a_compile_waits_for_the_device_only_to_benchmark(tmp_path):
    """Another process holds the device for 1.5 s.  A compiling cell goes on with what needs no
    device at once; Inductor's benchmarker (autotuning) waits for the device, and the wait is
    counted.  And a cell that compiles lets go of the device it held, so another can time."""
    from torch._inductor.runtime.benchmarking import benchmarker

    path = str(tmp_path / "device.lock")
    ctx = multiprocessing.get_context("spawn")
    ready, released = ctx.Event(), ctx.Value("d", 0.0)
    lock = DeviceLock(path)
    with lock.compiling():
        other = ctx.Process(target=_hold, args=(path, 1.5, ready, released))
        other.start()
        assert ready.wait(60)
        t0 = time.perf_counter()
        sum(range(1000))  # compiling: no device needed, no wait
        free = time.perf_counter() - t0
        benchmarker.benchmark_cpu(lambda: sum(range(100)), warmup=1, rep=1)
        benched = time.time()
    other.join()
    assert free < 0.5 and benched >= released.value > 0, (free, benched, released.value)
    assert lock.wait_s >= 0.5 and lock.bench_wait_s == lock.wait_s and lock.compile_holds == 1
    # the other way round: this process holds the device, then compiles; the other one gets it meanwhile
    ready = ctx.Event()
    with lock.hold():
        other = ctx.Process(target=_hold, args=(path, 0.1, ready))
        other.start()
        assert not ready.wait(1.0)  # held here: it waits
        with lock.compiling():
            assert ready.wait(60)  # compiling here: it got the device
        other.join()
    assert lock.depth == 0 and lock.fd is None and os.path.exists(path)


def test_default_jobs_and_the_timing_core():
    """CPU: one cell at a time (compiles would take the cores it is timed on).  CUDA: from this
    process's cores and the memory, 1 to 4; with 2+ jobs the timing cell gets a core no compile uses."""
    from inductor_ablate.bench.runner import _cores, default_jobs

    assert default_jobs("cpu") == 1 and 1 <= default_jobs("cuda") <= 4
    assert _cores("cuda", 1) == {} and _cores("cpu", 4) == {}
    cores = sorted(os.sched_getaffinity(0))
    split = _cores("cuda", 2)
    if len(cores) >= 4:
        assert split["timing_cores"] == cores[:1] and split["compile_cores"] == cores[1:]
    else:
        assert split == {}

"""One (model, config) cell, run in a fresh process.

Inductor's cache directory (autotuning results, compiled kernels) may be shared with the model's
other cells; FX-graph and AOTAutograd artifacts always go to the cell's own directory, so no cell
ever reuses another's compiled graph and every compile time is a real compile.

Compiles the model under the config, checks the output (and, in training, the gradients) against
eager, then times eager and compiled calls *interleaved* in the same process, so drift in the
machine's speed hits both sides of the speedup ratio alike.
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import math
import os
import re
import statistics
import time
import traceback
from unittest import mock

import torch
from torch.utils._pytree import tree_map

import inductor_ablate
import torch._inductor.config as inductor_config
from inductor_ablate import decisions
from inductor_ablate.kernel_census import recording, summarize

from ..rows import all_inductor, by_name, region_label
from ..records import Cell
from .devicelock import DeviceLock
from .models import load_suite
from .steady import steady_pairs, waited

TOLERANCE = {"float32": 2e-3, "bfloat16": 5e-2, "float16": 2e-2}


def _rel_error(actual, expected) -> float:
    worst = 0.0
    for a, e in zip(torch.utils._pytree.tree_leaves(actual), torch.utils._pytree.tree_leaves(expected)):
        if not isinstance(e, torch.Tensor) or not e.is_floating_point():
            continue
        a, e = a.detach().float(), e.detach().float()
        if not torch.isfinite(a).all() and torch.isfinite(e).all():
            return math.inf
        scale = e.abs().max().clamp_min(1e-6)
        worst = max(worst, ((a - e).abs().max() / scale).item())
    return worst


class UncheckableStep(Exception):
    """Eager's step gives nothing but zeros, so comparing a compiled step with it checks nothing."""


def require_checkable(expected, model_name: str) -> None:
    """Refuse a model whose eager step (output, and gradients in training) is all zeros.  Its output
    does not depend on what the layers compute (torchvision's ViT-B/16 starts with a zero-initialized
    classifier head), so every config, a wrong one too, would pass the accuracy check."""
    leaves = [t for t in torch.utils._pytree.tree_leaves(expected)
              if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()]
    if leaves and not any(bool(t.detach().ne(0).any()) for t in leaves):
        raise UncheckableStep(f"{model_name}: eager's step gives only zeros (output{' and gradients' if len(leaves) > 1 else ''}), "
                              f"so the accuracy check could not tell a wrong answer from a right one; "
                              f"give the model weights that make its output non-zero")


#: A low-precision cell whose compiled step misses eager by more than TOLERANCE still passes when,
#: against the step in float64 (same weights and inputs), it is off by at most this many times
#: eager's own error: both round differently, and neither is the truth (torch's benchmarks' fp64_ref).
FP64_MARGIN = 2.0


def _float64_step(model, inputs, loss_fn, mode):
    """The step with the model's own (low-precision) weights and inputs, computed in float64."""
    ref_model = copy.deepcopy(model).to(torch.float64)
    ref_inputs = tuple(t.detach().to(torch.float64).requires_grad_(t.requires_grad)
                       if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs)
    return _step(ref_model, ref_inputs, loss_fn, mode)


def accuracy(actual, expected, dtype: str, reference=None) -> dict:
    """The accuracy fields of a row, and its failure message if it fails.  ``reference()`` gives the
    float64 step; it is asked for only when a low-precision cell misses eager."""
    tol = TOLERANCE[dtype]
    out = {"rel_error": _rel_error(actual, expected)}
    if out["rel_error"] <= tol:
        return out
    if dtype in ("bfloat16", "float16") and reference is not None:
        ref = reference()
        out.update(rel_error_fp64=_rel_error(actual, ref), eager_rel_error_fp64=_rel_error(expected, ref))
        if out["rel_error_fp64"] <= max(tol, FP64_MARGIN * out["eager_rel_error_fp64"]):
            return out
        out["message"] = (f"max relative error {out['rel_error']:.3g} > {tol:g} against eager, and "
                          f"{out['rel_error_fp64']:.3g} against float64, over {FP64_MARGIN:g}x eager's "
                          f"{out['eager_rel_error_fp64']:.3g}")
    else:
        out["message"] = f"max relative error {out['rel_error']:.3g} > {tol:g}"
    return out


def follows_inputs(model, compiled, inputs, loss_fn, mode: str, dtype: str) -> str | None:
    """None when the compiled step follows its inputs: with every floating input changed in place
    (same tensors, so no recompile and CUDA graphs replay), it still matches eager.  Else why not.
    A compile can fold an input into a constant: freezing does so with an input marked static
    (``mark_static_address``), and on an H100 such a run "sped up" a pointwise chain 100x by
    returning the output it computed at compile time.  Inference only (training inputs are leaves
    that need gradients); inputs as they were afterwards."""
    floats = [t for t in inputs if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if mode != "inference" or not floats:
        return None
    saved = [t.clone() for t in floats]
    try:
        with torch.no_grad():
            for t in floats:
                t.mul_(0.5).add_(0.25)
        expected = tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, _step(model, inputs, loss_fn, mode))
        actual = _step(compiled, inputs, loss_fn, mode)
        miss = accuracy(actual, expected, dtype, lambda: _float64_step(model, inputs, loss_fn, mode)).get("message")
    finally:
        with torch.no_grad():
            for t, s in zip(floats, saved):
                t.copy_(s)
    return f"the compiled step does not follow its inputs (changed in place): {miss}" if miss else None


_KERNEL_NAME = re.compile(r"\b(?:cpp|triton|cuda|extern)_\w*?fused\w*\b|\b(?:triton|cpp)_(?:poi|red|per|tem|spl)_\w+\b")
_HASH_ID = re.compile(r"\b[a-z0-9]{50,}\b")  # code-cache names derived from a source hash
_ADDRESS = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*[a-f])[0-9a-f]{10,16}\b")  # e.g. a frozen param's data_ptr
_PATH = re.compile(r"(?:/[\w.+-]+)+/[\w.+-]+\.(?:py|so|cpp|h|cubin|ptx|json|bin)\b")


@contextlib.contextmanager
def output_codes():
    """Yields a list that receives each graph's output code Inductor generates inside the block:
    what ``code_hash`` hashes (a cell's and ``scripts/model_latency.py``'s alike)."""
    from torch._inductor.graph import GraphLowering

    codes: list[str] = []
    with mock.patch.object(GraphLowering, "save_output_code", codes.append):
        yield codes


def code_hash(codes: list[str], cache_dir: str = "") -> str:
    """One hash of everything Inductor generated (every graph's output code, kernels inside), with
    what differs between identical compiles normalized: kernel names (numbered by appearance), file
    paths, the cell's cache directory, hash-derived identifiers and memory addresses (comments on
    frozen parameters).  Equal hashes: same code."""
    names: dict[str, str] = {}
    digest = hashlib.sha256()
    for code in codes:
        if cache_dir:
            code = code.replace(cache_dir, "<cache>")
        code = _PATH.sub("<path>", code)
        code = _HASH_ID.sub("<hash>", code)
        code = _ADDRESS.sub("<address>", code)
        code = _KERNEL_NAME.sub(lambda m: names.setdefault(m.group(0), f"<kernel{len(names)}>"), code)
        digest.update(code.encode())
    return digest.hexdigest()[:16]


def fusions_by_kind(log_path: str) -> dict[str, int]:
    """The scheduler fusions made, counted by kind (vertical, epilogue, ...), from a decision log."""
    made: dict[str, int] = {}
    for record in decisions.read_log(log_path, "fusion"):
        if record["result"] == "fused":
            made[record["kind"]] = made.get(record["kind"], 0) + 1
    return dict(sorted(made.items()))


def _step(model, inputs, loss_fn, mode):
    """One inference call, or one training step (forward + backward, no optimizer), as in the paper."""
    if mode == "inference":
        with torch.no_grad():
            return model(*inputs)
    model.zero_grad(set_to_none=True)
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.requires_grad:
            t.grad = None
    out = model(*inputs)
    loss_fn(out).backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return [out.detach()] + grads + [t.grad for t in inputs if isinstance(t, torch.Tensor) and t.grad is not None]


def arriving_steps(device: str, model, compiled, inputs, loss_fn, mode: str, graphs_copy: bool):
    """(eager step, compiled step, how the compiled step's inputs arrive): on CUDA every timed step
    receives its inputs by one device copy, as a served model receives each request.

    A CUDA graph copies each input that is not a parameter into its own buffer before it replays;
    on a one-kernel model over a large input that copy was half the step, and eager, timed over
    inputs already in place, paid none: `no-cudagraphs` read 2x faster than `all` on the embedded
    suite (issue 66).  Marking the inputs static would spare the graph its copy, but freezing then
    folds them into constants (archive/results/h100-main-command-static-inputs-folded.json).  So
    each step pays the same one copy: the graph's own where its graphs copy (``graphs_copy``:
    Inductor counted inputs its recorded graphs copy), else the harness's, into the very
    tensors the step reads (the same values, so outputs do not change).  CPU: no copy, no graphs."""
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    eager = lambda: _step(model, inputs, loss_fn, mode)  # noqa: E731
    plain = lambda: _step(compiled, inputs, loss_fn, mode)  # noqa: E731
    if not device.startswith("cuda") or not tensors:
        return eager, plain, None
    requests = [t.detach().clone() for t in tensors]

    def arrive():
        with torch.no_grad():
            torch._foreach_copy_(tensors, requests)

    def copied(step):
        return lambda: (arrive(), step())[1]
    return copied(eager), (plain if graphs_copy else copied(plain)), ("cudagraph" if graphs_copy else "harness")


class _Timer:
    """CUDA: events around ``number`` calls; CPU: perf_counter.  Returns ms per call."""

    def __init__(self, device):
        self.cuda = device.startswith("cuda")

    def __call__(self, fn, number):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(number):
                fn()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end) / number
        t = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - t) * 1000 / number

    def calls_per_sample(self, *fns) -> int:
        """Calls per timed sample: enough for >= ~20 ms (CPU) / ~5 ms (CUDA) of the fastest of ``fns``."""
        one = min(min(self(fn, 3) for fn in fns) for _ in range(3))
        return max(3, min(1000, int((5.0 if self.cuda else 20.0) / max(one, 1e-3))))


#: dynamo_timed keys of autotuning: matmul/conv template choices compiled and benchmarked (while
#: Inductor lowers the graph, ``--picks``' PersistentCache saves them), Triton configs benchmarked at
#: a kernel's first run (the ``.best_config`` files beside the kernels).  Their total is the cell's
#: ``autotune_s``; ``autotune_templates_s`` and ``autotune_configs_s`` split it.
_TEMPLATE_KEY = re.compile(r"_template_(?:autotuning|precompiling)$")
_CONFIG_KEY = re.compile(r"^CachingAutotuner\.(?:benchmark_all_configs|coordinate_descent_tuning)$")


def _autotune_seconds() -> tuple[float, float]:
    """(template, Triton-config) autotuning seconds this process has spent so far."""
    from torch._dynamo.utils import compilation_time_metrics

    def total(key):
        return sum(sum(v) for k, v in compilation_time_metrics.items() if key.search(k))

    return total(_TEMPLATE_KEY), total(_CONFIG_KEY)


def autotune_fields(before: tuple[float, float], after: tuple[float, float], bench_wait_s: float) -> dict:
    """The row's autotuning seconds between two ``_autotune_seconds``, less the time its benchmarks
    waited for the device (``bench --jobs``).  Triton configs benchmark inside a compiled graph's
    first run, which holds the device throughout, so the waits are the templates' (any excess
    comes off the configs')."""
    templates, configs = (max(0.0, b - a) for a, b in zip(before, after))
    off_templates = min(templates, bench_wait_s)
    templates, configs = templates - off_templates, max(0.0, configs - (bench_wait_s - off_templates))
    return {"autotune_s": round(templates + configs, 3), "autotune_templates_s": round(templates, 3),
            "autotune_configs_s": round(configs, 3)}


def _own_graph_caches(artifact_dir: str):
    """FX-graph and AOTAutograd caches in the cell's own directory (they stay on, as the user set
    them; they just cannot hand this cell another cell's graph).  A torch without the directory hook
    gets both caches switched off instead."""
    import torch._functorch.config as functorch_config
    from torch._functorch._aot_autograd.autograd_cache import AOTAutogradCache
    from torch._inductor.codecache import FxGraphCache

    stack = contextlib.ExitStack()
    if hasattr(FxGraphCache, "_get_tmp_dir") and hasattr(AOTAutogradCache, "_get_tmp_dir"):
        fx, aot = os.path.join(artifact_dir, "fxgraph"), os.path.join(artifact_dir, "aotautograd")
        stack.enter_context(mock.patch.object(FxGraphCache, "_get_tmp_dir", staticmethod(lambda: fx)))
        stack.enter_context(mock.patch.object(AOTAutogradCache, "_get_tmp_dir", classmethod(lambda cls: aot)))
    else:
        stack.enter_context(inductor_config.patch(fx_graph_cache=False))
        stack.enter_context(functorch_config.patch(enable_autograd_cache=False))
    return stack


def _no_dropout_modules(model) -> None:
    """Every dropout module's probability set to 0 for a training step.  Dropout draws random numbers
    that eager and compiled code draw differently, so with it on no step could be checked against
    eager, stock `all` included (torchvision's MobileNetV3 has a Dropout(0.2) in its classifier).
    HF models are also built with the dropout of their configs at 0 (models._no_dropout)."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0


def step_leaf_names(model, inputs, mode: str, count: int) -> list[str]:
    """Names for the ``count`` leaves ``_step`` returned, in its order: the output, then (training)
    each parameter's gradient and each input's; numbered leaves when the output is several tensors."""
    names = ["output"]
    if mode == "training":
        names += [name for name, p in model.named_parameters() if p.grad is not None]
        names += [f"input {i}" for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.grad is not None]
    return names if len(names) == count else [f"leaf {i}" for i in range(count)]


def nudged_step(model, inputs, loss_fn, mode, seed: int):
    """Eager's step with every leaf module's floating output times (1 + u * N(0, 1)), u half its
    dtype's epsilon: how much the step's leaves move under rounding of that size."""
    generators = {}  # one per device the outputs lie on, each seeded alike: the CPU's draws stay the CPU's

    def nudge(module, args, out):
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            # drawn where the output lies: a CPU generator draws ~2e7 float64 normals a second, and a
            # GPU model's activations are billions of elements a draw (ConvNeXt-T at batch 64: 3.1e9)
            if out.device not in generators:
                generators[out.device] = torch.Generator(device=out.device).manual_seed(seed)
            noise = torch.randn(out.shape, generator=generators[out.device], dtype=torch.float64, device=out.device)
            return out * (1 + torch.finfo(out.dtype).eps / 2 * noise).to(out.dtype)  # in float64: float64's own ulp too
        return out

    hooks = [m.register_forward_hook(nudge) for m in model.modules() if not any(True for _ in m.children())]
    try:
        return [t.clone() for t in _step(model, inputs, loss_fn, mode)]
    finally:
        for hook in hooks:
            hook.remove()


def build_model(suite: str, name: str, device: str, dtype: str, mode: str):
    """(model, inputs, loss_fn) of a suite's model, in train mode for training, where floating
    inputs need gradients too (so parameter-free models train as well)."""
    model, inputs, loss_fn = load_suite(suite)[name](device, getattr(torch, dtype), mode)
    model.train(mode == "training")
    if mode == "training":
        _no_dropout_modules(model)
        inputs = tuple(t.detach().requires_grad_() if isinstance(t, torch.Tensor) and t.is_floating_point()
                       else t for t in inputs)
    return model, inputs, loss_fn


#: A profiled pass whose step time is off the timed samples' by more than this share is run again.
CLOSURE = 0.10
PROFILE_ATTEMPTS = 3


def _profile(task, run_eager, run_compiled, census, timed_ms: float, number: int) -> dict:
    """The cell's kernel profile over task["profile"] steps (inductor_ablate.profile), after timing,
    of the code that was timed (CUDA graphs where the row has them, same inputs and threads).  CPU:
    in samples interleaved with eager ones, as timed, and the same unprofiled just before, so the
    profile's own overhead is measured (``overhead``).  A pass whose step is more than CLOSURE off
    ``timed_ms`` runs again, up to PROFILE_ATTEMPTS in all; the closest is kept, with ``timed_ms``
    and ``attempts`` beside it, so explain can say when its split is scaled and by how much."""
    from inductor_ablate.profile import copy_bandwidth, profile_steps

    device = task["device"]
    t0 = time.perf_counter()
    step = run_compiled
    unprofiled, between = None, None
    steps = max(task["profile"], number)  # at least a timed sample's calls
    if not device.startswith("cuda"):
        # CPU: samples as the timing ran them, each after an eager sample (which leaves the caches
        # and OpenMP's threads as the timed samples found them), five samples' worth
        timer = _Timer(device)
        between, steps = run_eager, max(task["profile"], 5 * number)

        def sample():  # unprofiled, as the timing ran it: an eager sample, then the compiled one
            timer(between, number)
            return timer(step, number)
        unprofiled = statistics.median([sample() for _ in range(5)])
    best = None
    for attempt in range(1, PROFILE_ATTEMPTS + 1):
        out = profile_steps(step, steps, census, device, between, number)
        off = abs(out["step_ms"] - timed_ms) / timed_ms
        if best is None or off < best[0]:
            best = (off, out)
        if off <= CLOSURE:
            break
    out = best[1]
    out.update(timed_ms=timed_ms, attempts=attempt)
    if unprofiled is not None:
        out.update(unprofiled_ms=unprofiled, overhead=round(out["step_ms"] / unprofiled - 1, 4))
    out.update(copy_bandwidth(device))
    out["profile_s"] = round(time.perf_counter() - t0, 3)
    return out


def profile_fusions(log_path: str) -> list[dict]:
    """The fusions of the timed compile, for a profile: number, kind, Inductor's memory score and the
    FX nodes of both sides (``explain`` names the fusions a row undid by them, and ranks them).  Graphs numbered from 0, as the census does."""
    from inductor_ablate.profile import node_key

    records = decisions.read_log(log_path, "fusion")
    first = min((r["graph"] for r in records), default=0)
    return [{"n": r["n"], "kind": r["kind"], "result": r["result"], "score": r.get("score"),
             "nodes": sorted({node_key(r["graph"] - first, op.split(":", 1)[0]) for op in r["ops1"] + r["ops2"]})}
            for r in records]


def run_cell(task: dict) -> dict:
    """``task``: model, config, suite, device, dtype, mode, repeat, warmup, cache_dir (Inductor's,
    maybe shared), artifact_dir (the cell's own).  Returns the row."""
    row = {k: task[k] for k in ("model", "config", "suite", "device", "dtype", "mode", "cell_repeat", "base") if task.get(k) is not None}
    if "@" in task["config"]:  # a row scoped to a region (bench --regions): the region, by itself
        row["region"] = region_label(task["config"])
    cell_t0 = time.perf_counter()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = task["cache_dir"]
    device, mode = task["device"], task["mode"]
    lock = DeviceLock(task.get("device_lock"))
    if task.get("compile_cores"):  # bench --jobs on CUDA: compiles (and their workers) keep off the timing core
        os.sched_setaffinity(0, task["compile_cores"])
    try:
        lock._acquire()  # the device is this cell's but while Inductor compiles (devicelock)
        model, inputs, loss_fn = build_model(task["suite"], task["model"], device, task["dtype"], mode)
        settings, decision_log = _switch_on(task)
        expected = _step(model, inputs, loss_fn, mode)
        require_checkable(expected, task["model"])
        row["setup_s"] = round(time.perf_counter() - cell_t0 - lock.wait_s, 3)  # model, inputs, first eager call
        with inductor_config.patch(settings):
            compiled, actual, census = _compile(task, row, lock, model, inputs, loss_fn, decision_log)
            row.update(accuracy(actual, expected, task["dtype"], lambda: _float64_step(model, inputs, loss_fn, mode)))
            if "message" not in row:
                stale = follows_inputs(model, compiled, inputs, loss_fn, mode, task["dtype"])
                if stale:
                    row["message"] = stale
            if "message" in row:
                row["status"] = "accuracy"
                return row
            _time(task, row, model, inputs, loss_fn, compiled, census, decision_log)
    except Exception as exc:  # a broken cell is a visible row, not a crashed study
        row.update(status="error", message=f"{type(exc).__name__}: {exc}"[:500], traceback=traceback.format_exc()[-3000:])
    finally:
        while lock.depth:
            lock._release()
        if task.get("device_lock"):
            row.update(lock.fields())
        inductor_ablate.config.reset()
        os.environ.pop(decisions.LOG_ENV, None)
        row["cell_s"] = round(time.perf_counter() - cell_t0, 3)  # wall_s minus this: process start
        row["ran_at"] = [round(time.time() - row["cell_s"], 3), round(time.time(), 3)]  # when (bench --jobs overlaps cells)
    return Cell.from_dict(row, f"cell {row['model']}/{row['config']}").to_dict()  # the fields the readers take


def _switch_on(task: dict) -> tuple[dict, str]:
    """The row's switches on (exported: compile workers inherit them) and its Inductor settings, with
    the decision log's path: the log counts the fusions each kind makes (the kinds rows are read
    against it); it only observes: the code is stock's (tests/test_bisect.py), only the FX-cache key
    differs."""
    config = by_name(task["config"])
    base = by_name(task["base"]).inductor if task.get("base") else {}  # bench --base
    settings = {**all_inductor(task["device"], task["mode"], task.get("cpu_templates", False)), **base, **config.inductor}
    inductor_ablate.config.reset()
    inductor_ablate.config.update(**config.switches)
    os.environ.update(inductor_ablate.config.environ())
    decision_log = os.path.join(task["artifact_dir"], "decisions.jsonl")
    os.environ[decisions.LOG_ENV] = decision_log
    return settings, decision_log


def _compile(task, row, lock, model, inputs, loss_fn, decision_log):
    """The first compiled step, recorded: (compiled model, its output, the census); the row gets the
    compile and autotuning seconds, cache hits, code hash, fusions by kind and kernel counts."""
    from torch._dynamo.utils import counters

    compiled = torch.compile(model)
    t0 = time.perf_counter()
    tuned0 = _autotune_seconds()
    with recording(reset_dynamo=True) as sink, _own_graph_caches(task["artifact_dir"]), output_codes() as codes:
        with lock.compiling():
            actual = _step(compiled, inputs, loss_fn, task["mode"])
        if task["device"].startswith("cuda"):
            torch.cuda.synchronize()
    # bench --jobs: less the time this cell waited for the device while compiling
    row["compile_s"] = round(time.perf_counter() - t0 - lock.compile_wait_s, 3)
    row.update(autotune_fields(tuned0, _autotune_seconds(), lock.bench_wait_s))
    row["graph_cache_hits"] = counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]
    row["code_hash"], row["graphs_code"] = code_hash(codes, task["cache_dir"]), len(codes)
    row["fusions"] = fusions_by_kind(decision_log)
    census = summarize(sink)
    row.update(kernels=census.num_kernels, fused_nodes=census.fused_nodes, externs=len(census.externs),
               multi_op_kernels=len(census.multi_op_kernels()), fx_ops=census.fx_ops, graphs=census.graphs)
    # CPU: Inductor's compile workers must not share the cores with the timing below (on a small
    # machine they are often still starting up): shut them down first.  Not on CUDA, where the
    # shutdown took ~10 s per cell on the H200 box and idle workers cost no GPU time.
    if not task["device"].startswith("cuda"):
        from torch._inductor import async_compile

        getattr(async_compile, "shutdown_compile_workers", lambda: None)()
    return compiled, actual, census


def _time(task, row, model, inputs, loss_fn, compiled, census, decision_log) -> None:
    """Eager and compiled steps timed in interleaved samples (and profiled with ``--profile``).

    Both warm up, a sample is sized to >= ~20 ms (CPU) / ~5 ms (CUDA) of calls, then samples
    alternate.  Long samples matter on CPU: switching between eager and compiled code costs each
    side the other's OpenMP spin-wait, which one-call samples would measure.  A pair of samples
    during which the machine took the cores away is dropped and taken again (``steady``)."""
    mode = task["mode"]
    timer = _Timer(task["device"])
    if task.get("timing_cores"):
        os.sched_setaffinity(0, task["timing_cores"])
    from torch._dynamo.utils import counters

    for _ in range(task["warmup"]):  # by now the compiled step has recorded its CUDA graphs, if any
        _step(model, inputs, loss_fn, mode), _step(compiled, inputs, loss_fn, mode)
    # a cell is a process of its own, and eager records no graph: any count is the compiled step's
    graphs_copy = counters["inductor"]["cudagraph_recorded_non_static_inputs"] > 0
    run_eager, run_compiled, arrival = arriving_steps(task["device"], model, compiled, inputs, loss_fn, mode, graphs_copy)
    if arrival:
        row["input_arrival"] = arrival
    number = timer.calls_per_sample(run_compiled, run_eager)
    timing_t0 = time.perf_counter()

    def take_pair():  # an eager sample, then a compiled one, each with its threads' wait for a core
        (e, we), (c, wc) = waited(lambda: timer(run_eager, number)), waited(lambda: timer(run_compiled, number))
        return e, c, we, wc
    steady = steady_pairs(take_pair, task["repeat"])
    eager_ms, compiled_ms = steady["eager_ms"], steady["compiled_ms"]
    ratios = [e / c for e, c in zip(eager_ms, compiled_ms)]
    row.update(disturbed=steady["disturbed"], waited=steady["waited"], busy=steady["busy"])
    row["timing_s"] = round(time.perf_counter() - timing_t0, 3)
    row["timed_at"] = [round(time.time() - row["timing_s"], 3), round(time.time(), 3)]
    if task.get("profile"):
        fusions = profile_fusions(decision_log)
        row["profile"] = _profile(task, run_eager, run_compiled, census, statistics.median(compiled_ms), number)
        row["profile"]["fusions"] = fusions
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
    row.update(status="ok", eager_ms=statistics.median(eager_ms), compiled_ms=statistics.median(compiled_ms),
               speedup=statistics.median(eager_ms) / statistics.median(compiled_ms),
               speedup_p25=q[0], speedup_p75=q[2], samples=len(ratios), calls_per_sample=number,
               threads=torch.get_num_threads())

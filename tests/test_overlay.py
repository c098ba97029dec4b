"""The overlay as users meet it: start-up hook, import order, workers, bad input, strictness.

Each test runs a fresh interpreter, because what is under test is what happens at import.
"""
import os
import re
import sys
import textwrap
import traceback
import linecache

import pytest

from conftest import clean_env, run_py

# A compile whose stock C++ output is one loop nest; with fusion vetoed it becomes several.
PROGRAM = """
import torch, sys
from torch._inductor import metrics
from torch._inductor.utils import run_and_get_code
def f(x):
    return (x.sin() + 1.0).relu() * 2.0
x = torch.randn(64, 32)
metrics.reset()
out, code = run_and_get_code(torch.compile(f), x)
torch.testing.assert_close(out, f(x))
print("LOOP_NESTS", metrics.generated_kernel_count)
print("FUNCTIONS", len(__import__("re").findall(r"^cpp_\\w+ = ", code[0], __import__("re").M)))
print("LOADED", "inductor_ablate" in sys.modules)
"""
NO_CACHE = dict(TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")


def figures(stdout):
    return {k: v for k, v in re.findall(r"^(LOOP_NESTS|FUNCTIONS|LOADED) (\S+)", stdout, re.M)}


def test_env_var_works_on_an_unchanged_script():
    stock = figures(run_py(PROGRAM, env=clean_env(**NO_CACHE)).stdout)
    ablated = figures(run_py(PROGRAM, env=clean_env(INDUCTOR_ONE_KERNEL_PER_OP="1", **NO_CACHE)).stdout)
    assert stock == {"LOOP_NESTS": "1", "FUNCTIONS": "1", "LOADED": "False"}
    assert ablated["LOADED"] == "True"
    assert int(ablated["FUNCTIONS"]) == 4 and int(ablated["LOOP_NESTS"]) == 4  # sin, add, relu, mul


def test_without_switches_the_hook_touches_nothing():
    out = run_py("""
        import sys, torch
        import torch._inductor.choices as c
        print(getattr(sys, "_inductor_ablate_boot", None), "inductor_ablate" in sys.modules,
              "__inductor_ablate__" in c.InductorChoices.can_fuse.__code__.co_names,
              any(type(f).__name__ == "_Finder" for f in sys.meta_path))
    """).stdout.split()
    assert out == ["None", "False", "False", "False"]


@pytest.mark.parametrize("order", ["overlay_first", "inductor_first"])
def test_switches_take_effect_in_either_import_order(order):
    compile_once = "torch.compile(lambda t: t + 1)(torch.randn(4)); torch._dynamo.reset()"
    code = textwrap.dedent(f"""
        import torch
        {'import inductor_ablate' if order == 'overlay_first' else compile_once}
        import torch._inductor.choices, torch._inductor.codegen.cpp
        import inductor_ablate
        assert not [r for r in inductor_ablate.report() if r["state"] == "failed"], inductor_ablate.report()
        inductor_ablate.config.one_kernel_per_op = True
    """) + PROGRAM
    assert figures(run_py(code, env=clean_env(**NO_CACHE)).stdout)["FUNCTIONS"] == "4"


def test_compile_workers_run_the_hook(tmp_path):
    log = tmp_path / "workers.log"
    env = clean_env(INDUCTOR_NO_FUSE="1", INDUCTOR_ABLATE_DEBUG="1", TORCHINDUCTOR_COMPILE_THREADS="2",
                    TORCHINDUCTOR_WORKER_SUPPRESS_LOGGING="0", TORCHINDUCTOR_WORKER_LOGPATH=str(log),
                    TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    proc = run_py("""
        import os, torch
        from torch._inductor.async_compile import AsyncCompile
        AsyncCompile.warm_pool()
        torch.compile(lambda t: (t.sin() + 1).relu())(torch.randn(100))
        AsyncCompile.wait_pool_ready()
        print("PARENT", os.getpid())
    """, env=env)
    parent = re.search(r"PARENT (\d+)", proc.stdout).group(1)
    worker_pids = set(re.findall(r"start-up hook active in pid (\d+)", log.read_text())) - {parent}
    assert worker_pids, log.read_text()


def test_bad_value_fails_before_any_compile_and_spares_other_programs():
    env = clean_env(INDUCTOR_NO_FUSE="maybe", **NO_CACHE)
    # An unrelated program is not broken by the start-up hook...
    assert run_py("print('fine')", env=env).stdout.strip() == "fine"
    # ... but the first Inductor import (hence any compile) is.
    proc = run_py(PROGRAM, env=env, check=False)
    assert proc.returncode != 0 and "LOOP_NESTS" not in proc.stdout
    assert "INDUCTOR_NO_FUSE='maybe' is not valid" in proc.stderr and "vertical" in proc.stderr
    # Asking the overlay directly raises at once (uncaught: one line, exit 2, as any bad input).
    proc = run_py("import inductor_ablate\ntry:\n    inductor_ablate.install()\n"
                  "except inductor_ablate.SwitchValueError as e:\n    print('RAISED', e)", env=env, check=False)
    assert "RAISED INDUCTOR_NO_FUSE='maybe'" in proc.stdout, proc.stdout + proc.stderr
    proc = run_py("import inductor_ablate; inductor_ablate.install()", env=env, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("inductor_ablate: error: INDUCTOR_NO_FUSE='maybe'")


BROKEN_PATCH = """
    import warnings, torch, inductor_ablate
    from inductor_ablate import importhook
    from inductor_ablate.patcher import Patch
    bad = Patch.from_dict(dict(slug="moved-anchor", target="torch._inductor.choices",
                               qualname="InductorChoices.can_fuse", anchor="this text is not in torch",
                               at="start", code="pass", flag="no_fuse"))
    importhook.PATCHES.append(bad); importhook.TARGETS[bad.target].append(bad)
    importhook._state["report"][bad.slug] = ("pending", "")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import torch._inductor.choices as c
    print("WARN", [str(w.message) for w in caught if w.category is inductor_ablate.InductorAblateWarning])
    print("STOCK", "__inductor_ablate__" not in c.InductorChoices.can_fuse.__code__.co_names)
    print("STATE", {r["slug"]: r["state"] for r in inductor_ablate.report()}["no-fuse-veto"])
"""


def test_a_patch_that_cannot_apply_warns_and_leaves_the_module_stock():
    out = run_py(BROKEN_PATCH).stdout
    warning = re.search(r"^WARN (.*)$", out, re.M).group(1)
    import torch

    for piece in ("moved-anchor", "torch._inductor.choices", torch.__version__, "stays stock"):
        assert piece in warning
    assert "STOCK True" in out and "STATE failed" in out  # whole module untouched, sibling patch too


def test_strict_mode_turns_the_warning_into_an_error():
    proc = run_py(BROKEN_PATCH, env=clean_env(INDUCTOR_ABLATE_STRICT="1"), check=False)
    assert proc.returncode != 0
    assert proc.returncode == 2 and "Traceback" not in proc.stderr  # one line (tests/test_bad_input.py)
    assert "moved-anchor" in proc.stderr and "INDUCTOR_ABLATE_STRICT=1" in proc.stderr


def test_patched_bytecode_never_lands_in_torchs_pycache(tmp_path):
    import torch._inductor

    pycache = os.path.join(os.path.dirname(torch._inductor.__file__), "__pycache__")
    before = {f: os.stat(os.path.join(pycache, f)).st_mtime_ns for f in os.listdir(pycache)} if os.path.isdir(pycache) else {}
    cache = tmp_path / "ablate-cache"
    run_py("import inductor_ablate, torch._inductor.scheduler, torch._inductor.choices",
           env=clean_env(INDUCTOR_ABLATE_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="0"))
    after = {f: os.stat(os.path.join(pycache, f)).st_mtime_ns for f in os.listdir(pycache)} if os.path.isdir(pycache) else {}
    changed = {f for f in after if before.get(f) != after[f]}
    # torch may write its own stock .pyc for files never imported before, but never rewrite one
    assert not {f for f in changed if f in before}, changed
    assert list(cache.rglob("torch._inductor.scheduler-*.bin"))  # our compiled patches live here


def test_traceback_through_a_patched_torch_function_names_torchs_file_and_line(ablate):
    from torch._inductor.choices import InductorChoices

    with ablate.config.patch(no_fuse="vertical"):  # partial: the veto must classify the pair
        with pytest.raises(AttributeError) as info:
            InductorChoices.can_fuse(None, object(), object(), 1)
    frames = [f for f in traceback.extract_tb(info.value.__traceback__) if f.name == "can_fuse"]
    assert frames and frames[0].filename == sys.modules["torch._inductor.choices"].__file__
    # the inserted veto carries the line of the statement it precedes, in torch's real file
    assert linecache.getline(frames[0].filename, frames[0].lineno).strip().startswith("if shared_data_score == 0")


def test_uninstall_restores_stock_code(ablate):
    import torch._inductor.choices as c

    assert "__inductor_ablate__" in c.InductorChoices.can_fuse.__code__.co_names
    ablate.uninstall()
    try:
        assert "__inductor_ablate__" not in c.InductorChoices.can_fuse.__code__.co_names
    finally:
        ablate.install()
    assert "__inductor_ablate__" in c.InductorChoices.can_fuse.__code__.co_names

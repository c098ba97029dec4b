"""Switch values and the scoped config (no compiles here)."""
import threading

import pytest

from inductor_ablate import switches
from inductor_ablate.config import Config
from inductor_ablate.switches import FUSION_KINDS, SWITCHES, SwitchValueError

ALL = frozenset(FUSION_KINDS)


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "Yes", "on", " On "])
def test_true_words(raw):
    assert switches.parse(SWITCHES["no_inline"], raw) is True
    assert switches.parse(SWITCHES["no_fuse"], raw) == ALL


@pytest.mark.parametrize("raw", ["0", "false", "No", "OFF", ""])
def test_false_words(raw):
    assert switches.parse(SWITCHES["flush_every_node"], raw) is False
    assert switches.parse(SWITCHES["no_fuse"], raw) == frozenset()


@pytest.mark.parametrize("raw", ["2", "maybe", "enable", "tru"])
def test_bad_values_name_the_variable_and_the_valid_values(raw):
    with pytest.raises(SwitchValueError) as info:
        switches.from_environ({"INDUCTOR_NO_INLINE": raw})
    msg = str(info.value)
    assert "INDUCTOR_NO_INLINE" in msg and repr(raw) in msg and "1/0/true/false/yes/no/on/off" in msg


def test_fusion_kind_lists():
    assert switches.parse(SWITCHES["no_fuse"], "vertical, EPILOGUE") == {"vertical", "epilogue"}
    assert switches.parse(SWITCHES["no_fuse"], "outer_loop") == {"outer-loop"}
    with pytest.raises(SwitchValueError) as info:
        switches.from_environ({"INDUCTOR_NO_FUSE": "vertical,diagonal"})
    msg = str(info.value)
    assert "INDUCTOR_NO_FUSE" in msg and "diagonal" in msg
    assert all(kind in msg for kind in FUSION_KINDS)  # lists the valid kinds


def test_environment_round_trip():
    values = {"no_fuse": frozenset({"vertical", "horizontal"}), "no_inline": True,
              "flush_every_node": False, "one_kernel_per_op": False, "fuse_limit": 3, "inline_limit": None,
              "fuse_skip": frozenset({2, 5, 6, 7}), "no_fuse_pairs": ("mm+add",), "modules": ("encoder.*", "pooler"),
              "ops": (), "expect_fused": ("blocks.0.mlp",)}
    assert switches.from_environ(switches.to_environ(values)) == values
    assert switches.from_environ(switches.to_environ({**values, "fuse_limit": 0}))["fuse_limit"] == 0


def test_one_kernel_per_op_expands():
    eff = switches.effective({"one_kernel_per_op": True})
    assert eff == {"no_fuse": ALL, "no_inline": True, "flush_every_node": True, "fuse_limit": None,
                   "inline_limit": None, "fuse_skip": frozenset(), "no_fuse_pairs": (), "modules": (),
                   "ops": (), "expect_fused": ()}  # the limits, the scope and the check are not part of it


def test_patch_as_context_manager_and_decorator():
    cfg = Config()
    with cfg.patch(no_fuse="vertical"):
        assert cfg.no_fuse == {"vertical"}
        with cfg.patch(no_inline=True):
            assert cfg.no_fuse == {"vertical"} and cfg.no_inline is True
        assert cfg.no_inline is False
    assert cfg.no_fuse == frozenset()

    @cfg.patch(one_kernel_per_op=True)
    def inside():
        return cfg.effective()

    assert inside()["flush_every_node"] is True
    assert cfg.effective()["flush_every_node"] is False


def test_bad_value_in_patch_or_set_changes_nothing():
    cfg = Config()
    with pytest.raises(SwitchValueError, match="inductor_ablate.config.no_inline"):
        cfg.patch(no_inline="perhaps")
    with pytest.raises(SwitchValueError):
        cfg.update(no_inline=True, no_fuse="bogus")
    assert cfg.no_inline is False  # the valid half was not applied either
    with pytest.raises(AttributeError, match="no switch 'no_fusion'"):
        cfg.no_fusion = True


def test_patch_is_process_wide_while_its_block_runs():
    """Another thread sees the patch (on CUDA the backward is compiled in autograd's device thread),
    and patches of two threads that do not nest each remove their own override."""
    cfg = Config()
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def worker():
        with cfg.patch(no_fuse=True):
            inside.set()
            release.wait(5)
        seen["worker after"] = cfg.effective()["no_inline"]  # main's patch, still active

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = cfg.effective()["no_fuse"]  # while the worker's patch is active
    with cfg.patch(no_inline=True):
        release.set()
        t.join()
        seen["main after worker"] = (cfg.effective()["no_fuse"], cfg.no_inline)
    assert seen == {"main": ALL, "worker after": True, "main after worker": (ALL, True)}
    assert cfg.effective()["no_fuse"] == frozenset() and cfg.no_inline is False


def test_patch_as_a_decorator_may_recurse():
    cfg = Config()

    @cfg.patch(no_inline=True)
    def depth(n):
        return cfg.no_inline if n == 0 else depth(n - 1)

    assert depth(3) is True and cfg.no_inline is False


def test_global_set_is_seen_by_all_threads():
    cfg = Config()
    cfg.no_inline = "yes"
    out = []
    t = threading.Thread(target=lambda: out.append(cfg.no_inline))
    t.start()
    t.join()
    assert out == [True]


def test_every_inductor_variable_torch_reads_passes_the_misspelling_check():
    # Torch reads some INDUCTOR_* names of its own; the check that catches INDUCTOR_NO_FUZE must let
    # every one of them through, on whichever torch this runs (its sources are scanned, not a list).
    import os
    import re

    import torch

    root = os.path.dirname(torch.__file__)
    names = set()
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    names.update(re.findall(r"[\"'](INDUCTOR_[A-Z0-9_]+)[\"']", f.read()))
    ours = {s.env for s in SWITCHES.values()}
    torchs = sorted(names - ours)
    assert torchs, "found no INDUCTOR_* name in torch's sources: the scan is broken"
    switches.check_environ({name: "1" for name in torchs})
    for typo in ("INDUCTOR_NO_FUZE", "INDUCTOR_NOFUSE", "INDUCTOR_NO_INLINES", "INDUCTOR_FUSE_LIMITS",
                 "INDUCTOR_ONE_KERNEL_PER_OPS", "INDUCTOR_FLUSH_EVERY", "INDUCTOR_ABLATE_STRICKT"):
        with pytest.raises(SwitchValueError, match=f"{typo} is not a variable of inductor_ablate"):
            switches.check_environ({typo: "1"})

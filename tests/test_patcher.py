"""The transform, on plain source strings (no import machinery), like pytest's rewrite tests."""
import linecache
import traceback
import types

import pytest

from inductor_ablate.patcher import Patch, PatchError, compile_patched, resolve_function, version_in_range

SOURCE = '''\
from __future__ import annotations
import functools


class Choices:
    @staticmethod
    def can_fuse(node1, node2, score: int) -> bool:
        """Doc."""
        total = node1 + node2
        return total > score

    def base(self, y):
        return y


class Child(Choices):
    def method(self, x):
        y = x * 2
        result = super().base(y)
        return result


def helper(a):
    b = a + 1
    c = b / 0
    return c
'''


def make(**kw):
    base = dict(slug="t", target="m", qualname="Choices.can_fuse", anchor="score: int", at="start",
                code="if HOOK(node1): return False", flag="no_fuse")
    base.update(kw)
    return Patch.from_dict(base)


def load(source=SOURCE, filename="/fake/choices.py"):
    module = types.ModuleType("m")
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def apply(module, patches, hook):
    codes = compile_patched(SOURCE, module.__file__, patches)
    module.HOOK = hook
    for qualname, code in codes.items():
        resolve_function(module, qualname).__code__ = code


def test_start_patch_runs_first_and_keeps_docstring():
    module = load()
    apply(module, [make()], hook=lambda n: n == 1)
    assert module.Choices.can_fuse(1, 5, 0) is False  # vetoed by the inserted line
    assert module.Choices.can_fuse(2, 5, 0) is True  # falls through to the original body
    assert module.Choices.can_fuse.__doc__ == "Doc."


def test_before_patch_and_super_cell():
    module = load()
    seen = []
    patch = make(qualname="Child.method", anchor="result = super()", at="before", code="HOOK(y)")
    apply(module, [patch], hook=seen.append)
    assert module.Child().method(3) == 6 and seen == [6]  # super() still works: same __class__ cell


@pytest.mark.parametrize("anchor,count", [("not in there", 0), ("node", 4)])
def test_anchor_must_match_exactly_once(anchor, count):
    with pytest.raises(PatchError, match=f"found {count} times"):
        compile_patched(SOURCE, "/fake/choices.py", [make(anchor=anchor)])


def test_missing_function_is_a_patch_error():
    with pytest.raises(PatchError, match="defined 0 times"):
        compile_patched(SOURCE, "/fake/choices.py", [make(qualname="Choices.nope")])


def test_all_or_nothing_when_one_patch_fails():
    good = make()
    bad = make(slug="bad", qualname="helper", anchor="missing anchor")
    with pytest.raises(PatchError) as info:
        compile_patched(SOURCE, "/fake/choices.py", [good, bad])
    assert info.value.patch.slug == "bad"


def test_tracebacks_name_the_real_file_and_line(tmp_path):
    path = tmp_path / "real_module.py"
    path.write_text(SOURCE)
    module = load(filename=str(path))
    patch = make(slug="h", qualname="helper", anchor="c = b / 0", at="before", code="HOOK(a)")
    apply(module, [patch], hook=lambda a: None)
    with pytest.raises(ZeroDivisionError) as info:
        module.helper(1)
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert frame.filename == str(path)
    assert frame.lineno == SOURCE.splitlines().index("    c = b / 0") + 1
    assert linecache.getline(frame.filename, frame.lineno).strip() == "c = b / 0"


def test_inserted_code_error_points_at_anchor_line(tmp_path):
    path = tmp_path / "real_module.py"
    path.write_text(SOURCE)
    module = load(filename=str(path))
    apply(module, [make(slug="h", qualname="helper", anchor="b = a + 1", at="before", code="HOOK(a)")],
          hook=lambda a: 1 / 0)
    with pytest.raises(ZeroDivisionError) as info:
        module.helper(1)
    frames = traceback.extract_tb(info.value.__traceback__)
    mine = [f for f in frames if f.filename == str(path)][-1]
    assert mine.lineno == SOURCE.splitlines().index("    b = a + 1") + 1


def test_bad_definitions_fail_loudly():
    with pytest.raises(ValueError, match="at="):
        make(at="around")
    with pytest.raises(ValueError, match="version range"):
        make(torch="2.10")
    with pytest.raises(SyntaxError):
        make(code="if :")
    with pytest.raises(ValueError, match="unknown fields"):
        Patch.from_dict(dict(slug="x", target="m", qualname="f", anchor="a", at="start", code="pass",
                             flag="f", extra=1))


def test_resolve_function_unwraps_decorators():
    module = load()
    assert resolve_function(module, "Choices.can_fuse") is module.Choices.__dict__["can_fuse"].__func__
    assert resolve_function(module, "helper") is module.helper


def test_anchor_ignores_whitespace_so_rewrapped_signatures_still_match():
    wrapped = SOURCE.replace("def can_fuse(node1, node2, score: int) -> bool:",
                             "def can_fuse(\n        node1,\n        node2,\n        score: int,\n    ) -> bool:")
    codes = compile_patched(wrapped, "/fake/choices.py", [make(anchor="def can_fuse(node1, node2")])
    assert "HOOK" in codes["Choices.can_fuse"].co_names


def test_disk_cache_keys_on_the_path(tmp_path, monkeypatch):
    # Two installs of the same torch source: each must get code objects naming its own file.
    from inductor_ablate.patcher import cached_compile

    monkeypatch.setenv("INDUCTOR_ABLATE_CACHE_DIR", str(tmp_path / "cache"))
    first = cached_compile(SOURCE.encode(), "/install/one/choices.py", [make()], salt="t")
    second = cached_compile(SOURCE.encode(), "/install/two/choices.py", [make()], salt="t")
    assert first["Choices.can_fuse"].co_filename == "/install/one/choices.py"
    assert second["Choices.can_fuse"].co_filename == "/install/two/choices.py"


def test_after_inserts_behind_the_anchor_statement():
    module = load()
    seen = []
    apply(module, [make(slug="a", qualname="helper", anchor="b = a + 1", at="after", code="HOOK(b)")],
          hook=seen.append)
    with pytest.raises(ZeroDivisionError):
        module.helper(1)
    assert seen == [2]  # ran after b was bound, before the division


def test_verify_inserts_nothing_but_needs_its_anchor():
    assert compile_patched(SOURCE, "/fake/choices.py", [make(at="verify", code="", anchor="total > score")]) == {}
    with pytest.raises(PatchError, match="found 0 times"):
        compile_patched(SOURCE, "/fake/choices.py", [make(at="verify", code="", anchor="fixed upstream")])


@pytest.mark.parametrize("version, spec, expected", [
    ("2.13.0+cpu", "", True), ("2.13.0+cpu", ">=2.12,<2.15", True), ("2.15.0+cu132", ">=2.12,<2.15", False),
    ("2.9.1", "<2.10", True), ("2.10.0a0+git1234", "<2.10", False), ("2.10.0a0+git1234", ">=2.10", True),
    ("2.12", "==2.12.0", True), ("3.0.0", ">2.15", True),
])
def test_version_ranges(version, spec, expected):
    assert version_in_range(version, spec) is expected


def test_every_patch_has_one_definition_per_supported_torch():
    from inductor_ablate.importhook import SLUGS, definitions_for

    for version in ("2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"):
        chosen, missing = definitions_for(version)
        assert missing == [] and sorted(p.slug for p in chosen) == sorted(SLUGS), version

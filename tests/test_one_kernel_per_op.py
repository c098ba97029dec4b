"""Each switch on the program suite (CPU, C++ backend), upstream style: run_and_get_code, FileCheck,
config.patch and the census.  Every case also checks the result against eager."""
import copy
import inspect
import os
import re
import threading
from unittest import mock

import torch
from torch._dynamo.utils import counters
from torch._inductor import config as inductor_config, metrics
from torch._inductor.test_case import TestCase
from torch._inductor.utils import run_and_get_code
from torch.testing import FileCheck
from torch.testing._internal.common_utils import instantiate_parametrized_tests, parametrize

import inductor_ablate
from inductor_ablate.kernel_census import counting_bytes, counting_patterns, recording, summarize
from inductor_ablate.programs import PROGRAMS

inductor_ablate.install()


def cpp_functions(code: str) -> list[str]:
    return re.findall(r"^(cpp_\w+) = async_compile", code, re.M)


class OneKernelPerOpTests(TestCase):
    def setUp(self):
        super().setUp()
        inductor_ablate.config.reset()

    def run_program(self, name, **switches):
        """Census of the program under ``switches``; checks the result against eager."""
        torch.manual_seed(0)
        fn, args = PROGRAMS[name]("cpu")
        eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        expected = fn(*eager_args)
        with inductor_ablate.config.patch(**switches):
            census = inductor_ablate.census(fn, *compiled_args)
        self.assertEqual(census.result, expected, atol=1e-4, rtol=1e-4)
        self.assertEqual(compiled_args, eager_args, atol=1e-4, rtol=1e-4)  # in-place mutation kept
        return census

    @parametrize("name", list(PROGRAMS))
    def test_one_kernel_per_op(self, name):
        stock = self.run_program(name)
        split = self.run_program(name, one_kernel_per_op=True)
        inductor_ablate.assert_one_op_per_kernel(split)
        self.assertGreater(split.num_kernels, stock.num_kernels)
        ops_in_kernels = {n for k in split.kernels + split.externs for n in k.nodes}
        # every compute op lowered is in some kernel or extern call, unless Inductor folded it away
        self.assertLessEqual(len(ops_in_kernels), split.fx_ops)
        self.assertGreaterEqual(split.num_kernels + len(split.externs), len(ops_in_kernels))

    @parametrize("name", list(PROGRAMS))
    def test_no_inline_realizes_every_node(self, name):
        census = self.run_program(name, no_inline=True)
        inlined = {k.name: k.inlined for k in census.kernels if k.inlined}
        self.assertEqual(inlined, {}, "ops computed inside another op's kernel")

    @parametrize("name", ["pointwise_chain", "reduction", "softmax", "layer_norm", "training_step"])
    def test_no_fuse_multiplies_fused_nodes(self, name):
        stock = self.run_program(name, no_inline=True)
        unfused = self.run_program(name, no_inline=True, no_fuse=True)
        self.assertGreater(unfused.fused_nodes, stock.fused_nodes)
        self.assertEqual(unfused.fused_nodes, sum(k.ir_nodes for k in unfused.kernels))  # nothing fused
        # on C++ the nodes stay grouped in few functions: that is the C++ grouping, not fusion
        self.assertLess(unfused.num_kernels, unfused.fused_nodes)

    @parametrize("name", ["pointwise_chain", "softmax", "conv_bn_relu_pool"])
    def test_flush_every_node_gives_one_function_per_node(self, name):
        census = self.run_program(name, no_fuse=True, no_inline=True, flush_every_node=True)
        self.assertEqual(census.num_kernels, census.fused_nodes)
        self.assertEqual([k.ir_nodes for k in census.kernels], [1] * census.num_kernels)

    def test_fusion_kinds_block_only_what_they_name(self):
        # x -> sum (reduction) -> + x (a vertical consumer) and two siblings reading x (horizontal)
        def fn(x):  # sin -> cos is a vertical pair; sin and exp (both read x) a horizontal one
            a = x.sin()
            return a.cos(), x.exp()

        x = torch.randn(64, 32)
        counts = {}
        for kinds in ("", "horizontal", "vertical", "vertical,horizontal"):
            metrics.reset()
            torch._dynamo.reset()
            with inductor_ablate.config.patch(no_fuse=kinds or "0", no_inline=True):
                out, _ = run_and_get_code(torch.compile(fn), x)
            self.assertEqual(out, fn(x))
            counts[kinds] = metrics.generated_kernel_count
        self.assertEqual(counts, {"": 1, "horizontal": 2, "vertical": 2, "vertical,horizontal": 3})

    def test_seed_case_batch_norm_add_relu_comes_apart(self):
        fn, args = PROGRAMS["conv_bn_relu_pool"]("cpu")
        _, (code,) = run_and_get_code(torch.compile(fn), *args)
        FileCheck().check("cpp_fused__native_batch_norm_legit_no_training_add").check("relu").run(code)

        # fusion vetoed alone: on CPU the seed's multi-op function is still there (C++ grouping)
        torch._dynamo.reset()
        with inductor_ablate.config.patch(no_fuse=True, no_inline=True):
            _, (code,) = run_and_get_code(torch.compile(fn), *args)
        self.assertTrue(any("batch_norm" in f and "relu" in f for f in cpp_functions(code)), cpp_functions(code))

        torch._dynamo.reset()
        with inductor_ablate.config.patch(one_kernel_per_op=True):
            out, (code,) = run_and_get_code(torch.compile(fn), *args)
        self.assertEqual(out, fn(*args), atol=1e-4, rtol=1e-4)
        names = cpp_functions(code)
        self.assertFalse([f for f in names if "relu" in f and ("batch_norm" in f or "add" in f)], names)
        FileCheck().check("extern_kernels.convolution").check("cpp_fused_relu").check("cpp_fused_max_pool2d").run(code)

    def test_layout_copies_before_an_extern_call_compute_no_op(self):
        conv, bn = torch.nn.Conv2d(3, 8, 3).eval(), torch.nn.BatchNorm2d(8).eval()
        with torch.no_grad(), inductor_ablate.config.patch(one_kernel_per_op=True):
            census = inductor_ablate.census(lambda x: torch.relu(bn(conv(x))), torch.randn(2, 3, 16, 16))
        computing_conv = [k.name for k in census.kernels + census.externs if "convolution.default" in k.ops]
        self.assertEqual(computing_conv, ["extern_kernels.convolution"], census.table())  # counted once
        copies = [k for k in census.kernels if k.copies_for]
        self.assertTrue(copies, census.table())
        for k in copies:
            self.assertEqual((k.ops, k.copies_for), ([], ["convolution.default"]))
        self.assertIn("(layout copy for convolution.default)", census.table())

    def test_backward_compiled_in_another_thread_gets_the_switches_and_is_recorded(self):
        """On CUDA, autograd runs the backward (and AOTAutograd compiles it, lazily, at its first
        call) in a per-device engine thread, not in the thread that holds ``config.patch`` and the
        census.  Reproduced here on CPU by calling backward from another thread."""
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32))
        x = torch.randn(8, 16, requires_grad=True)
        compiled = torch.compile(model)
        with inductor_ablate.config.patch(one_kernel_per_op=True), recording() as sink:
            out = compiled(x)
            backward = threading.Thread(target=lambda: out.float().pow(2).mean().backward())
            backward.start()
            backward.join()
        census = summarize(sink)
        self.assertEqual(census.graphs, 2, "the backward graph was not recorded")
        inductor_ablate.assert_one_op_per_kernel(census)
        expected = x.detach().clone().requires_grad_()
        model(expected).float().pow(2).mean().backward()
        self.assertEqual(x.grad, expected.grad, atol=1e-4, rtol=1e-4)

    def test_counting_bytes_is_one_read_and_one_write_fused_and_five_of_each_one_kernel_per_op(self):
        """Inductor's byte estimate, as ``counting_bytes`` sums it: a chain of five pointwise ops
        over n float32s is one kernel that reads n and writes n (8n bytes); with fusion and
        inlining both off, each op reads and writes its own n (40n).  Either switch alone changes
        nothing here: the inlined chain is one node, and the realized ops fuse back into one kernel
        whose inner buffers are dropped."""
        n = 4096

        def chain(x):
            return ((x * 2 + 1).relu() * 3).sin()

        for switches, expected in (({}, 8 * n), ({"no_inline": True}, 8 * n), ({"no_fuse": True}, 8 * n),
                                   ({"no_fuse": True, "no_inline": True}, 40 * n)):
            with self.subTest(**switches):
                with inductor_ablate.config.patch(**switches), counting_bytes() as moved, \
                        recording(reset_dynamo=True):
                    torch.compile(chain)(torch.randn(n))
                self.assertEqual(moved, {"kernels": expected, "externs": 0})

    def test_counting_patterns_counts_each_match_as_inductors_own_per_pattern_counter_does(self):
        """``counting_patterns`` counts the FX pattern matches Inductor applies, per pattern, where it
        applies them, so that a torch whose Inductor keeps no per-pattern counter (2.11) still says
        which patterns matched.  With Inductor's own counter on (TORCHINDUCTOR_PATTERN_MATCH_DEBUG,
        torch 2.13), the two agree and sum to Inductor's total; with it off, ours counts the same
        and Inductor's per-pattern counter stays empty; with pattern_matcher off, nothing matches."""
        def views(x, w):
            y = (x.view(4, 8) @ w).view(32).view(4, 8)
            return torch.nn.functional.gelu(y.permute(1, 0)).sum()

        def compile_and_count(debug, **inductor):
            counters.clear()
            x, w = torch.randn(32, requires_grad=True), torch.randn(8, 8, requires_grad=True)
            with mock.patch.dict(os.environ), inductor_config.patch(inductor), counting_patterns() as matched, \
                    recording(reset_dynamo=True):
                os.environ.pop("TORCHINDUCTOR_PATTERN_MATCH_DEBUG", None)
                if debug:
                    os.environ["TORCHINDUCTOR_PATTERN_MATCH_DEBUG"] = "__none__"  # counts, names no node
                torch.compile(views)(x, w).backward()
            return dict(matched), dict(counters["inductor_pattern_matcher_per_pattern"]), \
                counters["inductor"]["pattern_matcher_count"]

        from torch._inductor import pattern_matcher

        # torch 2.13 (CI's) has Inductor's own counter, which must agree; 2.11 (the H200's) has none
        has_counter = "_pattern_matcher_per_pattern" in inspect.getsource(pattern_matcher.PatternMatcherPass.apply)
        ours, own, total = compile_and_count(debug=True)
        self.assertGreater(total, 0)
        self.assertEqual(sum(ours.values()), total)
        self.assertEqual(own, ours if has_counter else {})
        self.assertEqual(compile_and_count(debug=False), (ours, {}, total))
        self.assertEqual(compile_and_count(debug=True, pattern_matcher=False), ({}, {}, 0))
        # the block leaves Inductor's classes as they were
        self.assertFalse([cls for cls in (pattern_matcher.PatternEntry, *pattern_matcher.PatternEntry.__subclasses__())
                          if hasattr(cls.__dict__.get("apply"), "__wrapped__")])


instantiate_parametrized_tests(OneKernelPerOpTests)

if __name__ == "__main__":
    from torch._inductor.test_case import run_tests

    run_tests()

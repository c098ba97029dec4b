"""Poisoned buffers (inductor_ablate.poison): a compiled program that reads memory before writing it
gives NaN each time, one that does not gives the same answer as without the poison."""
import torch
import torch._inductor.config as inductor_config

from inductor_ablate.poison import POISON_INDUCTOR, poison, poisoned_buffers


def test_poison_fills_what_no_kernel_computes_by_chance():
    assert torch.isnan(poison(torch.zeros(3, dtype=torch.bfloat16))).all()
    assert (poison(torch.zeros(3, dtype=torch.int64)) == torch.iinfo(torch.int64).max).all()
    assert poison(torch.zeros(3, dtype=torch.bool)).all()


def test_a_compiled_read_before_write_gives_nan_and_the_allocator_is_restored(ablate):
    """Real Inductor code that reads memory no kernel wrote (half of an empty buffer): NaN under the
    poison, every time; the count says the generated code's allocations went through it."""
    def half_written(x):
        y = torch.empty(x.shape[0] * 2)
        y[: x.shape[0]] = x
        return y.sum()

    original = torch._C._dynamo.guards._empty_strided_cpu
    torch._dynamo.reset()
    with inductor_config.patch(POISON_INDUCTOR), poisoned_buffers() as counts:
        got = torch.compile(half_written)(torch.randn(64))
    assert torch.isnan(got) and counts.get("cpu", 0) >= 1, (got, counts)
    assert torch._C._dynamo.guards._empty_strided_cpu is original


def test_poison_leaves_a_right_program_right(ablate):
    """A training step's generated code (forward and backward, buffers that would be reused) under the
    poison: the same values as without it, so a NaN under it is a read before a write, not the poison."""
    def step(x, w):
        h = torch.nn.functional.gelu(x @ w)
        return torch.nn.functional.layer_norm(h, h.shape[-1:]).sum(0).softmax(-1)

    x, w = torch.randn(16, 8), torch.randn(8, 8, requires_grad=True)
    torch._dynamo.reset()
    expected = torch.compile(step)(x, w)
    expected.sum().backward()
    expected_grad, w.grad = w.grad, None
    torch._dynamo.reset()
    with inductor_config.patch(POISON_INDUCTOR), poisoned_buffers() as counts:
        got = torch.compile(step)(x, w)
        got.sum().backward()
    assert counts.get("cpu", 0) >= 2, counts
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(w.grad, expected_grad)

"""Small programs that exercise each way Inductor puts several ops in one kernel.

Shared by the tests, the census command and the docs, so that the
CPU and CUDA figures come from the same code.  Each entry builds ``(fn, args)`` on a device.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def pointwise_chain(device):
    def fn(x):
        return torch.sigmoid((x + 1.0) * 2.0 - x.cos()).relu()
    return fn, (torch.randn(64, 128, device=device),)


def reduction(device):
    def fn(x):
        return (x * x).sum(dim=1) + x.amax(dim=1)
    return fn, (torch.randn(64, 128, device=device),)


def softmax(device):
    def fn(x):
        return torch.softmax(x * 0.5, dim=-1)
    return fn, (torch.randn(32, 256, device=device),)


def layer_norm(device):
    ln = torch.nn.LayerNorm(128).to(device)
    def fn(x):
        return ln(x)
    return fn, (torch.randn(64, 128, device=device),)


class _ConvBlock(torch.nn.Module):
    """The seed's case: conv -> batch_norm (eval) -> + residual -> relu -> max_pool."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return F.max_pool2d(torch.relu(self.bn(self.conv(x)) + x), 2)


def conv_bn_relu_pool(device):
    block = _ConvBlock().to(device).eval()
    with torch.no_grad():
        block.bn.running_mean.uniform_(-0.5, 0.5)
        block.bn.running_var.uniform_(0.5, 1.5)
    def fn(x):
        return block(x)
    return fn, (torch.randn(2, 8, 16, 16, device=device),)


def linear_gelu(device):
    lin = torch.nn.Linear(64, 128).to(device)
    def fn(x):
        return F.gelu(lin(x))
    return fn, (torch.randn(32, 64, device=device),)


def views_transposes(device):
    def fn(x, y):
        a = (x + 1).t().contiguous() * 2
        return a.view(-1, 8).sum(1) + y.unsqueeze(0).expand(4, -1).reshape(-1)[: a.numel() // 8]
    return fn, (torch.randn(16, 32, device=device), torch.randn(64, device=device))


def multi_output(device):
    def fn(x):
        values, indices = x.max(dim=1)
        var, mean = torch.var_mean(x, dim=1)
        return values + var + mean, indices
    return fn, (torch.randn(32, 64, device=device),)


def inplace_mutation(device):
    def fn(buf, a):
        buf.add_(a * 2)
        return buf.relu()
    return fn, (torch.randn(32, 64, device=device), torch.randn(32, 64, device=device))


def constants(device):
    def fn(x):
        return x + torch.full_like(x, 3.0) * torch.arange(x.shape[-1], device=x.device)
    return fn, (torch.randn(16, 32, device=device),)


def training_step(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64),
                                torch.nn.Linear(64, 8)).to(device)
    def fn(x, target):
        model.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), target)
        loss.backward()
        return loss.detach(), [p.grad for p in model.parameters()]
    return fn, (torch.randn(16, 32, device=device), torch.randn(16, 8, device=device))


PROGRAMS = {f.__name__: f for f in (pointwise_chain, reduction, softmax, layer_norm, conv_bn_relu_pool,
                                    linear_gelu, views_transposes, multi_output, inplace_mutation, constants,
                                    training_step)}
#: Programs whose fn mutates its first argument: run eager and compiled on separate copies.
MUTATES_INPUT = {"inplace_mutation"}

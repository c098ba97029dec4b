"""Model suites.  The embedded suite needs torch only (no downloads); real suites are used when their
package is installed (weights random, HF models built from configs).  A suite maps a name to a
builder ``(device, dtype, mode) -> (module, inputs, loss_fn)``."""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import math
import os
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import UsageError


def _size(device, cpu, gpu):
    return gpu if device.startswith("cuda") else cpu


class PointwiseChain(nn.Module):
    """A long elementwise chain: the case where fusion and inlining matter most."""

    def forward(self, x):
        y = x * 1.5 + 0.3
        y = torch.sigmoid(y) * y  # silu by hand
        y = torch.tanh(y) + torch.exp(-y.abs())
        y = torch.where(y > 0, y, 0.01 * y)
        y = (y - y.mean(dim=-1, keepdim=True)) * torch.rsqrt(y.var(dim=-1, keepdim=True) + 1e-5)
        return torch.clamp(y * 0.7 - 0.1, -3, 3)


class NormBlock(nn.Module):
    """LayerNorm, an RMSNorm written out, and a residual."""

    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        y = self.ln(x)
        rms = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return rms + x


class Attention(nn.Module):
    """Multi-head self-attention written with matmul + softmax (so fusion around it is visible)."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        causal = torch.ones(t, t, device=x.device, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        y = torch.softmax(scores.float(), dim=-1).to(x.dtype) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, d)) + x


class BasicBlock(nn.Module):
    """ResNet basic block: conv-bn-relu-conv-bn-add-relu (+ max pool, the seed's pattern)."""

    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)) + x)
        return F.max_pool2d(y, 2)


class MLPBlock(nn.Module):
    """Transformer MLP: LayerNorm -> Linear -> GELU -> Linear -> residual."""

    def __init__(self, d):
        super().__init__()
        self.ln, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class TinyLM(nn.Module):
    """A small GPT-style language model: embeddings, N x (attention + MLP), tied LM head."""

    def __init__(self, vocab, d, heads, layers, t):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleList([nn.LayerNorm(d), Attention(d, heads), MLPBlock(d)]))
        self.ln = nn.LayerNorm(d)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for ln, attn, mlp in self.blocks:
            x = mlp(attn(ln(x)))
        return self.ln(x) @ self.tok.weight.t()


def _float_loss(out):
    return out.float().pow(2).mean()


def _projected_loss(width: int, device):
    """The loss of a model whose output is normalized (T5's encoder's RMS-normalized states, the end
    of pointwise_chain): their mean square is fixed whatever the input, so ``_float_loss`` would give
    everything below the norm a gradient of rounding noise (about 1e-9; T5's bfloat16 step was 6.2
    from the float64 one in eager, so the accuracy check compared noise).  A fixed random projection
    first makes the loss depend on each row's direction."""
    w = torch.randn(width, generator=torch.Generator().manual_seed(0)).to(device)
    return lambda out: (out.float() @ w).pow(2).mean()


def embedded() -> dict:
    """The CUDA sizes give every eager float32 step at least ~1.5 ms on an H100 (so >= 1 ms on an H200,
    whose memory is faster; measured 2026-12-05): smaller steps time launch overhead and noise, where
    `no-cudagraphs` can read faster than `all`.  bfloat16 steps are shorter.  CPU sizes are small."""
    def build(factory, make_inputs, normalized=False):
        def builder(device, dtype, mode):
            torch.manual_seed(0)
            model = factory(device).to(device=device, dtype=dtype)
            inputs = make_inputs(device, dtype)
            return model, inputs, _projected_loss(inputs[0].shape[-1], device) if normalized else _float_loss
        return builder

    return {
        "pointwise_chain": build(lambda dev: PointwiseChain(),  # ends in a row norm: its mean square is fixed
                                 lambda dev, dt: (torch.randn(*_size(dev, (512, 512), (32768, 1024)), device=dev, dtype=dt),),
                                 normalized=True),
        "norm_block": build(lambda dev: NormBlock(_size(dev, 256, 1024)),
                            lambda dev, dt: (torch.randn(_size(dev, 8, 1024), 128, _size(dev, 256, 1024), device=dev, dtype=dt),)),
        "attention": build(lambda dev: Attention(_size(dev, 128, 512), 4 if dev == "cpu" else 8),
                           lambda dev, dt: (torch.randn(_size(dev, 4, 256), 128, _size(dev, 128, 512), device=dev, dtype=dt),)),
        "conv_bn_block": build(lambda dev: BasicBlock(_size(dev, 16, 64)),
                               lambda dev, dt: (torch.randn(_size(dev, 4, 512), _size(dev, 16, 64), 32, 32, device=dev, dtype=dt),)),
        "mlp_gelu": build(lambda dev: MLPBlock(_size(dev, 128, 1024)),
                          lambda dev, dt: (torch.randn(_size(dev, 4, 32), 128, _size(dev, 128, 1024), device=dev, dtype=dt),)),
        "tiny_lm": build(lambda dev: TinyLM(vocab=_size(dev, 512, 8192), d=_size(dev, 128, 512), heads=4,
                                            layers=2, t=_size(dev, 64, 256)),
                         lambda dev, dt: (torch.randint(0, _size(dev, 512, 8192), (_size(dev, 2, 16), _size(dev, 64, 256)), device=dev),)),
    }


#: Batch on CUDA, chosen so eager takes at least ~1 ms per call on an H200 in bfloat16 inference
#: (the per-model table prints the eager time each run measured); CPU uses batch 2.
VISION_BATCH, TEXT_BATCH, TEXT_LEN = 64, 32, 128


def _image(device, dtype):
    return torch.randn(_size(device, 2, VISION_BATCH), 3, 224, 224, device=device, dtype=dtype)


class PackageDoesNotLoad(ImportError):
    """A suite's package is installed but raises on import: most often a build made for another torch
    (a torchvision wheel for torch 2.14 under torch 2.13 raises "operator torchvision::nms does not
    exist").  An ImportError, so a group of suites reports that suite's models n/a with this message."""


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def _where_it_raised(exc: BaseException) -> tuple[str, str]:
    """(top-level package, "package/file.py:line") of the last frame outside torch and importlib: the
    code that failed (torch's own frames below it only carry the error up)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f"{os.sep}torch{os.sep}" not in f.filename and "importlib" not in f.filename]
    if not frames:
        return "", ""
    path = frames[-1].filename
    top = os.path.dirname(path)
    while os.path.exists(os.path.join(os.path.dirname(top), "__init__.py")):
        top = os.path.dirname(top)
    return os.path.basename(top), f"{os.path.relpath(path, os.path.dirname(top))}:{frames[-1].lineno}"


def _not_installed(package: str) -> str:
    return f"needs {package}, which is not installed (pip install {package})"


def import_package(module: str):
    """``module`` imported.  ImportError when its package is not installed; PackageDoesNotLoad, with
    the versions, the error, where it raised and what to install, when it is installed but its import
    fails (a build for another torch; a dependency missing)."""
    package = module.split(".")[0]
    if importlib.util.find_spec(package) is None:
        raise ImportError(_not_installed(package))
    try:
        return importlib.import_module(module)
    except Exception as exc:  # the package's own import ran and failed: name it, never a traceback
        culprit, where = _where_it_raised(exc)
        culprit = culprit or package
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            fix = f"pip install {exc.name.split('.')[0]}"
        else:
            fix = (f"is {culprit} {_version(culprit)} a build for another torch? install the {culprit} release "
                   f"made for torch {torch.__version__.split('+')[0]}")
        raise PackageDoesNotLoad(
            f"{package} {_version(package)} is installed but does not load with torch {torch.__version__}: "
            f"{type(exc).__name__}: {exc}" + (f" (raised in {where})" if where else "") + f"; {fix}") from None


def torchvision_suite() -> dict:
    tvm = import_package("torchvision.models")

    def make(name):
        def builder(device, dtype, mode):
            torch.manual_seed(0)
            model = getattr(tvm, name)(weights=None)
            if name == "vit_b_16":  # torchvision zero-initializes its classifier head: every output would be 0
                nn.init.normal_(model.heads.head.weight, std=0.02)
            return model.to(device=device, dtype=dtype), (_image(device, dtype),), _float_loss
        return builder

    return {n: make(n) for n in MODEL_NAMES["torchvision"]}


def timm_suite() -> dict:
    timm = import_package("timm")

    def make(name):
        def builder(device, dtype, mode):
            torch.manual_seed(0)
            model = timm.create_model(name, pretrained=False).to(device=device, dtype=dtype)
            return model, (_image(device, dtype),), _float_loss
        return builder

    return {n: make(n) for n in MODEL_NAMES["timm"]}


def _no_dropout(config) -> None:
    """Training step of an HF model: every dropout probability of its config set to 0.  Dropout draws
    random numbers that eager and compiled code draw differently, so with it on no training step could
    be checked against eager (DistilBERT's gradients differed by a relative 1.05 under every config,
    stock `all` included).  Eval mode (inference) never drops out."""
    for name, value in vars(config).items():
        if ("dropout" in name or "pdrop" in name) and isinstance(value, float):
            setattr(config, name, 0.0)


def hf_suite() -> dict:
    transformers = import_package("transformers")

    class LogitsOnly(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, ids):
            out = self.model(input_ids=ids)
            return out.logits if hasattr(out, "logits") else out.last_hidden_state

    def make(config_cls, model_cls, hidden_states=False, **kw):
        def builder(device, dtype, mode):
            torch.manual_seed(0)
            config = getattr(transformers, config_cls)(**kw)
            if mode == "training":
                _no_dropout(config)
            model = LogitsOnly(getattr(transformers, model_cls)(config)).to(device=device, dtype=dtype)
            ids = torch.randint(0, config.vocab_size, (_size(device, 2, TEXT_BATCH), _size(device, 64, TEXT_LEN)),
                                device=device)
            return model, (ids,), _projected_loss(config.d_model, device) if hidden_states else _float_loss
        return builder

    models = {
        "bert_base": make("BertConfig", "BertForMaskedLM"),
        "gpt2": make("GPT2Config", "GPT2LMHeadModel"),
        "t5_small_encoder": make("T5Config", "T5EncoderModel", hidden_states=True, d_model=512, num_layers=6, num_heads=8, d_ff=2048),
        "distilbert": make("DistilBertConfig", "DistilBertForMaskedLM"),
        "roberta_base": make("RobertaConfig", "RobertaForMaskedLM"),
    }
    assert tuple(models) == MODEL_NAMES["hf"]
    return models


class MissingPackage:
    """The builder of a model whose suite's package is not installed or does not load: its cells are
    reported as n/a with this message (a group of suites runs what it can), never a crash."""

    def __init__(self, missing: str):
        self.missing = missing

    def __call__(self, *args):
        raise ImportError(self.missing)


def real_suite() -> dict:
    """Every real suite's models in one (torchvision, timm, hf), those of a missing package as
    MissingPackage builders.  Model names are unique across the three."""
    models = {}
    for suite in REAL_SUITES:
        try:
            models.update(SUITES[suite]())
        except ImportError as exc:  # not installed, or installed and does not load: the message says which
            models.update({name: MissingPackage(str(exc)) for name in MODEL_NAMES[suite]})
    return models


SUITES = {"embedded": embedded, "torchvision": torchvision_suite, "timm": timm_suite, "hf": hf_suite,
          "real": real_suite}
REAL_SUITES = ("torchvision", "timm", "hf")
#: What each real suite needs, and its models: listed without importing the package.
PACKAGES = {"embedded": "torch", "torchvision": "torchvision", "timm": "timm", "hf": "transformers"}
MODEL_NAMES = {
    "embedded": ("pointwise_chain", "norm_block", "attention", "conv_bn_block", "mlp_gelu", "tiny_lm"),
    "torchvision": ("resnet18", "resnet50", "mobilenet_v3_large", "vit_b_16"),
    "timm": ("convnext_tiny", "efficientnet_b0", "vit_small_patch16_224", "regnety_016"),
    "hf": ("bert_base", "gpt2", "t5_small_encoder", "distilbert", "roberta_base"),
}


def list_models() -> str:
    """Every model of every suite, and whether the package its suite needs is installed here and loads
    (it is imported: a build made for another torch is installed but fails)."""
    lines = []
    for suite, names in MODEL_NAMES.items():
        package = PACKAGES[suite]
        try:
            import_package(package)
            state = "installed"
        except PackageDoesNotLoad as exc:
            state = f"DOES NOT LOAD: {exc}"
        except ImportError:
            state = "NOT installed: pip install " + package
        lines.append(f"{suite:<12} ({package}: {state})")
        lines.extend(f"  {name}" for name in names)
    lines.append(f"real         (the group: {', '.join(REAL_SUITES)}; a model whose package is missing or "
                 f"does not load is reported n/a)")
    return "\n".join(lines)


def require_model(suite: str, model: str) -> None:
    """A script's one-model check, before anything compiles: UsageError for an unknown suite or a
    model the suite does not have."""
    names = load_suite(suite)
    if model not in names:
        raise UsageError(f"unknown model {model!r}; suite {suite!r} has {', '.join(names)}")


def preload(suite: str) -> None:
    """Import what building ``suite``'s models imports (bench's forkserver, before it forks cells):
    its packages, and for transformers the model classes it loads lazily.  Best effort: a suite
    that does not load here fails in its cells, with its message."""
    if ":" in suite:  # a user's suite: its module only (its function might touch CUDA, which a fork could not use)
        try:
            importlib.import_module(suite.split(":", 1)[0])
        except Exception:
            pass
        return
    try:
        models = load_suite(suite) if suite else {}
    except (UsageError, ImportError):
        return
    if any(name in models for name in MODEL_NAMES["hf"]):
        import transformers

        for name in ("BertConfig", "BertForMaskedLM", "GPT2Config", "GPT2LMHeadModel", "T5Config", "T5EncoderModel",
                     "DistilBertConfig", "DistilBertForMaskedLM", "RobertaConfig", "RobertaForMaskedLM"):
            getattr(transformers, name, None)


def load_suite(name: str) -> dict:
    """A suite by name (``real``: the three real suites together), or ``package.module:function``
    returning {name: builder}."""
    if ":" in name:
        module, attr = name.split(":", 1)
        try:
            function = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"suite {name!r}: {exc}") from None
        if not callable(function):
            raise UsageError(f"suite {name!r}: {module}.{attr} is a {type(function).__name__}, not a function; "
                             f"give module:function, where function() returns {{model name: builder}}")
        suite = function()  # an error inside it is the user's own, and shows its traceback
        if not (isinstance(suite, dict) and suite and all(isinstance(k, str) and callable(v) for k, v in suite.items())):
            raise UsageError(f"suite {name!r}: {attr}() returned {type(suite).__name__} {str(suite)[:60]!r}; expected a "
                             f"non-empty dict from model name to a builder (device, dtype, mode) -> (module, inputs, loss_fn)")
        return suite
    if name not in SUITES:
        raise UsageError(f"unknown suite {name!r}; suites: {', '.join(SUITES)} or module:function")
    try:
        return SUITES[name]()
    except ImportError as exc:  # not installed, or installed and does not load: the message says which
        raise UsageError(f"suite {name!r}: {exc}") from None


def module_regions(suite: str, name: str, depth: int) -> list[str]:
    """``bench --regions depth:N``: a model's module paths of N parts (as ``named_modules()`` spells
    them), each layer index made ``*`` so one region holds that part of every layer
    (``model.bert.encoder.layer.*.attention``); none when it has no path that deep.  Built on the CPU
    at float32: only names are read."""
    import torch

    model = load_suite(suite)[name]("cpu", torch.float32, "inference")[0]
    out: list[str] = []
    for path, _ in model.named_modules():
        parts = path.split(".") if path else []
        if len(parts) == depth:
            glob = ".".join("*" if p.isdigit() else p for p in parts)
            if glob not in out:
                out.append(glob)
    return out

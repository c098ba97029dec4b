"""Preloaded by the bench's forkserver (see runner._context): imports, and the per-process work that
does not depend on the cell (Inductor probing which vector ISA the CPU's compiler supports; the
suite's packages and model classes).  Nothing here starts a thread or touches CUDA, so forking from
it is safe."""
import os

import torch  # noqa: F401
import torch._inductor.codecache  # noqa: F401
import torch._inductor.compile_fx  # noqa: F401
from torch._inductor.cpu_vec_isa import pick_vec_isa

import inductor_ablate  # noqa: F401
from inductor_ablate.bench import cell  # noqa: F401
from inductor_ablate.bench.models import preload
from inductor_ablate.bench.runner import PRELOAD_ENV

pick_vec_isa()
preload(os.environ.get(PRELOAD_ENV, ""))

"""inductor_ablate: switch TorchInductor's optimizations off one at a time, and measure them.

The package lives in overlay/ (imported as ``inductor_ablate``), the patch definitions in patches/
(``inductor_ablate.patches``).  Installing also drops ``inductor_ablate.pth`` into site-packages: a
one-line start-up hook that imports the overlay only when an INDUCTOR_* variable is set.
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "inductor_ablate.pth"
HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithStartupHook(build_py):
    """Put the .pth file at the top of the wheel, i.e. directly in site-packages."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(HERE, "overlay", PTH), os.path.join(self.build_lib, PTH))

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


class EditableWheelWithStartupHook(editable_wheel):
    """``pip install -e .`` builds a wheel of path hooks; add the start-up .pth to it as well."""

    def _select_strategy(self, *args, **kwargs):
        strategy = super()._select_strategy(*args, **kwargs)

        class WithStartupHook:
            def __call__(self, wheel, files, mapping):
                strategy(wheel, files, mapping)
                with open(os.path.join(HERE, "overlay", PTH), "rb") as f:
                    wheel.writestr(PTH, f.read())

            def __enter__(self):
                strategy.__enter__()
                return self

            def __exit__(self, *exc):
                return strategy.__exit__(*exc)

        return WithStartupHook()


setup(
    name="inductor_ablate",
    version="0.1.0",
    description="Switch TorchInductor's optimizations off one at a time (fusion, inlining, C++ grouping) and measure them",
    python_requires=">=3.10",
    packages=["inductor_ablate", "inductor_ablate.patches", "inductor_ablate.bench", "inductor_ablate.views", "inductor_ablate.commands"],
    package_data={"inductor_ablate.views": ["*.j2"]},
    package_dir={"inductor_ablate": "overlay", "inductor_ablate.patches": "patches"},
    # the torch versions whose Inductor source every patch was checked against (docs/compatibility.md)
    install_requires=["torch>=2.9.1,<2.16", "sympy"],
    extras_require={"test": ["pytest", "pytest-xdist", "expecttest", "numpy", "hypothesis", "matplotlib", "jinja2", "triton", "submitit"],
                    "bench": ["matplotlib", "jinja2", "tqdm"],
                    "report": ["matplotlib", "jinja2"],
                    "cluster": ["submitit"]},
    entry_points={"console_scripts": ["inductor-ablate=inductor_ablate.__main__:main"]},
    cmdclass={"build_py": BuildPyWithStartupHook, "editable_wheel": EditableWheelWithStartupHook},
)

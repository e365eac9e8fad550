"""What an installed package promises beyond its functions: a light import, lazy
optional dependencies, the version in one place, and type information."""

import json
import subprocess
import sys
from importlib import metadata, resources

import pytest

import kernelselect

HEAVY = ("sklearn", "pandas", "matplotlib", "tqdm", "pyfftw", "dask", "scipy.fft")


def _run(code):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_does_not_load_optional_heavy_modules():
    out = _run("import json, sys, kernelselect\n"
               f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_lazy_names_resolve_on_access():
    out = _run("import sys, kernelselect\n"
               "from kernelselect import KernelSelectionCV, DINystroem, fit_lssvm\n"
               "assert KernelSelectionCV.__module__ == 'kernelselect.models'\n"
               "assert DINystroem.__module__ == 'kernelselect.di.transformers'\n"
               "assert kernelselect.models.fit_lssvm is fit_lssvm\n"
               "assert 'KernelSelectionCV' in dir(kernelselect)\n"
               "print('sklearn' in sys.modules)")
    assert out.strip().splitlines()[-1] == "True"


def test_every_public_name_resolves():
    for name in kernelselect.__all__:
        assert getattr(kernelselect, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        kernelselect.nonexistent  # noqa: B018


def test_version_matches_metadata():
    assert kernelselect.__version__ == metadata.version("kernelselect")

"""Type information: py.typed and stubs ship with the package, the public API is
annotated, and mypy (configured in pyproject.toml) is clean on src/."""

import ast
import importlib
import os
import subprocess
import sys
import typing
from importlib import resources
from pathlib import Path

import pytest

import kernelselect

ROOT = Path(__file__).resolve().parents[1]


def test_package_is_marked_typed_and_ships_stubs_for_its_extensions():
    files = resources.files("kernelselect")
    assert files.joinpath("py.typed").is_file()
    for module in ("_kernels", "_rff", "_mcm", "_predict", "_openmp_info"):
        assert files.joinpath(f"{module}.pyi").is_file(), module


@pytest.mark.parametrize("module", ["_kernels", "_rff", "_mcm", "_predict", "_openmp_info"])
def test_stubs_declare_exactly_what_the_compiled_modules_export(module):
    stub = resources.files("kernelselect").joinpath(f"{module}.pyi").read_text()
    declared = {node.name for node in ast.parse(stub).body if isinstance(node, ast.FunctionDef)}
    declared |= {node.target.id for node in ast.parse(stub).body
                 if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    compiled = importlib.import_module(f"kernelselect.{module}")
    exported = {name for name in dir(compiled) if not name.startswith("__")}
    assert declared == exported


def test_public_functions_are_annotated():
    hints = typing.get_type_hints(kernelselect.select_kernel)
    assert {"X", "y", "criterion", "approximation", "return"} <= set(hints)
    assert hints["return"] is kernelselect.SelectionResult
    assert kernelselect.SelectionResult.plot.__annotations__["return"] == "Figure"
    from kernelselect import criteria, datasets

    for func in (criteria.get_criterion, criteria.register_criterion,
                 criteria.unregister_criterion, criteria.criterion_names,
                 datasets.list_datasets, datasets.load):
        assert "return" in func.__annotations__, func.__name__


def test_approximations_estimators_and_lowlevel_are_annotated():
    from kernelselect import kernels, lowlevel

    for cls in (kernelselect.Exact, kernelselect.Nystroem, kernelselect.RFF,
                kernelselect.MCM, kernelselect.RandomMCM):
        for method in ("__init__", "prepare", "build"):
            hints = typing.get_type_hints(getattr(cls, method))
            assert "return" in hints and len(hints) > 1, (cls.__name__, method)
    for cls in (kernelselect.LSSVMClassifier, kernelselect.KernelRidgeRegressor,
                kernelselect.KernelSelectionCV):
        for method in ("__init__", "fit", "predict"):
            assert "return" in getattr(cls, method).__annotations__, (cls.__name__, method)
    assert kernelselect.fit_lssvm.__annotations__["return"] == "KernelMachine"
    for func in (kernelselect.set_config, kernelselect.get_config, kernelselect.config_context,
                 kernelselect.cross_validate_grid, kernelselect.nystrom_cv_setting,
                 kernelselect.ProportionalNystroem.__init__):
        assert "return" in func.__annotations__, func.__name__
    for name in lowlevel.__all__:
        assert "return" in typing.get_type_hints(getattr(lowlevel, name)), name
    for name in ("kernel_diagonal", "sample_frequencies", "scale_frequencies",
                 "median_heuristic_gamma"):
        assert "return" in typing.get_type_hints(getattr(kernels, name)), name


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file() or not (ROOT / "src").is_dir(),
                    reason="needs the source tree")
def test_mypy_is_clean_on_src():
    pytest.importorskip("mypy")
    cache = ROOT / "build" / "mypy_cache"
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, MYPY_FORCE_COLOR="0"))
    assert proc.returncode == 0, proc.stdout + proc.stderr

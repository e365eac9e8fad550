"""The asv suite loads: every benchmark module imports and its classes' parameters are
well formed, as ``asv run`` discovers them (a module that fails to import drops the
whole suite)."""

import importlib
import inspect
import itertools
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
MODULES = sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))


@pytest.fixture(scope="module", autouse=True)
def _benchmarks_on_path():
    sys.path.insert(0, str(ROOT))
    yield
    sys.path.remove(str(ROOT))


@pytest.mark.parametrize("name", MODULES)
def test_benchmark_module_imports_with_well_formed_parameters(name):
    module = importlib.import_module(f"benchmarks.{name}")
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if c.__module__ == module.__name__
               and any(a.startswith(("time_", "peakmem_", "track_")) for a in dir(c))]
    assert classes, f"{name} defines no benchmark"
    for cls in classes:
        params = getattr(cls, "params", [])
        names = getattr(cls, "param_names", [])
        if params and not isinstance(params[0], (list, tuple)):
            params = [params]
        assert len(names) == len(params), cls.__name__
        assert all(len(p) >= 1 for p in params), cls.__name__
        assert len(list(itertools.product(*params))) >= 1

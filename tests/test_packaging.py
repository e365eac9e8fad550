"""What an installed package promises beyond its functions: a light import, lazy
optional dependencies, the version in one place, and type information."""

import ast
import json
import subprocess
import sys
from importlib import metadata, resources
from pathlib import Path

import pytest

import kernelselect

HEAVY = ("sklearn", "pandas", "matplotlib", "tqdm", "pyfftw", "dask", "scipy.fft")
# Loaded on first use of a public name, not by `import kernelselect`: SciPy (the compiled
# extensions cimport its BLAS, which imports scipy.linalg) and the extensions themselves.
DEFERRED = ("scipy", "scipy.linalg", "kernelselect._kernels", "kernelselect._rff",
            "kernelselect._mcm", "kernelselect._predict", "kernelselect.criteria",
            "kernelselect.selection", "kernelselect.operators")


def _run(code):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_does_not_load_optional_heavy_modules():
    out = _run("import json, sys, kernelselect\n"
               f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_import_defers_scipy_and_the_compiled_extensions_until_first_use():
    out = _run("import json, sys, kernelselect\n"
               f"before = [m for m in {DEFERRED!r} if m in sys.modules]\n"
               "kernelselect.select_kernel\n"
               f"after = [m for m in {DEFERRED!r} if m in sys.modules]\n"
               "print(json.dumps([before, after]))")
    before, after = json.loads(out.strip().splitlines()[-1])
    assert before == []
    assert {"scipy.linalg", "kernelselect._kernels", "kernelselect.selection"} <= set(after)


def test_lowlevel_and_select_kernel_leave_scipy_optimize_unloaded():
    # scipy.optimize (about 20 MB resident) is imported by the one grid fit that uses it.
    out = _run("import sys\n"
               "from kernelselect import lowlevel\n"
               "import kernelselect\n"
               "kernelselect.select_kernel\n"
               "before = 'scipy.optimize' in sys.modules\n"
               "from kernelselect.primitives._grid import fit_spacing\n"
               "import numpy as np\n"
               "fit_spacing(np.arange(8.0).reshape(4, 2), (2, 2), random_state=0)\n"
               "print(before, 'scipy.optimize' in sys.modules)")
    assert out.strip().splitlines()[-1] == "False True"


def test_star_import_and_dir_list_every_public_name():
    out = _run("import kernelselect\n"
               "names = set(dir(kernelselect))\n"
               "ns = {}\n"
               "exec('from kernelselect import *', ns)\n"
               "missing = [n for n in kernelselect.__all__ if n not in names or n not in ns]\n"
               "print(missing, 'criteria' in names, 'selection' in names)")
    assert out.strip().splitlines()[-1] == "[] True True"


def test_type_checking_imports_match_the_lazy_names():
    # Type checkers and IDEs read the `if TYPE_CHECKING:` imports; at run time the
    # names come from _LAZY and _SUBMODULES. The two must name the same objects.
    tree = ast.parse(Path(kernelselect.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    static, modules = {}, set()
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            if node.module is None:
                modules.add(alias.name)
            else:
                static[alias.asname or alias.name] = node.module
    assert static == kernelselect._LAZY
    assert modules == kernelselect._SUBMODULES
    eager = {name for name in kernelselect.__all__ if name not in static.keys() | modules}
    assert eager == {"__version__", "set_config", "get_config", "reset_config",
                     "config_context"}


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


COMPILED = ("_openmp_info", "_mcm", "_rff", "_kernels", "_predict")
CIMPORT_API = ("_mcm", "_rff", "_kernels", "_predict")


def test_each_compiled_module_ships_with_its_stub_and_cimport_declarations():
    files = resources.files("kernelselect")
    assert files.joinpath("py.typed").is_file()
    for module in COMPILED:
        assert files.joinpath(f"{module}.pyi").is_file(), module
    for module in CIMPORT_API:
        assert files.joinpath(f"{module}.pxd").is_file(), module
    # the Status every .pxd function returns ships too; the kernels' inline building
    # blocks do not
    assert files.joinpath("_status.pxd").is_file()
    assert not files.joinpath("_common.pxd").is_file()


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (ROOT / "ext" / "kernelselect").is_dir(), reason="needs the source tree")
def test_a_compiled_modules_sources_sit_together():
    ext = ROOT / "ext" / "kernelselect"
    for module in COMPILED:
        assert (ext / f"{module}.pyx").is_file() and (ext / f"{module}.pyi").is_file(), module
    for module in CIMPORT_API:
        assert (ext / f"{module}.pxd").is_file(), module
    assert not list((ROOT / "src" / "kernelselect").glob("*.pyi"))

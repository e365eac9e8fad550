"""The package's structure: every import points down the layers of the rank table
below, no import cycle among its modules, and a criterion registry that is complete as
soon as the package is imported."""

import ast
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kernelselect
from kernelselect import criteria

SRC = pathlib.Path(kernelselect.__file__).resolve().parent
EXT = SRC.parents[1] / "ext" / "kernelselect"


def _modules():
    return _modules_at(SRC)


def _modules_at(src):
    """Dotted name → (path, is_package) of every Python module of the package at
    ``src``; compiled extension modules (ext/*.pyx) are leaves with path None."""
    mods = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    for path in sorted(EXT.glob("*.pyx")) + sorted(SRC.glob("*.so")) + sorted(SRC.glob("*.pyd")):
        mods.setdefault(f"kernelselect.{path.name.split('.')[0]}", (None, False))
    return mods


def _imports(name, path, is_pkg, modules, every=False):
    """Modules of the package that ``name`` imports: the imported module, and every
    package on its way whose ``__init__`` runs first (``name``'s own ancestors are
    already being imported then, so they count only when they are the target).

    ``every``: also the imports inside functions and under ``if TYPE_CHECKING:`` (a
    dependency all the same, deferred or for the type checker only); otherwise the
    statements at module level, which are what runs on import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = name if is_pkg else name.rpartition(".")[0]
    out = set()

    def add(target):
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            t = ".".join(parts[:i])
            if t in modules and t != name and (t == target or not name.startswith(t + ".")):
                out.add(t)

    for node in (ast.walk(tree) if every else tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kernelselect":
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "kernelselect":
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                add(sub if sub in modules else mod)
    return out


def _cycles(graph):
    cycles, state = [], {}

    def visit(u, stack):
        state[u] = "open"
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == "open":
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v, stack)
        stack.pop()
        state[u] = "done"

    for u in sorted(graph):
        if u not in state:
            visit(u, [])
    return cycles


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_module_level_imports_are_acyclic():
    modules = _modules()
    assert "kernelselect.criteria" in modules and "kernelselect._kernels" in modules
    graph = {m: _imports(m, p, k, modules) for m, (p, k) in modules.items() if p}
    registry = graph["kernelselect.criteria.registry"]
    assert {"kernelselect.criteria.random_mcm", "kernelselect.operators"} <= registry
    assert "kernelselect.criteria.registry" in graph["kernelselect.criteria"]
    assert _cycles(graph) == []
    # the same analysis finds the cycle a lower layer importing a higher one would make
    # (the package façade imports its names lazily, so importing it closes no cycle)
    graph["kernelselect.operators"] = graph["kernelselect.operators"] | {"kernelselect.criteria"}
    assert _cycles(graph)


#: The layers of the package, lowest first: a module may import only from a layer below
#: its own (and, inside one subpackage, as that subpackage's own table says). A unit is
#: a top-level module or subpackage of ``kernelselect``; ``kernelselect`` itself is the
#: lazy façade over the public names. The compiled extensions are leaves.
LAYERS = [
    # leaves: compiled kernels, the version, type aliases
    {"_kernels", "_rff", "_mcm", "_predict", "_nystrom_passes", "_openmp_info", "_version",
     "_typing"},
    # the package's utilities (checks, settings, memory guard, threads, labels, targets, Dask)
    {"utils"},
    # every automatic rule, each with its study (pure: it imports nothing of the package)
    {"_policy"},
    # the kernel families; the FFT layer and the data readers
    {"kernels"},
    {"fft", "datasets"},
    # validated wrappers over the compiled kernels, then their stable public face
    {"primitives"},
    {"lowlevel"},
    # stand-ins for the kernel matrix, then the criteria written over them
    {"operators"},
    {"criteria"},
    # the per-feature kernel's objectives and their gradient search
    {"ard"},
    # solvers of the kernel machines: the machine protocol (fitting recipes), the exact
    # solvers, and the Nyström conjugate-gradient engine
    {"solvers"},
    # the selection: driver, policy, search, result, plots, the per-feature kernel
    {"selection"},
    # kernel machines, cross-validation, estimators; discriminant-information learning
    {"di", "models"},
    # the public façade, then the command line over it
    {"kernelselect"},
    {"cli"},
    {"__main__"},
]

#: Inside a subpackage, the same rule between its modules (``""`` is its ``__init__``).
SUBLAYERS = {
    "utils": [
        {"_validation", "_config", "_progress", "_scaling", "_warnings", "_lapack"},
        {"_resources"},
        {"_threads", "_labels", "_sklearn", "_kernel_family"},
        {"_dask", "_targets"},
        {""},
    ],
    "primitives": [
        {"_kernel_ops"},
        {"_columns", "_grid"},
        {"_show_config"},
        {""},
    ],
    "operators": [
        {"_base"},
        {"_tridiagonal", "_feature_maps", "_lowrank"},
        {"_samplers", "_row_passes", "streaming"},
        {"streaming_lowrank"},
        {"streaming_exact", "streaming_random_mcm"},
        {"dense", "nystrom", "rff", "mcm", "random_mcm"},
        {""},
    ],
    "criteria": [
        {"_base"},
        {"error", "alignment", "spectral", "discriminant", "random_mcm"},
        {"kfold"},
        {"registry"},
        {""},
    ],
    "selection": [
        {"_plotting"},
        {"_result"},
        {"_checkpoint"},
        {"_search", "_ard_select"},
        {"_policy"},
        {"_driver"},
        {""},
    ],
    "ard": [
        {"_base"},
        {"_exact", "_nystrom"},
        {"_search"},
        {""},
    ],
    "solvers": [
        {"_recipe", "_rows", "_cg_monitor", "_checkpoint"},
        {"_exact"},
        {"_pcg"},
        {"_loo"},
        {"_nystroem_pcg"},
        {""},
    ],
    "models": [
        {"_dask_input", "_uncertainty_plots"},
        {"_cv", "_scaling"},
        {"_fit_policy", "_uncertainty"},
        {"_machines"},
        {"_selection_cv"},
        {""},
    ],
}

#: Upward imports that remain for now, each with the reason; nothing may be added.
KNOWN_UPWARD = {
    # the result's plots annotate with SelectionResult (for the type checker only)
    ("kernelselect.selection._plotting", "kernelselect.selection._result"),
}


def _rank_of(layers):
    return {unit: i for i, layer in enumerate(layers) for unit in layer}


def _unit(module):
    """(top-level unit, module inside it or None) of a dotted module name."""
    parts = module.split(".")[1:]
    if not parts:
        return "kernelselect", None
    return parts[0], ".".join(parts[1:])


def _upward_imports(src=SRC):
    """Every import (module level, in functions, under TYPE_CHECKING) of the package at
    ``src`` that does not point to a lower layer: [(importer, imported, why)]."""
    modules = _modules_at(src)
    ranks = _rank_of(LAYERS)
    unknown = {_unit(m)[0] for m in modules} - set(ranks)
    assert not unknown, f"modules missing from the rank table LAYERS: {sorted(unknown)}"
    bad = []
    for name, (path, is_pkg) in modules.items():
        if path is None:
            continue
        for target in sorted(_imports(name, path, is_pkg, modules, every=True)):
            (a, inner_a), (b, inner_b) = _unit(name), _unit(target)
            if a == b:
                sub = SUBLAYERS.get(a)
                if sub is None:
                    continue                      # checked for cycles only
                inner = _rank_of(sub)
                for m in (inner_a, inner_b):
                    assert m in inner, f"{a}.{m} is missing from SUBLAYERS[{a!r}]"
                if inner[inner_a] <= inner[inner_b]:
                    bad.append((name, target, f"{a}: layer {inner[inner_a]} imports "
                                              f"layer {inner[inner_b]}"))
            elif ranks[a] <= ranks[b]:
                bad.append((name, target, f"layer {ranks[a]} imports layer {ranks[b]}"))
    return bad


def test_imports_point_down_the_layers():
    bad = [b for b in _upward_imports() if b[:2] not in KNOWN_UPWARD]
    assert bad == [], "imports that do not point to a lower layer:\n" + "\n".join(
        f"  {a} -> {b} ({why})" for a, b, why in bad)
    stale = KNOWN_UPWARD - {b[:2] for b in _upward_imports()}
    assert not stale, f"KNOWN_UPWARD lists imports that are gone: {sorted(stale)}"


@pytest.mark.parametrize("plant", [
    # a utility reaching up to the driver, in a function (a deferred import)
    ("utils/_validation.py", "\n\ndef _planted():\n    from ..selection import select_kernel\n"),
    # an operator reaching up to the criteria, for the type checker only
    ("operators/dense.py", "\nif TYPE_CHECKING:\n    from ..criteria import Criterion\n"),
    # inside a subpackage: the protocol importing an approximation built on it
    ("operators/_base.py", "\nfrom . import nystrom\n"),
    # inside the selection: the policy reaching up to the driver that follows it
    ("selection/_policy.py", "\n\ndef _planted():\n    from ._driver import select_kernel\n"),
])
def test_layering_check_fails_on_a_planted_upward_import(tmp_path, plant):
    """The check above, run on a copy of the package with one upward import added,
    reports that import (and only imports that are not already known)."""
    copy = tmp_path / "kernelselect"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__",
                                                             "data"))
    where, text = plant
    target = copy / where
    target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")
    bad = [b for b in _upward_imports(copy) if b[:2] not in KNOWN_UPWARD]
    importer = "kernelselect." + where.removesuffix(".py").replace("/", ".")
    assert [b[0] for b in bad] == [importer], bad


#: the approximation classes of the package, which drivers use through the protocol
APPROXIMATIONS = {"Exact", "Nystroem", "RFF", "MCM", "RandomMCM", "ProportionalNystroem"}
#: the protocol's optional parts, asked for by name instead of through the protocol
PROTOCOL_NAMES = {"build_all", "prefers_per_gamma", "label", "provides", "rescaled",
                  "capabilities", "machine"}
def _type_switches(src=SRC):
    """(module, what) for every ``isinstance`` against an approximation class and
    every ``getattr``/``hasattr`` of a protocol name outside ``operators/``."""
    found = set()
    for name, (path, _) in _modules_at(src).items():
        if path is None or name.startswith("kernelselect.operators"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id == "isinstance" and len(node.args) == 2:
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                for kind in kinds:
                    if isinstance(kind, ast.Name) and kind.id in APPROXIMATIONS:
                        found.add((name, f"isinstance {kind.id}"))
            elif node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
                key = node.args[1]
                if isinstance(key, ast.Constant) and key.value in PROTOCOL_NAMES:
                    found.add((name, f"getattr {key.value}"))
    return found


def test_no_type_switch_on_approximations_outside_operators():
    assert _type_switches() == set(), "use the Approximation protocol instead"


#: eigensolvers and Cholesky factorisations the per-feature objectives (``ard/``) take
#: from the library (the Nyström eigen-floor rule, the compiled eigensolver and
#: Cholesky factorisation, ``shifted_cholesky``) instead of calling their own
OWN_FACTORISATIONS = {"eigh", "eigvalsh", "potrf", "dpotrf", "cholesky"}


def _own_factorisations(src=SRC):
    """(module file, function) of every call of an eigensolver or Cholesky
    factorisation by name inside ``ard/``."""
    room = src / "ard"
    assert room.is_dir(), "the per-feature objectives have their room, ard/"
    found = set()
    for path in sorted(room.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = (f.attr if isinstance(f, ast.Attribute)
                        else f.id if isinstance(f, ast.Name) else None)
                if name in OWN_FACTORISATIONS:
                    found.add((path.name, name))
    return found


def test_per_feature_objectives_factor_with_the_library(tmp_path):
    assert _own_factorisations() == set()
    copy = tmp_path / "kernelselect"
    shutil.copytree(SRC / "ard", copy / "ard", ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "ard" / "_nystrom.py"
    target.write_text(target.read_text(encoding="utf-8")
                      + "\n\ndef _planted(W):\n    return scipy.linalg.eigh(W)\n",
                      encoding="utf-8")
    assert _own_factorisations(copy) == {("_nystrom.py", "eigh")}


def _machine_probes(src=SRC):
    """(module, line, name) of every ``getattr``/``hasattr`` anywhere in the package
    whose attribute is a member of the machine protocol (what the machines call on a
    fitting recipe, :data:`kernelselect.solvers.MACHINE_PROTOCOL`, or read of a fitted
    model, :data:`kernelselect.solvers.FITTED_PROTOCOL`): the members are declared, so
    a probe means a recipe or a model that is not one."""
    from kernelselect.solvers import FITTED_PROTOCOL, MACHINE_PROTOCOL

    members = MACHINE_PROTOCOL | FITTED_PROTOCOL
    found = []
    for name, (path, _) in _modules_at(src).items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in members):
                found.append((name, node.lineno, node.args[1].value))
    return found


def test_machine_protocol_is_declared_not_probed():
    assert _machine_probes() == [], "call the declared member of MachineRecipe/KernelMachine"


def test_machine_protocol_members_are_declared():
    from kernelselect.solvers import (FITTED_PROTOCOL, MACHINE_PROTOCOL, KernelMachine,
                                      MachineRecipe)

    assert all(hasattr(MachineRecipe, m) for m in MACHINE_PROTOCOL)
    assert all(hasattr(KernelMachine, m) for m in FITTED_PROTOCOL)


@pytest.mark.parametrize("plant", [
    # the estimators asking a model whether it streams
    ("models/_machines.py",
     "\n\ndef _planted(model):\n    return hasattr(model, 'conditioning')\n", "conditioning"),
    # a solver probing a recipe for its own fit
    ("solvers/_exact.py", "\n\ndef _planted(r):\n    return getattr(r, 'fit_machine', None)\n",
     "fit_machine"),
])
def test_probe_check_fails_on_a_planted_probe(tmp_path, plant):
    copy = tmp_path / "kernelselect"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    where, text, member = plant
    target = copy / where
    target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")
    found = _machine_probes(copy)
    importer = "kernelselect." + where.removesuffix(".py").replace("/", ".")
    assert [(m, k) for m, _, k in found] == [(importer, member)]


#: the stand-in base and the stand-ins: subclassing any of them makes a stand-in
STAND_INS = {"Approximation", "Exact", "Nystroem", "RFF", "MCM", "RandomMCM"}


def _approximation_subclasses(src=SRC):
    """Modules outside ``operators/`` that define a subclass of ``Approximation`` (or of
    one of the stand-ins built on it)."""
    found = []
    for name, (path, _) in _modules_at(src).items():
        if path is None or name.startswith("kernelselect.operators"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id in STAND_INS)
                    or (isinstance(b, ast.Attribute) and b.attr in STAND_INS)
                    for b in node.bases):
                found.append((name, node.name))
    return found


def test_only_operators_subclass_approximation(tmp_path):
    assert _approximation_subclasses() == [], "a solver is a MachineRecipe, not a stand-in"
    copy = tmp_path / "kernelselect"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    target = copy / "solvers" / "_nystroem_pcg.py"
    planted = "\n\nclass Planted(_base.Approximation):\n    pass\n"
    target.write_text(target.read_text(encoding="utf-8") + planted, encoding="utf-8")
    assert _approximation_subclasses(copy) == [("kernelselect.solvers._nystroem_pcg", "Planted")]


#: the calls that validate γ: the kernel value's check and its per-feature alias; any
#: other ``check_*`` call validates γ when it is given the label "gamma"
GAMMA_CHECKS = {"check_gamma", "check_ard_gamma"}
#: the kernel's home, where the check is defined and the public kernel module's aliases
#: delegate to it
KERNEL_HOME = {"kernelselect.utils._kernel_family", "kernelselect.kernels"}
#: the most call sites γ may be validated at: the doors of a layer share one check
#: (the primitives and an approximation's build, the machines, the DI objectives)
MAX_GAMMA_CHECK_SITES = 4


def _gamma_checks(src=SRC):
    """(module, line) of every call that validates γ outside the kernel's home."""
    found = []
    for name, (path, _) in _modules_at(src).items():
        if path is None or name in KERNEL_HOME:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            called = (f.attr if isinstance(f, ast.Attribute)
                      else f.id if isinstance(f, ast.Name) else "")
            labels = {a.value for a in (*node.args, *(k.value for k in node.keywords))
                      if isinstance(a, ast.Constant)}
            if called in GAMMA_CHECKS or (called.startswith("check_") and "gamma" in labels):
                found.append((name, node.lineno))
    return found


def test_gamma_is_validated_at_few_call_sites():
    found = _gamma_checks()
    assert 1 <= len(found) <= MAX_GAMMA_CHECK_SITES, (
        f"γ validated at {len(found)} call sites {found}: let the doors of one layer share "
        "one check (primitives._kernel_ops.checked_kernel, di.objectives."
        "_check_kernel_parameters)")


@pytest.mark.parametrize("plant", [
    # a door checking γ by the kernel value itself instead of through its layer's check
    ("primitives/_columns.py",
     "\n\ndef _planted(kernel, gamma):\n    return kernel.check_gamma(gamma)\n"),
    # a scalar check of γ by name
    ("models/_machines.py",
     "\n\ndef _planted(gamma):\n    return check_positive(gamma, name='gamma')\n"),
    ("di/training.py",
     "\n\ndef _planted(gamma, d):\n    return check_ard_gamma(gamma, d)\n"),
])
def test_gamma_check_count_fails_on_a_planted_check(tmp_path, plant):
    copy = tmp_path / "kernelselect"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    where, text = plant
    target = copy / where
    before = _gamma_checks(copy)
    target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")
    importer = "kernelselect." + where.removesuffix(".py").replace("/", ".")
    added = sorted(set(_gamma_checks(copy)) - set(before))
    assert [m for m, _ in added] == [importer]
    # a check in the kernel's home is its definition or an alias, not a call site
    home = copy / "kernels.py"
    home.write_text(home.read_text(encoding="utf-8") + text, encoding="utf-8")
    assert len(_gamma_checks(copy)) == len(before) + 1


#: the longest a function's code may run, its docstring apart
MAX_FUNCTION_LINES = 120


def _long_functions(src=SRC, limit=MAX_FUNCTION_LINES):
    """(module:function, code lines) of every function whose body, without its
    docstring, spans more than ``limit`` lines."""
    found = []
    for name, (path, _) in _modules_at(src).items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            lines = node.end_lineno - node.lineno + 1
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines -= first.end_lineno - first.lineno + 1
            if lines > limit:
                found.append((f"{name}:{node.name}", lines))
    return found


def test_no_function_is_longer_than_the_limit():
    assert _long_functions() == [], f"split functions longer than {MAX_FUNCTION_LINES} lines"


def test_length_check_counts_code_not_docstrings(tmp_path):
    pkg = tmp_path / "kernelselect"
    pkg.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(12))
    doc = '    """' + "\n" * 30 + '    """\n'
    (pkg / "short.py").write_text("def f():\n" + doc + body)
    (pkg / "long.py").write_text("def g():\n" + body * 2)
    assert _long_functions(pkg, limit=20) == [("kernelselect.long:g", 25)]


def test_registry_complete_at_import():
    # a fresh interpreter: the registry right after import equals the one after calls
    # that used to load more criteria on demand, and after a selection
    code = (
        "import numpy as np, kernelselect\n"
        "n0 = len(kernelselect.criteria.CRITERIA)\n"
        "kernelselect.criteria.criterion_names(); kernelselect.criteria.get_criterion('random_kta')\n"
        "kernelselect.criteria.approximations_for('kta')\n"
        "X = np.random.default_rng(0).normal(size=(20, 2)); y = np.sign(X[:, 0]) + 0.0\n"
        "kernelselect.select_kernel(X, y, criterion='random_kta', approximation='random_mcm',\n"
        "                           gammas=[0.5, 1.0], random_state=0)\n"
        "print(n0, len(kernelselect.criteria.CRITERIA), kernelselect.CRITERIA is "
        "kernelselect.criteria.CRITERIA)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    n0, n1, same = out.stdout.split()
    assert n0 == n1 == str(len(criteria.CRITERIA)) and same == "True"
    for name in ("ree", "eloo", "eloo_multiclass", "er", "di", "kdi", "random_c1", "random_kta_row_2g"):
        assert name in criteria.CRITERIA


def test_third_party_criterion_end_to_end():
    def diagonal_mean(operator, y, alphas):
        """Mean of diag K: 1 for the Gaussian kernel. Maximise."""
        return operator.power_trace(1) / operator.n

    crit = criteria.Criterion("test_diagonal_mean", "max", "moments", "any", False,
                              diagonal_mean, description="tr K / n")
    before = len(criteria.CRITERIA)
    assert kernelselect.register_criterion(crit) is crit
    try:
        assert len(criteria.CRITERIA) == before + 1
        assert criteria.approximations_for("test_diagonal_mean")[:1] == ["exact"]
        with pytest.raises(ValueError, match="already registered"):
            criteria.register_criterion(crit)
        rng = np.random.default_rng(1)
        X = rng.normal(size=(15, 2))
        y = np.where(X[:, 0] > 0, 1.0, -1.0)
        res = kernelselect.select_kernel(X, y, criterion=["test_diagonal_mean", "kta"],
                                         gammas=[0.25, 1.0], approximation="nystrom",
                                         random_state=0)
        curve = np.asarray(res.curves["test_diagonal_mean"])
        assert curve.shape[0] == 2 and np.all(curve <= 1.0 + 1e-12) and np.all(curve > 0)
    finally:
        assert criteria.unregister_criterion("test_diagonal_mean") is crit
    assert len(criteria.CRITERIA) == before
    with pytest.raises(ValueError, match="not a known criterion"):
        criteria.get_criterion("test_diagonal_mean")
    with pytest.raises(TypeError, match="expects a Criterion"):
        criteria.register_criterion(diagonal_mean)

"""The package's structure: no import cycle among its modules, and a criterion
registry that is complete as soon as the package is imported."""

import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kernelselect
from kernelselect import criteria

SRC = pathlib.Path(kernelselect.__file__).resolve().parent
EXT = SRC.parents[1] / "ext" / "kernelselect"


def _modules():
    """Dotted name → (path, is_package) of every Python module of the package; compiled
    extension modules (ext/*.pyx) are leaves with path None."""
    mods = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    for path in sorted(EXT.glob("*.pyx")) + sorted(SRC.glob("*.so")) + sorted(SRC.glob("*.pyd")):
        mods.setdefault(f"kernelselect.{path.name.split('.')[0]}", (None, False))
    return mods


def _imports(name, path, is_pkg, modules):
    """Modules of the package that ``name`` imports: the imported module, and every
    package on its way whose ``__init__`` runs first (``name``'s own ancestors are
    already being imported then, so they count only when they are the target)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = name if is_pkg else name.rpartition(".")[0]
    out = set()

    def add(target):
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            t = ".".join(parts[:i])
            if t in modules and t != name and (t == target or not name.startswith(t + ".")):
                out.add(t)

    for node in tree.body:
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

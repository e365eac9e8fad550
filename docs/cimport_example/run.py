"""Compile the downstream extension against the installed kernelselect, run it, and
check it against kernelselect's Python API.

    python run.py [BUILD_DIR]

Needs meson, ninja, Cython and a C compiler (the ``docs`` extra brings the first
three). The documentation build calls :func:`build_and_run` and shows its output.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def kernelselect_include():
    """The folder that holds ``kernelselect/_kernels.pxd``: the installed package's
    parent; for an editable install of a source checkout, the checkout's ext/."""
    import kernelselect

    package = os.path.dirname(os.path.abspath(kernelselect.__file__))
    candidates = [os.path.dirname(package),
                  os.path.join(os.path.dirname(os.path.dirname(package)), "ext")]
    for folder in candidates:
        if os.path.exists(os.path.join(folder, "kernelselect", "_kernels.pxd")):
            return folder
    raise FileNotFoundError(f"kernelselect/_kernels.pxd is in none of {candidates}")


def _run(command):
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{proc.stdout}\n{proc.stderr}")


def build(build_dir):
    """Configure and compile with meson; returns the path of the extension module."""
    meson = [sys.executable, "-m", "mesonbuild.mesonmain"]
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        _run(meson + ["setup", build_dir, HERE,
                      f"-Dkernelselect_include={kernelselect_include()}"])
    _run(meson + ["compile", "-C", build_dir])
    for name in os.listdir(build_dir):
        if name.startswith("ks_downstream") and name.endswith((".so", ".pyd")):
            return os.path.join(build_dir, name)
    raise FileNotFoundError(f"no ks_downstream extension in {build_dir}")


def load(path):
    spec = importlib.util.spec_from_file_location("ks_downstream", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_and_run(build_dir):
    """Build, import, call each function, compare with kernelselect; returns a report."""
    from threadpoolctl import threadpool_limits

    from kernelselect import lowlevel

    ext = load(build(build_dir))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 4))
    Z = rng.standard_normal((3, 4))
    lines = [f"built {os.path.basename(ext.__file__)}"]

    # The kernels call BLAS from inside their OpenMP loops: one BLAS thread around them.
    with threadpool_limits(1):
        K = ext.gaussian_block(X, Z, 0.5, threads=2)
        sums = ext.kernel_row_sums(X, 0.5, threads=2)
        best = ext.nearest_similarity(X, X[:300], 0.5, threads=2)
        W = rng.standard_normal((4, 64))
        b = rng.uniform(0, 2 * np.pi, 64)
        F = ext.random_features(X, W, b, threads=2)

    err = np.max(np.abs(K - lowlevel.kernel_block(X, Z, 0.5)))
    lines.append(f"gaussian_block: K has shape {K.shape}, max |K - kernel_block| = {err:.1e}")
    assert err < 1e-12

    ref = lowlevel.kernel_matvec(X, np.ones(len(X)), 0.5)
    err = np.max(np.abs(sums - ref) / np.abs(ref))
    lines.append(f"kernel_row_sums: {len(sums)} sums, max relative difference to "
                 f"kernel_matvec = {err:.1e}")
    assert err < 1e-12

    ref = lowlevel.kernel_block(X, X[:300], 0.5).max(axis=1)
    err = np.max(np.abs(best - ref))
    lines.append(f"nearest_similarity: {len(best)} maxima, max difference to "
                 f"kernel_block(...).max(axis=1) = {err:.1e}")
    assert err < 1e-12

    err = np.max(np.abs(F - lowlevel.rff_features(X, W, b)))
    lines.append(f"random_features: Z has shape {F.shape}, max |Z - rff_features| = {err:.1e}")
    assert err < 1e-12

    try:  # no features: the kernel returns BAD_ARGUMENT
        ext.gaussian_block(np.empty((2, 0)), np.empty((3, 0)), 0.5)
    except ValueError as exc:
        lines.append(f"a status other than OK raises: ValueError: {exc}")
    else:
        raise AssertionError("gaussian_block accepted points with no features")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(build_and_run(sys.argv[1]))
    else:
        folder = tempfile.mkdtemp(prefix="ks_downstream_")
        try:
            print(build_and_run(folder))
        finally:
            shutil.rmtree(folder)

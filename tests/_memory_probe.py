"""Run one guarded entry point in a fresh process and print, as JSON, the largest
estimate the memory guard saw and the peak resident memory the call added (the peak
during the call less the resident memory before it).

Usage: python _memory_probe.py CASE   (the cases are in CASES below)
"""

import json
import resource
import sys
import warnings

import numpy as np


def _status(field: str) -> float | None:
    """A memory field of /proc/self/status in bytes (None where there is none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset this process's peak resident memory to its current value (Linux ≥ 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak() -> float:
    """Peak resident memory of this process image. /proc's VmHWM belongs to the process
    image; ru_maxrss keeps the parent's peak across fork and exec, which would hide the
    call's own peak under the test runner's."""
    hwm = _status("VmHWM")
    if hwm is not None:
        return hwm
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0   # KiB on Linux


def _data(n, d, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype, copy=False)
    y = np.sign(X[:, 0] + 0.1 * rng.standard_normal(n))
    return X, y


def case_kernel_block():
    from kernelselect.lowlevel import kernel_block
    X, _ = _data(6000, 4)
    Z, _ = _data(6000, 4, 1)
    return lambda: kernel_block(X, Z, 0.5, workers=1)


def case_kernel_matvec_float32():
    from kernelselect.lowlevel import kernel_matvec
    X, _ = _data(64, 3)
    V = np.random.default_rng(1).standard_normal((64, 400_000), dtype=np.float32)
    return lambda: kernel_matvec(X, V, 0.5, workers=1)


def case_sample_frequencies():
    from kernelselect.kernels import sample_frequencies
    return lambda: sample_frequencies("gaussian", 10, 3_000_000, 0)


def case_fit_path():
    from kernelselect.models import fit_krr
    X, y = _data(300, 3)
    alphas = np.logspace(-3, 1, 30_000)
    return lambda: fit_krr(X, y, gamma=0.5, alpha=alphas, approximation="exact", workers=1)


def case_exact_dense():
    from kernelselect import select_kernel
    X, y = _data(2000, 4)
    return lambda: select_kernel(X, y, gammas=[0.5], alphas=[0.1, 1.0, 10.0, 100.0],
                                 criterion="eloo", approximation="exact", workers=1)


def case_nystroem_factor():
    from kernelselect import Nystroem, select_kernel
    X, y = _data(15_000, 4)
    return lambda: select_kernel(X, y, gammas=[0.5], alphas=[1.0], criterion="eloo",
                                 approximation=Nystroem(n_landmarks=600, sampler="column_norm"),
                                 random_state=0, workers=1)


def case_rff_features():
    from kernelselect.lowlevel import rff_features
    X, _ = _data(20_000, 4)
    W = np.random.default_rng(1).standard_normal((4, 1500))
    b = np.zeros(1500)
    return lambda: rff_features(X, W, b, workers=1)


def case_random_mcm():
    from kernelselect import RandomMCM, select_kernel
    X, y = _data(4000, 4)
    return lambda: select_kernel(X, y, gammas=[0.5], alphas=[1.0], criterion="random_kta",
                                 approximation=RandomMCM(n_features=2048), random_state=0,
                                 workers=1)


def case_song_xu_column():
    from kernelselect.lowlevel import song_xu_column
    return lambda: song_xu_column((4000, 6000), (0.1, 0.1), 0.5, workers=1)


def case_fit_spacing():
    from kernelselect.lowlevel import fit_spacing
    X, _ = _data(1000, 5)
    return lambda: fit_spacing(X, (25, 40), n_pairs=1_500_000, random_state=0)


def case_nystroem_streamed():
    from kernelselect import Nystroem, select_kernel
    X, y = _data(1000, 4)
    gammas = 0.5 * 2.0 ** np.arange(-4, 4)
    return lambda: select_kernel(X, y, gammas=gammas, alphas=[1.0], criterion="kta",
                                 approximation=Nystroem(n_landmarks=900), random_state=0,
                                 workers=1)


def case_kernel_sums_labels():
    from kernelselect.lowlevel import kernel_sums
    X, _ = _data(6000, 3)
    return lambda: kernel_sums(X, 0.5, labels=np.arange(6000), workers=1)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main(name: str) -> None:
    warnings.simplefilter("ignore")
    from kernelselect.utils import _resources
    call = CASES[name]()
    base = _status("VmRSS") if _reset_peak() else None
    base = _peak() if base is None else base
    with _resources.trace_allocations() as log:
        out = call()
    peak = _peak()
    del out
    print(json.dumps({"case": name, "measured": peak - base,
                      "estimate": max((b for b, _ in log), default=0.0),
                      "what": max(log, default=(0, ""))[1]}))


if __name__ == "__main__":
    main(sys.argv[1])

"""The build and run-time report :func:`show_config` (what was compiled, which OpenMP,
FFT and BLAS the package uses); the settings themselves are in
:mod:`kernelselect.utils._config`."""

from __future__ import annotations

import platform
from typing import Any, Mapping
import sys

import numpy
import scipy
import scipy.linalg  # noqa: F401  (loads the BLAS/LAPACK that scipy uses, to list it)
from threadpoolctl import threadpool_info

from .. import fft
from .._openmp_info import omp_max_threads, omp_num_procs, openmp_enabled
from .._rff import vecmath_backend
from .._version import __version__

__all__ = ["show_config"]


class _ConfigReport(dict):
    """A dict whose printed form and repr are an aligned two-column table: at the
    interactive prompt ``show_config()`` shows the report once, and the values stay a
    dict's (``cfg["openmp"]``, ``dict(cfg)``)."""

    def _lines(self, mapping: Mapping[str, Any] | None = None, indent: str = "") -> list[str]:
        mapping = self if mapping is None else mapping
        width = max((len(str(k)) for k in mapping), default=0)
        lines = []
        for key, value in mapping.items():
            if isinstance(value, dict):
                lines.append(f"{indent}{key}:")
                lines.extend(self._lines(value, indent + "  "))
            elif isinstance(value, list):
                lines.append(f"{indent}{key}:")
                for item in value:
                    if isinstance(item, dict):
                        lines.append(f"{indent}  -")
                        lines.extend(self._lines(item, indent + "    "))
                    else:
                        lines.append(f"{indent}  - {item}")
            else:
                lines.append(f"{indent}{str(key).ljust(width)} : {value}")
        return lines

    def __str__(self) -> str:
        return "\n".join(self._lines())

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:   # IPython's display
        printer.text(self.__str__())


def _blas_info() -> list[dict[str, Any]]:
    pools = []
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        pools.append(
            {
                "api": info.get("user_api"),
                "library": info.get("internal_api"),
                "version": info.get("version"),
                "threads": info.get("num_threads"),
                "file": info.get("filepath"),
            }
        )
    return pools


def show_config(mode: str = "dicts") -> dict[str, Any] | None:
    """Report how kernelselect was built and what it will use at run time.

    Parameters
    ----------
    mode : {"dicts", "stdout"}, default "dicts"
        "dicts": return the report without printing; it is a dict whose ``repr`` and
        ``str`` are an aligned table, so ``kernelselect.show_config()`` at the
        interactive prompt shows the table once, ``print(kernelselect.show_config())``
        prints it from a script, and ``cfg = kernelselect.show_config();
        cfg["openmp"]`` reads a value. "stdout": print the table and return None (the
        names and behaviour of numpy's ``show_config``).

    Returns
    -------
    config : dict or None
        None with ``mode="stdout"``; else ``version``, ``python``, ``platform``,
        ``openmp`` (bool: the compiled
        kernels were built with OpenMP), ``omp_max_threads`` (OpenMP's default team
        size, honouring ``OMP_NUM_THREADS``), ``omp_num_procs``, ``vector_math``
        (``"libmvec"`` when the cos/exp loops use glibc's vector math, else
        ``"scalar"``), ``fft_backend``
        (``"pyfftw"`` or ``"scipy"``), ``fft_threads``, ``numpy``, ``scipy`` and
        ``blas`` (the thread pools threadpoolctl finds). ``str()`` of it is the
        table.

    Examples
    --------
    >>> import kernelselect
    >>> cfg = kernelselect.show_config()
    >>> isinstance(cfg["openmp"], bool)
    True
    """
    if mode not in ("stdout", "dicts"):
        raise ValueError(f"mode={mode!r}; use 'dicts' (return the report) or 'stdout' "
                         "(print it, return None).")
    fft_info = fft.backend_info()
    report = _ConfigReport(
        version=__version__,
        python=sys.version.split()[0],
        platform=platform.platform(),
        openmp=bool(openmp_enabled()),
        omp_max_threads=int(omp_max_threads()),
        omp_num_procs=int(omp_num_procs()),
        vector_math=vecmath_backend(),
        fft_backend=fft_info["backend"],
        fft_threads=fft_info["threads"],
        pyfftw=fft_info.get("pyfftw_version"),
        numpy=numpy.__version__,
        scipy=scipy.__version__,
        blas=_blas_info(),
    )
    if mode == "stdout":
        print(report)
        return None
    return report

"""Input checks shared by every public entry point.

Each check either returns a clean array/value or raises ``ValueError`` (``TypeError``
for a wrong kind of object) whose message names the argument and says how to fix it.
Non-contiguous or other-dtype input is converted, never refused.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, Literal, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "KNOWN_KERNELS",
    "check_kernel",
    "check_matrix",
    "check_rows",
    "check_finite",
    "real_array",
    "check_vector",
    "check_positive",
    "check_positive_int",
    "check_random_state",
    "check_bool",
    "float_dtype",
    "as_array",
    "refuse_sparse_or_masked",
]

KNOWN_KERNELS = ("gaussian", "laplacian")
KERNEL_CODES = {"gaussian": 0, "laplacian": 1}
#: what a one-γ path says when asked for the per-feature kernel
ARD_ELSEWHERE = (
    "kernel='ard' (one γ per feature) is not available here: this method takes a single "
    "γ (the Song–Xu and randomised circulant stand-ins, the Laplacian family, the "
    "discriminant-information training). kernel='ard' is taken by select_kernel with "
    "approximation 'auto', 'exact' or 'nystrom', KernelSelectionCV, the LSSVM / kernel "
    "ridge machines, lowlevel.kernel_block / kernel_matvec / kernel_sums and the random-"
    "feature frequency scaling; otherwise use kernel='gaussian'."
)


def check_kernel(kernel: Any, also: tuple[str, ...] = ()) -> str:
    """Canonical name of a one-γ kernel family (``"rbf"`` is the Gaussian).

    ``also`` names the other kernels the calling entry point takes and dispatches
    itself before this check (``"ard"``, ``"auto"``); an unknown name raises a
    ``ValueError`` listing every name that entry point accepts."""
    if isinstance(kernel, str):
        name = kernel.strip().lower()
        if name == "rbf":
            name = "gaussian"
        if name in KNOWN_KERNELS:
            return name
        if name == "ard" and "ard" not in also:
            raise ValueError(ARD_ELSEWHERE)
    accepted = ", ".join((*KNOWN_KERNELS, *also))
    raise ValueError(
        f"kernel={kernel!r} is not a known kernel; use one of {accepted} ('rbf' is an "
        "alias of 'gaussian')."
    )


def float_dtype(*arrays: npt.ArrayLike) -> np.dtype[np.floating[Any]]:
    """float32 when every array is float32, else float64 (the default)."""
    if arrays and all(np.asarray(a).dtype == np.float32 for a in arrays):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _pandas_nullable(obj: Any, name: str) -> Any:
    """A pandas Series/DataFrame of nullable numeric dtypes (Int64, Float64, boolean,
    possibly beside numpy columns) as a numpy array; ``pd.NA`` entries are refused
    (numpy would make an object array of them, refused as "not numbers")."""
    if not type(obj).__module__.startswith("pandas") or not hasattr(obj, "to_numpy"):
        return obj
    dtypes = obj.dtypes if hasattr(obj, "columns") else [getattr(obj, "dtype", None)]
    nullable = [d for d in dtypes if type(d).__module__.startswith("pandas")
                and getattr(d, "kind", "O") in "iufb"]
    if not nullable:
        return obj
    missing = int(np.asarray(obj.isna()).sum())
    if missing:
        raise ValueError(
            f"{name} contains {missing} missing value(s) (pandas NA); missing values are not "
            f"supported: drop or impute them first (e.g. {name}.dropna() or "
            f"{name}.fillna(value)).")
    kinds = {getattr(d, "kind", "O") for d in dtypes}
    if kinds == {"b"}:
        return obj.to_numpy(dtype=bool)
    if kinds <= {"i", "u", "f", "b"}:
        return obj.to_numpy(dtype=np.float64)
    return obj


def refuse_sparse_or_masked(obj: Any, name: str) -> Any:
    """Sparse matrices are refused (densify explicitly); masked arrays pass only
    without masked entries (there is no notion of a missing value here); pandas
    nullable columns (Int64, Float64, boolean) become numpy arrays, refused with
    their count when they hold ``pd.NA``."""
    obj = _pandas_nullable(obj, name)
    if hasattr(obj, "toarray") and type(obj).__module__.startswith("scipy.sparse"):
        shape = getattr(obj, "shape", None)
        size = ""
        if shape is not None and len(shape) == 2:
            size = f" (a dense float64 copy of shape {shape} takes {_nbytes(shape)})"
        raise TypeError(
            f"{name} is a scipy.sparse {type(obj).__name__}; kernelselect works on dense "
            f"arrays: pass {name}.toarray() instead{size}."
        )
    if isinstance(obj, np.ma.MaskedArray):
        masked = int(np.ma.count_masked(obj))
        if masked:
            raise ValueError(
                f"{name} is a masked array with {masked} masked entries; missing values are "
                f"not supported: drop or impute them, or pass {name}.filled(value)."
            )
        return np.ma.getdata(obj)
    return obj


def _nbytes(shape: tuple[int, ...]) -> str:
    size = 8.0 * float(np.prod([float(s) for s in shape]))
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.3g} {unit}"
        size /= 1024
    return f"{size:.3g} TiB"


def screen_inputs(validate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap scikit-learn's ``validate_data`` so that X and y pass
    :func:`real_array`'s sparse and masked-array rules first (one message for the
    functions and the estimators)."""

    @functools.wraps(validate)
    def wrapper(estimator: Any, X: Any = "no_validation", y: Any = "no_validation",
                **kwargs: Any) -> Any:
        if not (isinstance(X, str) and X == "no_validation"):
            X = refuse_sparse_or_masked(X, "X")
        if not (isinstance(y, str) and y == "no_validation") and y is not None:
            y = refuse_sparse_or_masked(y, "y")
            if kwargs.get("y_numeric"):
                _numeric_target(y, type(estimator).__name__)
        return validate(estimator, X, y, **kwargs)

    return wrapper


def _numeric_target(y: Any, who: str) -> None:
    """Refuse text targets for an estimator that needs real numbers (a regressor)."""
    arr = as_array(y, "y")
    if arr.dtype.kind in "USO":
        try:
            arr.astype(np.float64)
        except (TypeError, ValueError):
            example = next((v for v in arr.ravel() if isinstance(v, (str, bytes))), None)
            raise TypeError(
                f"y must hold real numbers for {who}, got text labels (e.g. {example!r}); "
                "a regressor fits a real target: use a classifier (LSSVMClassifier) for "
                "class labels.") from None


def check_bool(value: Any, name: str) -> bool:
    """A plain bool (numpy bools too); strings, numbers and None are refused."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}.")


def as_array(obj: Any, name: str) -> np.ndarray:
    """``np.asarray(obj)``, with a message naming ``name`` for ragged nested lists
    (rows of different lengths) and objects numpy cannot convert."""
    try:
        return np.asarray(obj)
    except ValueError as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise ValueError(
                f"{name} is ragged: its rows (or entries) have different lengths; give a "
                "rectangular array, every row with the same number of values.") from None
        raise TypeError(f"{name} must be array-like: {exc}") from None
    except Exception as exc:  # pragma: no cover - exotic objects
        raise TypeError(f"{name} must be array-like: {exc}") from None


def real_array(obj: Any, name: str) -> np.ndarray:
    """``np.asarray(obj)``, refusing objects, text and complex numbers (TypeError),
    scipy.sparse matrices (TypeError) and masked arrays with masked entries."""
    obj = refuse_sparse_or_masked(obj, name)
    arr = as_array(obj, name)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}.")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise ValueError naming ``name`` when ``arr`` holds NaN or inf."""
    if not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "inf"
        raise ValueError(
            f"{name} contains {bad} values; remove or impute them before calling."
        )


def check_matrix(X: Any, name: str = "X", dtype: npt.DTypeLike | None = None,
                 min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """A finite, C-contiguous 2-D float array (float64 unless ``dtype`` says)."""
    arr = real_array(X, name)
    if arr.ndim == 1 and name.lower().startswith("x"):
        raise ValueError(
            f"{name} must be 2-D of shape (n_samples, n_features), got 1-D shape {arr.shape}; "
            f"use {name}.reshape(-1, 1) for a single feature."
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}.")
    check_rows(arr, name, min_rows, min_cols)
    dt = np.dtype(dtype) if dtype is not None else float_dtype(arr)
    arr = np.ascontiguousarray(arr, dtype=dt)
    check_finite(arr, name)
    return arr


def check_rows(arr: Any, name: str = "X", min_rows: int = 1, min_cols: int = 1) -> None:
    """Raise ValueError naming ``name`` when the 2-D ``arr`` has fewer than ``min_rows``
    rows or ``min_cols`` columns (the size rule of :func:`check_matrix`, for an array
    checked before under a weaker one)."""
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} row(s), got shape {arr.shape}.")
    if arr.shape[1] < min_cols:
        raise ValueError(f"{name} needs at least {min_cols} column(s), got shape {arr.shape}.")


@overload
def check_vector(y: Any, name: str = ..., n: int | None = ..., dtype: npt.DTypeLike = ...,
                 allow_none: Literal[False] = ...) -> np.ndarray: ...
@overload
def check_vector(y: Any, name: str = ..., n: int | None = ..., dtype: npt.DTypeLike = ...,
                 allow_none: bool = ...) -> np.ndarray | None: ...
def check_vector(y: Any, name: str = "y", n: int | None = None, dtype: npt.DTypeLike = np.float64,
                 allow_none: bool = False) -> np.ndarray | None:
    """A finite, contiguous 1-D float array of length ``n`` (when given)."""
    if y is None:
        if allow_none:
            return None
        raise ValueError(f"{name} is required.")
    arr = real_array(y, name)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}.")
    if n is not None and arr.shape[0] != n:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but X has {n} rows; they must match."
        )
    arr = np.ascontiguousarray(arr, dtype=dtype)
    check_finite(arr, name)
    return arr


def check_positive(value: Any, name: str, allow_zero: bool = False) -> float:
    """A finite positive float (or ≥ 0 with ``allow_zero``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    v = float(value)
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = "≥ 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}.")
    return v


def check_grid(values: Any, name: str, meaning: str = "") -> np.ndarray:
    """A non-empty 1-D float array of finite values > 0 (a scalar becomes shape (1,)):
    the validator of every γ and α grid. ``meaning`` (e.g. " (the ridge added to K)")
    is added to the message for a bad value."""
    raw = refuse_sparse_or_masked(values, name)
    if isinstance(raw, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in raw):
        raise TypeError(f"{name} must hold positive numbers, not True/False, got {values!r}.")
    if isinstance(raw, (str, bytes, bool, np.bool_)) or raw is None:
        raise TypeError(f"{name} must be a positive number or a sequence of them, got "
                        f"{values!r}.")
    raw = as_array(raw, name)
    if raw.dtype.kind == "O" and all(isinstance(v, numbers.Real)
                                     and not isinstance(v, (bool, np.bool_))
                                     for v in raw.ravel()):
        raw = raw.astype(np.float64)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a positive number or a sequence of them (ints or "
                        f"floats), got {values!r} (dtype {raw.dtype}).")
    arr = np.atleast_1d(raw.astype(np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of positive numbers (or one "
                         "positive number), got "
                         f"shape {arr.shape}.")
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        raise ValueError(f"{name} must all be finite and > 0{meaning}; got {float(arr[bad][0])!r}.")
    return arr


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """An int ≥ ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    v = int(value)
    if v < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}.")
    return v


def check_random_state(random_state: Any) -> np.random.Generator:
    """A numpy Generator from None, an int seed, a SeedSequence or a Generator."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(
            f"random_state must be None, an int or a numpy Generator, got the bool "
            f"{random_state!r}; give a seed such as random_state=0."
        )
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral):
        if int(random_state) < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state!r}.")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise TypeError(
        f"random_state must be None, an int or a numpy Generator, got {random_state!r}."
    )

"""Class labels → class codes, ±1 and one-vs-rest columns: the package's one label encoder.

Every part of the package that turns user labels into classes goes through
:func:`encode_labels`, so the same labels mean the same classes everywhere:

* ``classes`` are the distinct labels in :func:`numpy.unique` order (numbers
  ascending, strings lexicographic, ``False`` before ``True``);
* ``codes[i]`` is the position of sample i's label in ``classes`` (0 … C−1), so
  ``classes[codes]`` gives the labels back;
* two classes give the signed column t_i = +1 for ``classes[1]`` and −1 for
  ``classes[0]``;
* C classes give the one-vs-rest columns T (n, C), T_ik = +1 when sample i is of
  class k and −1 otherwise (the coding of least-squares SVMs for C > 2 classes,
  Suykens & Vandewalle, Neural Processing Letters 1999);
* the class indicator columns scaled to unit norm, Y_ik = 1/√n_k when sample i is
  of class k (n_k samples) and 0 otherwise: :func:`unit_indicators` (each class
  weighs the same, whatever its size; the discriminant-information criteria use it);
* decision values go back to labels by the sign (one column) or the argmax (one
  column per class): :func:`decide`.

Labels may be numbers, booleans, strings or Python objects; an object array of numbers
is read as numbers, any other object array as strings. Missing labels (NaN, None),
infinities, complex values and arrays that are not one label per sample are refused
with an error naming the argument. The module sits at the bottom of the package: it
imports nothing from it but the input checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._validation import as_array, check_vector, refuse_sparse_or_masked

__all__ = ["LabelCodes", "check_labels", "encode_labels", "codes_for", "encode_as",
           "one_vs_rest", "unit_indicators", "column_codes", "decide", "numeric_labels"]

#: which 2-D shapes count as one label per sample: none, (n, 1), or (n, 1) and (1, n)
Squeeze = Literal["none", "column", "any"]


def check_labels(y: npt.ArrayLike, name: str = "y", *, n: int | None = None,
                 squeeze: Squeeze = "column") -> np.ndarray:
    """``y`` as a 1-D array of labels, checked: one label per sample, none missing.

    Object arrays become float64 when every entry is a number, else strings.
    ``n``, when given, is the number of samples ``y`` must have.
    """
    arr = as_array(refuse_sparse_or_masked(y, name), name)
    if arr.ndim == 2 and squeeze != "none" and (
            arr.shape[1] == 1 or (squeeze == "any" and arr.shape[0] == 1)):
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n,) (one label per sample), got shape "
                         f"{arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty.")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n} rows; they must "
                         "match.")
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} is complex; give real targets or class labels.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity; remove those rows first (every "
                         "sample needs a label).")
    if arr.dtype.kind == "O":
        if any(v is None or (isinstance(v, (float, np.floating)) and not np.isfinite(v))
               for v in arr):
            raise ValueError(f"{name} contains missing labels (None or NaN); remove those "
                             "rows.")
        arr = _plain(arr)
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinity; remove those rows first.")
    return arr


def _plain(arr: np.ndarray) -> np.ndarray:
    """An object array as numbers when every entry is one, else as strings."""
    if arr.dtype.kind != "O":
        return arr
    try:                          # numbers stored as objects are numbers
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        return arr.astype(str)


@dataclass(frozen=True)
class LabelCodes:
    """Labels as class codes: ``classes[codes]`` is the label array.

    Attributes
    ----------
    classes : ndarray (C,)
        The distinct labels in :func:`numpy.unique` order.
    codes : ndarray (n,) of intp
        Each sample's class position, 0 … C−1.
    """

    classes: np.ndarray
    codes: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    def signed(self) -> np.ndarray:
        """Two classes as floats: −1 for ``classes[0]``, +1 for ``classes[1]``, shape (n,)."""
        if self.n_classes != 2:
            raise ValueError(f"±1 labels need two classes, there are {self.n_classes}.")
        return np.where(self.codes == 1, 1.0, -1.0)

    def one_vs_rest(self) -> np.ndarray:
        """±1 columns (n, C): +1 in the column of the sample's class, −1 elsewhere."""
        n = self.codes.shape[0]
        T = -np.ones((n, self.n_classes))
        T[np.arange(n), self.codes] = 1.0
        return T

    def unit_indicators(self) -> np.ndarray:
        """Class indicator columns scaled to unit norm (n, C): :func:`unit_indicators`."""
        return unit_indicators(self.codes, self.n_classes)

    def columns(self) -> np.ndarray:
        """The targets of a kernel machine: one ±1 column for two classes (``classes[1]``
        ↔ +1), the one-vs-rest columns for more, shape (n, t)."""
        return self.signed()[:, None] if self.n_classes == 2 else self.one_vs_rest()

    def decode(self, codes: npt.ArrayLike) -> np.ndarray:
        """Class codes → labels."""
        return self.classes[np.asarray(codes, dtype=np.intp)]


_WORDS = {2: "two", 3: "three"}


def _shown(values: np.ndarray) -> str:
    return ", ".join(map(str, values[:6].tolist())) + (", ..." if values.size > 6 else "")


def encode_labels(y: npt.ArrayLike, name: str = "y", *, n: int | None = None,
                  squeeze: Squeeze = "column", exactly: int | None = None,
                  needs: str = "binary labels need", who: str = "",
                  checked: bool = False, min_classes: int = 2) -> LabelCodes:
    """Encode class labels: :class:`LabelCodes` (by default with at least two classes).

    Parameters
    ----------
    y : array_like (n,)
        Class labels of any sortable kind (numbers, booleans, strings).
    name : str
        The argument's name in error messages.
    n : int, optional
        The number of samples ``y`` must hold.
    squeeze : {"none", "column", "any"}
        Which 2-D shapes are read as one label per sample: none, (n, 1), or also (1, n).
    exactly : int, optional
        The number of classes required (2 for binary labels); ``needs`` starts the
        message when the count differs ("binary labels need", "task='binary' needs").
    who : str
        Appended to the messages: who needs the classes, e.g. " (criterion 'mmd' needs
        two classes)".
    checked : bool
        ``y`` is already a 1-D array from :func:`check_labels`; skip the checks.
    min_classes : {2, 1}
        1 accepts labels of a single class (sums over class blocks, strata).

    Raises
    ------
    ValueError
        A single class, a different number of classes than ``exactly``, or labels that
        cannot be compared (or the errors of :func:`check_labels`).
    """
    arr = np.asarray(y) if checked else check_labels(y, name, n=n, squeeze=squeeze)
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"{name} must be mutually comparable class labels: {exc}") from None
    count = _WORDS.get(exactly or 0, str(exactly))
    if classes.shape[0] < min_classes:
        tail = (f"{needs} exactly {count} distinct values, {name} has 1; give labels of "
                f"{count} classes." if exactly else
                "give labels of at least two classes.")
        raise ValueError(f"{name} holds one class only ({classes[0].item()!r} for all "
                         f"{arr.shape[0]} samples): a single class has nothing to "
                         f"separate{who}; {tail}")
    if exactly is not None and classes.shape[0] != exactly:
        raise ValueError(f"{needs} exactly {count} distinct values, {name} has "
                         f"{classes.shape[0]} distinct values ({_shown(classes)}){who}; use "
                         "task='multiclass' or 'regression' (or a one-vs-rest encoding) "
                         "instead.")
    return LabelCodes(classes, np.ascontiguousarray(codes.ravel(), dtype=np.intp))


def codes_for(labels: npt.ArrayLike, classes: np.ndarray, name: str = "y") -> np.ndarray:
    """Class codes of ``labels`` under known ``classes`` (the ``classes`` of
    :func:`encode_labels` on the same or the training labels): positions in
    ``classes``, intp. For labels handed over in pieces, such as the chunks of a Dask
    array; a label outside ``classes`` raises."""
    arr = _plain(np.asarray(labels))
    if arr.size == 0 or classes.shape[0] == 0:
        return np.zeros(arr.shape, dtype=np.intp)
    codes = np.minimum(np.searchsorted(classes, arr), classes.shape[0] - 1).astype(np.intp)
    unknown = classes[codes] != arr
    if np.any(unknown):
        raise ValueError(f"{name} holds {arr[unknown][0].item()!r}, which is not one of its "
                         f"classes ({_shown(classes)}).")
    return codes


def encode_as(labels: npt.ArrayLike, classes: np.ndarray, task: str) -> np.ndarray:
    """Labels as the criteria see them, given the classes: ±1 (``classes[1]`` → +1) for
    task "binary", codes 0 … C−1 as floats for "multiclass", the values as floats for
    "regression" (``classes`` unused), float64 of the labels' shape."""
    if task == "regression":
        return np.asarray(labels, dtype=np.float64)
    codes = codes_for(labels, classes)
    if task == "binary":
        return np.where(codes == 1, 1.0, -1.0)
    return codes.astype(np.float64)


def one_vs_rest(y: npt.ArrayLike, name: str = "y", who: str = "") -> np.ndarray:
    """Class labels (n,) → ±1 one-vs-rest columns (n, C), classes in sorted order;
    a 2-D array of ±1 columns is checked and returned as float64."""
    arr = np.asarray(y)
    if arr.ndim == 2:
        T = np.asarray(arr, dtype=np.float64)
        if not np.all(np.abs(T) == 1.0):
            raise ValueError("one-vs-rest targets must hold only -1 and +1.")
        return T
    return encode_labels(arr, name, who=who).one_vs_rest()


def unit_indicators(codes: npt.ArrayLike, n_classes: int) -> np.ndarray:
    """Indicator columns (n, C) scaled to unit norm: Y_ik = 1/√n_k when ``codes[i]`` = k
    (n_k samples of class k); a class with no sample gives a zero column."""
    codes = np.asarray(codes, dtype=np.intp)
    n = codes.shape[0]
    Y = np.zeros((n, n_classes))
    Y[np.arange(n), codes] = 1.0
    Y /= np.sqrt(np.maximum(Y.sum(axis=0), 1.0))
    return Y


def column_codes(F: np.ndarray) -> np.ndarray:
    """Class codes from decision values or ±1 target columns F (n, t, ...): the sign of
    the one column (≥ 0 → 1, else 0) or the argmax over the one-vs-rest columns; the
    inverse of :meth:`LabelCodes.columns`."""
    if F.shape[1] == 1:
        return (F[:, 0] >= 0).astype(np.intp)
    return np.argmax(F, axis=1)


def decide(F: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class labels from decision values F (n, t, ...): ``classes[column_codes(F)]``."""
    return classes[column_codes(F)]


def numeric_labels(y: Any, name: str, n: int) -> np.ndarray:
    """Labels already in numbers (±1, class weights or a real target): a finite float64
    vector of ``n`` entries."""
    return check_vector(y, name, n=n)

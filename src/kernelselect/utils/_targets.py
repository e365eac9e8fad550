"""What kind of target y is, and its encodings: one rule for the whole package.

The selection function, the estimator and the command line all ask :func:`detect_task`
and encode labels with :func:`prepare_targets`, so the same y is the same problem
everywhere.

The rule (``task="auto"``), in order:

1. Labels that are not numbers (strings, objects, booleans) are classes: two of them
   make a binary problem, more a multi-class one.
2. Exactly two distinct values: binary (numbers or not).
3. Numbers with a fractional part: regression.
4. Whole numbers with C ≥ 3 distinct values are class codes — multi-class — only when
   they *look like codes*: exactly the consecutive integers 0, 1, …, C−1 or
   1, 2, …, C, with C ≤ ``MAX_CLASS_CODES`` (50). Anything else — counts or ratings
   with gaps or a different origin (abalone's rings 1…29 with one value missing, wine
   quality 3…8), or more than 50 distinct values — is a measured quantity: regression.

The dtype is not used: files and most arrays store class codes as floats, and
scikit-learn's ``type_of_target`` (which calls every whole-valued target with more
than two values "multiclass") would make a 28-valued count a 28-class problem. Pass
``task="binary" | "multiclass" | "regression"`` to override the rule.
"""

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ._labels import check_labels, encode_labels, unit_indicators
from ._validation import check_matrix

__all__ = ["TASKS", "MAX_CLASS_CODES", "detect_task", "check_task", "prepare_targets",
           "Targets", "multi_output_targets", "target_matrix", "rescale_target"]

TASKS = ("binary", "multiclass", "regression")
#: more distinct whole-number values than this are a measured quantity, not codes
MAX_CLASS_CODES = 50


def check_task(task: Any, name: str = "task") -> str:
    """``task`` lower-cased when it is "auto" or one of :data:`TASKS`."""
    if task is None:
        return "auto"
    if not isinstance(task, str) or task.strip().lower() not in ("auto", *TASKS):
        raise ValueError(f"{name}={task!r} is not known; use 'auto', 'binary', 'multiclass' "
                         "or 'regression'.")
    return task.strip().lower()


def _as_labels(y: Any, name: str) -> np.ndarray:
    """``y`` as a checked 1-D label array (:func:`kernelselect.utils._labels.check_labels`)."""
    return check_labels(y, name)


def detect_task(y: Any, name: str = "y") -> tuple[str, str]:
    """The task of target ``y`` by the module's rule: ``(task, reason)``.

    Examples
    --------
    >>> detect_task([0, 1, 1, 0])[0]
    'binary'
    >>> detect_task([0, 2, 1, 2, 0])[0]
    'multiclass'
    >>> detect_task([3, 5, 6, 8, 4, 7])[0]       # ratings 3…8: not codes
    'regression'
    >>> detect_task(["cat", "dog", "cow"])[0]
    'multiclass'
    """
    arr = _as_labels(y, name)
    values = np.unique(arr)
    if values.size < 2:
        raise ValueError(f"{name} has a single value ({values[0]!r}) for all {arr.size} samples; "
                         "selection needs two classes or a varying target.")
    if arr.dtype.kind not in "iuf":
        kind = "binary" if values.size == 2 else "multiclass"
        return kind, f"{values.size} distinct non-numeric labels"
    if values.size == 2:
        return "binary", "two distinct values"
    if not np.all(values == np.round(values)):
        return "regression", "values with a fractional part"
    c = values.size
    if c <= MAX_CLASS_CODES and values[0] in (0, 1) and values[-1] == values[0] + c - 1:
        return "multiclass", f"{c} consecutive whole-number codes {int(values[0])}…{int(values[-1])}"
    why = (f"more than {MAX_CLASS_CODES} distinct whole numbers" if c > MAX_CLASS_CODES else
           f"{c} whole numbers that are not the codes 0…{c - 1} or 1…{c}")
    return "regression", why


@dataclass
class Targets:
    """y for the criteria, and how to go back to the user's labels.

    Attributes
    ----------
    task : {"binary", "multiclass", "regression"}
    y : ndarray (n,) float64
        ±1 (binary: ``classes[1]`` → +1), class codes 0…C−1 (multiclass) or the real
        target (regression).
    Y : ndarray (n, C) or None
        Multiclass: one-vs-rest ±1 columns (+1 in the column of the sample's class).
    classes : ndarray or None
        The original labels in sorted order (classification).
    reason : str
        Why this task (the rule's words, or "given").
    """

    task: str
    y: np.ndarray
    Y: Optional[np.ndarray]
    classes: Optional[np.ndarray]
    reason: str

    def decode(self, codes: Any) -> np.ndarray:
        """Class codes (int array) → the original labels."""
        if self.classes is None:
            raise ValueError(f"a {self.task} target has no classes to decode.")
        return self.classes[np.asarray(codes, dtype=np.intp)]


def prepare_targets(y: Any, task: str = "auto", name: str = "y") -> Targets:
    """Detect (or check) the task and encode ``y``: a :class:`Targets`."""
    task = check_task(task)
    arr = _as_labels(y, name)
    if task == "auto":
        task, reason = detect_task(arr, name)
    else:
        reason = "given"
    if task == "regression":
        if arr.dtype.kind not in "iuf":
            raise ValueError(f"task='regression' needs numeric {name}; it holds labels such as "
                             f"{arr[0]!r} (use task='binary' or 'multiclass').")
        yr = arr.astype(np.float64)
        if np.ptp(yr) == 0:
            raise ValueError(f"{name} is constant ({yr[0]!r}); there is nothing to regress.")
        return Targets("regression", yr, None, None, reason)
    if task == "binary":
        enc = encode_labels(arr, name, exactly=2, needs="task='binary' needs", checked=True)
        return Targets("binary", enc.signed(), None, enc.classes, reason)
    enc = encode_labels(arr, name, checked=True)
    return Targets("multiclass", enc.codes.astype(np.float64), enc.one_vs_rest(), enc.classes,
                   reason)


#: a target whose largest magnitude lies outside [2^-k, 2^k] is rescaled
TARGET_EXPONENT_LIMIT = 256


def rescale_target(y: np.ndarray, params: dict[str, Any]
                    ) -> tuple[np.ndarray, dict[str, Any], float]:
    """(y / s, params with σ / s, s) for s = 2ᵉ when y's magnitude is extreme, else s = 1.

    The error criteria (ree, ipe, c1, gcv, eloo's squared loss) grow as y², so y of
    size 10¹⁵⁴ overflows them and 10⁻¹⁶⁰ underflows them; their minimiser does not
    depend on the scale of y, and kta, ckta and the error rate do not depend on it at
    all. Dividing by a power of two is exact; the curves are then those of y / s.
    """
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if peak == 0.0:
        return y, params, 1.0
    exponent = int(np.frexp(peak)[1])
    if abs(exponent) <= TARGET_EXPONENT_LIMIT:
        return y, params, 1.0
    scale = float(np.ldexp(1.0, exponent))
    scaled = {}
    for name, p in params.items():
        p = dict(p)
        if p.get("sigma") is not None:
            p["sigma"] = np.ldexp(float(p["sigma"]), -exponent)
        scaled[name] = p
    return np.ldexp(y, -exponent), scaled, scale


def multi_output_targets(Y: np.ndarray, task: Any) -> Targets:
    """A real target of several columns (n, L): task "regression" (the only one it can
    be), finite numbers, not every column constant."""
    if check_task(task) not in ("auto", "regression"):
        raise ValueError(f"y has {Y.shape[1]} columns, which makes a real target of several "
                         f"outputs; task={task!r} needs one label per row (use "
                         "task='regression' or 'auto').")
    if Y.dtype.kind not in "iuf":
        raise ValueError(f"y has {Y.shape[1]} columns and holds non-numeric labels; several "
                         "target columns must be real numbers (give class labels as one "
                         "column).")
    Y = check_matrix(Y, "y", dtype=np.float64)
    if np.all(np.ptp(Y, axis=0) == 0):
        raise ValueError("every column of y is constant; there is nothing to regress.")
    return Targets("regression", Y, None, None, f"{Y.shape[1]} real target columns")


def target_matrix(targets: Targets) -> np.ndarray:
    """What a criterion with ``labels="matrix"`` receives: the class indicator columns
    scaled to unit norm (classes in sorted order) for class labels, the target as
    columns (n, L) for a real target."""
    if targets.task == "regression":
        return targets.y.reshape(targets.y.shape[0], -1)
    if targets.task == "binary":
        return unit_indicators((targets.y > 0).astype(np.intp), 2)
    assert targets.classes is not None            # multiclass targets keep their classes
    return unit_indicators(targets.y.astype(np.intp), targets.classes.shape[0])

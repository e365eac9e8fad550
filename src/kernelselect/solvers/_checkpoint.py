"""Checkpoints of a conjugate-gradient solve, so that an interrupted fit resumes.

What is saved
-------------
The iteration's whole state after an iteration: the iterate U, the residual R, the
search direction P and ‖R‖² per column, the iterations done, the residuals so far and
the last explicitly checked residual (:class:`CGState`). Conjugate gradients continued
from it take the same steps as the uninterrupted solve, so a resumed fit ends where an
uninterrupted one would, with the iteration count continuing.

With it, a fingerprint of the system solved: the sizes (n, d, m, t), γ, α, the
kernel, the bias, the preconditioner's jitter and shift, SHA-256 digests of the centres
(as conditioned), of the preconditioner's sample rows, of the targets (in memory) and
of the right-hand side K_nmᵀ[1, y], ‖y‖² (which depend on every row of X and y, so a
Dask input is fingerprinted without another pass). A saved state resumes only a solve
with the same fingerprint; the tolerance and ``max_iter`` are not part of it, so a
solve stopped by ``max_iter`` can be continued with a larger one.

The file
--------
A NumPy ``.npz`` archive (no pickled objects) holding a format tag, the fingerprint as
JSON and the arrays. It is written to a temporary file in the same folder and moved
over the path with :func:`os.replace`, so the path holds either the previous complete
checkpoint or the new one, never a partial write. A path that exists but is not a
checkpoint of this library is never overwritten: the solve refuses before it starts.
A solve that converges (or stalls, which resuming would repeat) removes its checkpoint;
one stopped by ``max_iter`` leaves it.

Writing costs O(m·t) (the four m × t arrays), next to an iteration's n·m kernel values;
by default every iteration is saved.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..utils._validation import check_positive_int

__all__ = ["FORMAT", "CGState", "CGCheckpoint", "check_checkpoint", "digest", "fingerprint",
           "checkpoint_to", "default_checkpoint", "write_atomic"]

#: the tag that marks a file as a checkpoint of this library (and its layout's version)
FORMAT = "kernelselect conjugate-gradient checkpoint 1"

_ARRAYS = ("U", "R", "direction", "rr", "residual", "checked", "history")

_DEFAULT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "kernelselect_checkpoint", default=None)


@contextlib.contextmanager
def checkpoint_to(path: Any) -> Iterator[None]:
    """Within the block, a Nyström machine whose recipe names no ``checkpoint`` (such as
    the one ``approximation="auto"`` chooses inside a selection estimator's refit)
    checkpoints to ``path`` (:func:`check_checkpoint`): how the command line's
    ``--checkpoint`` reaches the fit without a recipe of its own."""
    token = _DEFAULT.set(check_checkpoint(path))
    try:
        yield
    finally:
        _DEFAULT.reset(token)


def default_checkpoint() -> str | None:
    """The path set by :func:`checkpoint_to` around this call, or None."""
    return _DEFAULT.get()


@dataclass
class CGState:
    """The state of conjugate gradients after an iteration (module notes)."""

    U: np.ndarray
    R: np.ndarray
    direction: np.ndarray
    rr: np.ndarray
    residual: np.ndarray
    checked: np.ndarray
    iterations: int
    history: np.ndarray

    def copy(self) -> "CGState":
        """An independent copy (the solve updates U and R in place)."""
        def own(a: np.ndarray) -> np.ndarray:
            return np.array(a, order="F")
        return CGState(U=own(self.U), R=own(self.R), direction=own(self.direction),
                       rr=own(self.rr), residual=own(self.residual),
                       checked=own(self.checked), iterations=int(self.iterations),
                       history=own(self.history))


def digest(a: Any) -> str:
    """SHA-256 of an array's dtype, shape and bytes (C order)."""
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def fingerprint(**fields: Any) -> dict[str, str]:
    """The fields as text: arrays by :func:`digest`, floats by their exact ``repr``."""
    out = {}
    for key, value in fields.items():
        if isinstance(value, np.ndarray):
            out[key] = digest(value)
        elif isinstance(value, (float, np.floating)):
            out[key] = repr(float(value))
        else:
            out[key] = str(value)
    return out


def write_atomic(path: str, write: Any) -> None:
    """``write(f)`` into a temporary file (binary) in ``path``'s folder, synced, then
    moved over ``path``: the path holds the old complete file or the new one, never a
    partial write; the temporary file is removed if anything fails."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kernelselect-checkpoint-", suffix=".tmp",
                               dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_checkpoint(path: Any) -> str | None:
    """``checkpoint`` validated: None, or a path (str or os.PathLike) that is not a
    folder and whose folder exists; returned as a str."""
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"checkpoint must be a file path (str or os.PathLike) or None, "
                        f"got {type(path).__name__}.")
    text = os.fspath(path)
    if not isinstance(text, str) or not text:
        raise ValueError(f"checkpoint must be a non-empty file path, got {path!r}.")
    if os.path.isdir(text):
        raise ValueError(f"checkpoint {text!r} is a folder; give a file path inside it.")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise ValueError(f"checkpoint {text!r}: its folder {folder!r} does not exist; "
                         "create it or give another path.")
    return text


class CGCheckpoint:
    """Saving and resuming one solve's state at ``path`` (module notes).

    Parameters
    ----------
    path : str
        The file (checked by :func:`check_checkpoint`).
    every : int, default=1
        Save after every ``every``-th iteration …
    seconds : float or None, default=None
        … or once ``seconds`` have passed since the last save, whichever comes first.
    resume : bool, default=True
        Continue from a checkpoint of the same system at ``path``; a checkpoint of
        another system is then refused. ``False``: start over (the checkpoint of
        another system is replaced; a file that is no checkpoint still is not).
    """

    def __init__(self, path: str, every: int = 1, seconds: float | None = None,
                 resume: bool = True) -> None:
        self.path = path
        self.every = check_positive_int(every, "checkpoint_every")
        self.seconds = seconds
        self.resume = bool(resume)
        self.fingerprint: dict[str, str] = {}
        self.saves = 0
        self._last = (0, time.monotonic())
        self._pending: CGState | None = None

    def _read(self) -> tuple[dict[str, str], dict[str, np.ndarray]] | None:
        """The file's fingerprint and arrays, None if there is no file; refuses a file
        that is not a readable checkpoint of this library, naming the path."""
        if not os.path.exists(self.path):
            return None
        what = (f"checkpoint {self.path!r} exists but is not a readable kernelselect "
                "conjugate-gradient checkpoint")
        fix = ("; it is left untouched: delete it or give another checkpoint path.")
        try:
            # opened here: np.load leaves its own handle open when the archive is broken
            with open(self.path, "rb") as handle, np.load(handle, allow_pickle=False) \
                    as archive:
                if not hasattr(archive, "files") or "format" not in archive.files \
                        or str(archive["format"]) != FORMAT:
                    raise ValueError(f"{what} (no {FORMAT!r} tag){fix}")
                found = json.loads(str(archive["fingerprint"]))
                arrays = {k: np.asarray(archive[k]) for k in _ARRAYS + ("iterations",)}
        except ValueError as exc:
            if str(exc).startswith(what):
                raise
            raise ValueError(f"{what} ({exc}){fix}") from exc
        except (OSError, KeyError, EOFError, zipfile.BadZipFile,
                json.JSONDecodeError) as exc:
            raise ValueError(f"{what} ({type(exc).__name__}: {exc}){fix}") from exc
        if not isinstance(found, dict):
            raise ValueError(f"{what} (its fingerprint is not a table){fix}")
        return found, arrays

    def check_path(self) -> None:
        """Refuse, before any work, a path holding a file that is not a checkpoint."""
        self._read()

    def _refuse_other(self, found: dict[str, str], fingerprint: dict[str, str],
                      keys: Any) -> None:
        differ = sorted(k for k in keys if found.get(k) != fingerprint.get(k))
        if differ:
            raise ValueError(
                f"checkpoint {self.path!r} holds a solve of another system (it differs in "
                f"{', '.join(differ)}); pass resume=False to start over and replace it, or "
                "give another checkpoint path.")

    def check_early(self, fields: dict[str, str]) -> None:
        """Refuse a checkpoint of another system on the fields known before the solve's
        costly set-up (sizes, γ, α, centres): the rest is compared by :meth:`load`."""
        read = self._read()
        if read is not None and self.resume:
            self._refuse_other(read[0], fields, fields)

    def load(self, fingerprint: dict[str, str], shape: tuple[int, int]) -> CGState | None:
        """The saved state of the system ``fingerprint`` (its vectors of ``shape``
        (m, t)), or None to start over (no file, or ``resume=False``); refuses the
        checkpoint of another system unless ``resume=False``."""
        self.fingerprint = dict(fingerprint)
        read = self._read()
        if read is None or not self.resume:
            return None
        found, arrays = read
        self._refuse_other(found, fingerprint, set(found) | set(fingerprint))
        m, t = shape
        it = int(arrays["iterations"])
        expected = {"U": (m, t), "R": (m, t), "direction": (m, t), "rr": (t,),
                    "residual": (t,), "checked": (t,), "history": (it, t)}
        bad = [k for k, s in expected.items() if arrays[k].shape != s
               or arrays[k].dtype != np.float64 or not np.all(np.isfinite(arrays[k]))]
        if bad or it < 0:
            raise ValueError(f"checkpoint {self.path!r} is corrupted (its {', '.join(bad) or 'iterations'} "
                             "do not fit the solve); delete it or pass resume=False.")
        return CGState(**{k: np.array(arrays[k], order="F") for k in _ARRAYS},
                       iterations=it)

    def offer(self, state: CGState) -> None:
        """Called after each iteration: saves when due, otherwise keeps a copy for
        :meth:`flush`."""
        done, when = self._last
        due = state.iterations - done >= self.every or (
            self.seconds is not None and time.monotonic() - when >= self.seconds)
        if due:
            self.write(state)
        else:
            self._pending = state.copy()

    def flush(self) -> None:
        """Save the latest state not yet saved (an interrupted solve keeps its work)."""
        if self._pending is not None:
            self.write(self._pending)

    def write(self, state: CGState) -> None:
        """Write ``state`` atomically (module notes)."""
        arrays: dict[str, Any] = {
            k: np.asarray(getattr(state, k), dtype=np.float64) for k in _ARRAYS}
        arrays.update(format=np.array(FORMAT), iterations=np.array(state.iterations),
                      fingerprint=np.array(json.dumps(self.fingerprint, sort_keys=True)))
        write_atomic(self.path, lambda f: np.savez(f, **arrays))
        self.saves += 1
        self._pending = None
        self._last = (state.iterations, time.monotonic())

    def remove(self) -> None:
        """Delete the checkpoint (the solve it saved has finished)."""
        self._pending = None
        if os.path.exists(self.path):
            os.unlink(self.path)

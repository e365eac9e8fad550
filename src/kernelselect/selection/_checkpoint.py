"""Checkpoints of a selection, so that an interrupted one resumes where it stopped.

What is saved
-------------
Every operator a selection evaluates, one entry per (stand-in, γ, α path): the
criteria's values over the α path, the seconds it took, the operator's details and,
when the levels read it, its spectrum. An entry's key names the stand-in by its label,
the rows it scored (a subsample's size), a SHA-256 digest of its parameters (the
landmarks of a Nyström level among them), γ by its exact ``repr`` and a digest of the
α path. A selection started again with the same arguments takes the same steps: each
evaluation it finds saved is read instead of computed, so the finished levels cost
nothing and the run goes on from the first operator not yet saved, to the result the
uninterrupted run gives.

With the entries, a fingerprint of the selection: the sizes, the kernel, the task,
the criteria and their parameters, the grids, ``random_state`` and digests of the
targets and of the data: X itself in memory, its column means and scales on Dask
input (the standardisation's pass reads every row, so no pass is added; without
standardisation, the γ grid's median heuristic and the gathered rows stand for it).
A checkpoint resumes only a selection with the same fingerprint; another is refused,
naming the fields that differ.

The file
--------
JSON (floats by ``repr``, exact), written after every evaluation to a temporary file
in the same folder and moved over the path with :func:`os.replace`, so the path holds
either the previous complete checkpoint or the new one. A path that exists but is not a
checkpoint of this library is never overwritten: the selection refuses before it
starts. A finished selection keeps its checkpoint (running the same call again replays
it in moments: how the command line resumes a fit after its selection); delete the
file to select afresh.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..solvers._checkpoint import check_checkpoint, digest, write_atomic
from ._result import _plain

__all__ = ["FORMAT", "SelectionCheckpoint", "check_checkpoint", "params_digest"]

#: the tag that marks a file as a selection checkpoint of this library (and its version)
FORMAT = "kernelselect selection checkpoint 1"


def params_digest(params: Any) -> str:
    """SHA-256 of a stand-in's parameters (arrays by :func:`digest`)."""
    def plain(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return digest(v)
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, (float, np.floating)):
            return repr(float(v))
        return repr(v)
    return digest(np.frombuffer(json.dumps(plain(params), sort_keys=True).encode(),
                                dtype=np.uint8))


class SelectionCheckpoint:
    """The saved evaluations of one selection at ``path`` (module notes).

    Parameters
    ----------
    path : str
        The file (checked by :func:`check_checkpoint`).
    fingerprint : dict of str → str
        What identifies the selection; a file with another is refused.
    """

    def __init__(self, path: str, fingerprint: dict[str, str]) -> None:
        self.path = path
        self.fingerprint = dict(fingerprint)
        self.entries: dict[str, dict[str, Any]] = {}
        self.reused = 0
        self.saved = 0
        self._load()

    def _load(self) -> None:
        if not os.path.exists(self.path):
            return
        what = (f"checkpoint {self.path!r} exists but is not a readable kernelselect "
                "selection checkpoint")
        fix = "; it is left untouched: delete it or give another checkpoint path."
        try:
            with open(self.path, encoding="utf-8") as handle:
                found = json.load(handle)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{what} ({type(exc).__name__}: {exc}){fix}") from exc
        if not isinstance(found, dict) or found.get("format") != FORMAT \
                or not isinstance(found.get("fingerprint"), dict) \
                or not isinstance(found.get("entries"), dict):
            raise ValueError(f"{what} (no {FORMAT!r} tag){fix}")
        theirs = found["fingerprint"]
        differ = sorted(k for k in set(theirs) | set(self.fingerprint)
                        if theirs.get(k) != self.fingerprint.get(k))
        if differ:
            raise ValueError(
                f"checkpoint {self.path!r} holds a selection of other data or arguments (it "
                f"differs in {', '.join(differ)}); delete it to select afresh, or give "
                "another checkpoint path.")
        self.entries = found["entries"]

    @staticmethod
    def key(label: str, rows: int | None, params: str, gamma: float,
            alphas: np.ndarray) -> str:
        """The entry of one operator: stand-in, rows, parameters, γ and α path."""
        return (f"{label}|rows={rows}|{params}|gamma={float(gamma)!r}|"
                f"alphas={digest(np.asarray(alphas, dtype=np.float64))}")

    def get(self, key: str) -> dict[str, Any] | None:
        """The saved evaluation (``curves`` name → values over α, ``seconds``,
        ``details``, ``spectrum`` or None), or None when not saved."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        self.reused += 1
        return {"curves": {k: np.asarray(v, dtype=np.float64) for k, v in entry["curves"].items()},
                "seconds": float(entry["seconds"]), "details": dict(entry["details"]),
                "spectrum": (None if entry.get("spectrum") is None
                             else np.asarray(entry["spectrum"], dtype=np.float64))}

    def put(self, key: str, curves: dict[str, np.ndarray], seconds: float,
            details: dict[str, Any], spectrum: np.ndarray | None) -> None:
        """Record one evaluation (written by :meth:`save`)."""
        self.entries[key] = {
            "curves": {k: [float(x) for x in np.ravel(v)] for k, v in curves.items()},
            "seconds": float(seconds), "details": _plain(details),
            "spectrum": None if spectrum is None else [float(x) for x in np.ravel(spectrum)]}

    def save(self) -> None:
        """Write every entry atomically (module notes)."""
        text = json.dumps({"format": FORMAT, "fingerprint": self.fingerprint,
                           "entries": self.entries}).encode("utf-8")
        write_atomic(self.path, lambda f: f.write(text))
        self.saved += 1


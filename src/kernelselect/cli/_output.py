"""What ``kernelselect select`` prints and writes: the table of candidates, the
details and policy lines, the JSON record, the plot, and the checks and atomic
writes that keep a failure from leaving a half-written or clobbered file."""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import stat
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Literal, TextIO

import numpy as np

from ..kernels import Kernel, kernel_or_auto
from ._errors import CommandError

if TYPE_CHECKING:
    from ..selection import SelectionResult


# --------------------------------------------------------------------------- output


def _fmt(value: float | None, width: int = 12) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan".rjust(width)
    return f"{value:.6g}".rjust(width)


def format_table(result: SelectionResult, selected_by: str | None = None, max_alphas: int = 3
                 ) -> str:
    """The candidates of a selection result as an aligned text table.

    One row per (γ, α) when there are at most ``max_alphas`` α; with a longer α path,
    one row per γ at the α that is best there for ``selected_by`` (the profile over
    γ). One column per criterion. ``*`` follows the best value of each criterion;
    ``>`` starts the row of the selected kernel. A search in levels (``result.levels``:
    the coarse grid, then windows of it) lists every level, labelled, the choice being
    read from the last.
    """
    names = list(result.curves)
    selected_by = selected_by or names[0]
    levels = [(lv.approximation, lv.gammas, lv.alphas, lv.curves)
              for lv in getattr(result, "levels", None) or []]
    if len(levels) < 2:
        levels = [("", result.gammas, result.alphas, result.curves)]
    gammas = np.asarray(result.gammas, dtype=float)
    alphas = np.asarray(result.alphas, dtype=float)
    best_index: dict[str, tuple[int, ...] | None] = {}
    for name in names:
        best = result.best[name]
        if best.get("index") is not None:
            best_index[name] = tuple(int(i) for i in best["index"])
        elif math.isfinite(best["gamma"]):
            g = int(np.argmin(np.abs(np.log(gammas) - math.log(best["gamma"]))))
            a = int(np.argmin(np.abs(np.log(alphas) - math.log(best["alpha"]))))
            best_index[name] = (g, a)
        else:  # every value NaN: nothing is marked
            best_index[name] = None
    profile = alphas.size > max_alphas
    widths = [max(12, len(n) + 2) for n in names]
    label_width = max(len(label) for label, *_ in levels) + 2 if len(levels) > 1 else 0
    header = "  " + "level".ljust(label_width) * bool(label_width) + "log2(gamma)".rjust(11)
    header += "gamma".rjust(12) + "alpha".rjust(12)
    header += "".join(n.rjust(w + 1) for n, w in zip(names, widths))
    lines = [header]
    for k, (label, level_gammas, level_alphas, curves) in enumerate(levels):
        final = k == len(levels) - 1
        level_gammas = np.asarray(level_gammas, dtype=float)
        level_alphas = np.asarray(level_alphas, dtype=float)
        if profile:
            sel = np.asarray(curves[selected_by], dtype=float)
            flip = -1.0 if result.directions.get(selected_by) == "max" else 1.0
            pairs = []
            for gi in range(level_gammas.size):
                row = np.where(np.isfinite(sel[gi]), flip * sel[gi], np.inf)
                pairs.append((gi, int(np.argmin(row))))
        else:
            pairs = [(gi, ai) for gi in range(level_gammas.size)
                     for ai in range(level_alphas.size)]
        for gi, ai in pairs:
            gamma, alpha = level_gammas[gi], level_alphas[ai]
            mark = ">" if final and best_index[selected_by] == (gi, ai) else " "
            line = f"{mark} " + label.ljust(label_width) * bool(label_width)
            line += f"{math.log2(gamma):11.2f}" + _fmt(gamma) + _fmt(alpha)
            for name, w in zip(names, widths):
                value = float(np.asarray(curves[name])[gi, ai])
                star = "*" if final and best_index[name] == (gi, ai) else " "
                line += _fmt(value, w) + star
            lines.append(line.rstrip())
    directions = ", ".join(
        f"{n}: {_direction_word(result.directions.get(n))}" for n in names
    )
    lines.append(f"  * best of its criterion ({directions});  > selected by {selected_by}")
    if profile:
        lines.append(f"  one row per gamma at the alpha {selected_by} prefers there "
                     f"({alphas.size} alphas from {alphas.min():.3g} to {alphas.max():.3g}; "
                     "--json has every value)")
    if len(levels) > 1:
        lines.append(f"  {len(levels)} levels: the coarse grid, then windows of it with more "
                     "landmarks; the choice is read from the last")
    return "\n".join(lines)


def _direction_word(direction: Any) -> str:
    return {"min": "minimise", "max": "maximise"}.get(direction, str(direction))


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


_DETAILS_SHOWN_ELSEWHERE = ("classes", "task_reason", "extensions", "edges", "standardize")


def _details_line(details: Any) -> str:
    parts = []
    for key, value in (details or {}).items():
        if key in _DETAILS_SHOWN_ELSEWHERE:
            continue
        if isinstance(value, (bool, int, float, str, np.integer, np.floating)):
            shown = f"{value:.4g}" if isinstance(value, (float, np.floating)) else str(value)
            parts.append(f"{key}={shown}")
        elif isinstance(value, (list, tuple)) and len(value) <= 6 and all(
            isinstance(v, (int, float, np.integer, np.floating)) for v in value
        ):
            parts.append(f"{key}=" + "x".join(str(v) for v in value))
    return ", ".join(parts)


def _policy_lines(details: dict[str, Any]) -> list[str]:
    """What the automatic rules did: approximation levels, grid extensions, edges."""
    from ..criteria.error import LOSS_WORDS    # loaded by the selection already

    lines = []
    for name, params in (details.get("criterion_params") or {}).items():
        if isinstance(params, dict) and "loss" in params:    # a name has one loss: say it
            lines.append(f"criterion {name}: {LOSS_WORDS.get(params['loss'], params['loss'])}")
    auto = details.get("auto")
    if isinstance(auto, dict):
        levels = [lv["approximation"] for lv in auto.get("levels", []) if "approximation" in lv]
        lines.append(f"approximation {' -> '.join(levels)} ({auto.get('reason', '')})")
    for ext in details.get("extensions") or []:
        lines.append(f"grid extended at {ext['edge']} by {len(ext['added'])} values")
    if details.get("edges"):
        lines.append(f"best point still on the grid edge: {', '.join(details['edges'])}")
    refine = details.get("refine")
    if isinstance(refine, dict):
        lines.append(f"refined to gamma={refine['gamma']:.6g}, alpha={refine['alpha']:.6g} "
                     f"({'improved' if refine.get('improved') else 'grid point kept'})")
    return lines


def _finite(value: Any) -> bool:
    try:
        return value is not None and bool(np.all(np.isfinite(np.asarray(value, dtype=float))))
    except (TypeError, ValueError):
        return False


def _plot_formats() -> dict[str, str]:
    """File formats matplotlib can write ({extension: description})."""
    try:
        import matplotlib
    except ImportError:
        raise CommandError(
            "--plot needs matplotlib, which is not installed: pip install matplotlib "
            "(or drop --plot)."
        ) from None
    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase

    return FigureCanvasBase.get_supported_filetypes()


def _safe(text: str) -> str:
    """``text`` with every non-printable character escaped (newlines kept), so that a
    file name cannot send escape sequences to the terminal: ESC → ``\\x1b``, a byte
    that is not valid in the file system's encoding → ``\\xNN``."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\n" or ch.isprintable():
            out.append(ch)
        elif 0xDC80 <= code <= 0xDCFF:        # os.fsdecode's stand-in for a raw byte
            out.append(f"\\x{code - 0xDC00:02x}")
        else:
            out.append(ascii(ch)[1:-1])
    return "".join(out)


class SafeText:
    """A text stream whose writes are passed through :func:`_safe`; writes to a closed
    or missing stream (``sys.stdout`` is None when the process started without one)
    are dropped."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if self.stream is not None:
            self.stream.write(_safe(text))
        return len(text)

    def flush(self) -> None:
        if self.stream is not None:
            self.stream.flush()


def _stdout_usable() -> bool:
    """Whether standard output can be written (not None, not closed, its descriptor
    open)."""
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        return False
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):  # an in-memory stream
        return True
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


#: temporary files are named .kernelselect-XXXXXXXX.tmp: a fixed length, whatever the
#: output's name, so a name the file system accepts also passes for its temporary file
_TMP_PREFIX, _TMP_SUFFIX = ".kernelselect-", ".tmp"


#: files of a protected folder compared with an output that has other hard links
_MAX_SCAN = 100_000


def _same_or_inside(target: str, protected: str) -> bool:
    """Whether ``target`` is ``protected`` or lies under it: by resolved path
    (symbolic links), then by device and inode of the target and each of its existing
    folders (hard links, bind mounts)."""
    real_t, real_p = os.path.realpath(target), os.path.realpath(protected)
    if real_t == real_p or real_t.startswith(real_p.rstrip(os.sep) + os.sep):
        return True
    try:
        ps = os.stat(protected)
    except OSError:
        return False
    try:
        ts = os.stat(target)
    except OSError:
        ts = None
    if ts is not None and ts.st_nlink > 1 and stat.S_ISDIR(ps.st_mode):
        # a hard link to a file inside a protected folder: look for its inode there
        seen = 0
        for folder, _, files in os.walk(protected):
            for name in files:
                seen += 1
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) == (ts.st_dev, ts.st_ino):
                    return True
            if seen > _MAX_SCAN:
                raise CommandError(
                    f"{target} has other hard links and {protected} holds more than "
                    f"{_MAX_SCAN} files to compare it with; write to a new file instead."
                )
    probe = real_t
    while True:
        try:
            st = os.stat(probe)
            if (st.st_dev, st.st_ino) == (ps.st_dev, ps.st_ino):
                return True
        except OSError:
            pass
        parent = os.path.dirname(probe)
        if parent == probe:
            return False
        probe = parent


def _check_output(path: str, option: str, force: bool, protected: list[tuple[str, str]]
                  ) -> None:
    """Refuse, before any work, an output path that cannot or must not be written.

    ``protected``: (path, what it is) for every file or folder the run reads; the
    output may be none of them nor lie under any.
    """
    if path == "":
        raise CommandError(f"{option}: the file name is empty.")
    if path == "-":
        if option != "--json":
            raise CommandError(f"{option}: a plot needs a file name ('-' is for --json).")
        if not _stdout_usable():
            raise CommandError("--json -: standard output is closed; give a file name "
                               "instead of '-'.")
        return
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    for guarded, what in protected:
        if _same_or_inside(target, guarded):
            raise CommandError(f"{option}: {path} is {what}, which this run reads; choose "
                               "another name.")
    if os.path.isdir(target):
        raise CommandError(f"{option}: {path} is a folder; give a file name inside it.")
    if os.path.lexists(target):
        if not os.path.isfile(target):
            raise CommandError(
                f"{option}: {path} exists and is not a regular file; give a file name"
                + (" (or '-' for standard output)." if option == "--json" else ".")
            )
        if not force:
            raise CommandError(f"{option}: {path} exists; pass --force to replace it.")
    if not os.path.isdir(folder):
        raise CommandError(f"{option}: the folder {folder} does not exist.")
    name = os.fsencode(os.path.basename(target))
    for what, size, conf in (("file name", len(name), "PC_NAME_MAX"),
                             ("path", len(os.fsencode(target)), "PC_PATH_MAX")):
        try:
            limit = os.pathconf(folder, conf)
        except (OSError, ValueError):
            limit = 255 if conf == "PC_NAME_MAX" else 4096
        if limit > 0 and size > limit:
            raise CommandError(f"{option}: the {what} is {size} bytes long, more than the "
                               f"{limit} the file system of {folder} allows; give a shorter "
                               "name.")
    try:  # the real test of writability (permissions, read-only file systems)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise CommandError(
            f"{option}: cannot write in the folder {folder} ({exc.strerror or exc})."
        ) from None


def relevance_path(plot: str) -> str:
    """Where ``--plot OUT.ext`` puts the relevance chart of ``--kernel ard``: beside
    it, ``OUT_relevances.ext``."""
    stem, ext = os.path.splitext(plot)
    return f"{stem}_relevances{ext}"


def _check_outputs(args: argparse.Namespace, protected: list[tuple[str, str]]) -> str | None:
    """Check --json and --plot (and, for --kernel ard or auto, the relevance chart
    beside the plot) before anything runs; returns the plot format."""
    outputs = [(p, o) for p, o in ((args.json, "--json"), (args.plot, "--plot")) if p is not None]
    kernel = kernel_or_auto(args.kernel)      # "auto" may choose the per-feature kernel
    if args.plot is not None and (not isinstance(kernel, Kernel) or kernel.per_feature):
        outputs.append((relevance_path(args.plot), "--plot (its relevance chart)"))
    for path, option in outputs:
        _check_output(path, option, args.force, protected)
    real = [os.path.realpath(p) for p, _ in outputs if p != "-"]
    if len(set(real)) < len(real):
        raise CommandError(f"--json and --plot name the same file ({args.json}, {args.plot}, "
                           "or the relevance chart beside the plot); give other names.")
    checkpoint = getattr(args, "checkpoint", None)
    if checkpoint is not None:
        named = [what for path, what in protected + outputs
                 if path != "-" and os.path.realpath(path) == os.path.realpath(checkpoint)]
        if named:
            raise CommandError(f"--checkpoint {checkpoint} is {named[0]}; give another path.")
    if args.plot is None:
        return None
    formats = _plot_formats()
    ext = os.path.splitext(args.plot)[1].lower().lstrip(".")
    if ext not in formats:
        shown = ", ".join(f".{e}" for e in sorted(formats))
        got = f"the extension .{ext}" if ext else "no extension"
        raise CommandError(
            f"--plot: {args.plot} has {got}; the format is taken from the extension, one of "
            f"{shown}."
        )
    return ext


def _data_name(args: argparse.Namespace, data: Any) -> str:
    """The data set's name for a figure title: the shipped name or the file's name."""
    return os.path.basename(args.file) if args.file else data.name


def _render_plot(result: SelectionResult, fmt: str | None, data_name: str) -> bytes:
    """The plot as bytes in format ``fmt``, titled with ``data_name``."""
    _plot_formats()
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        # With an α path the curves are drawn above the (γ, α) heat maps.
        kind: Literal["curves", "both"] = "both" if np.asarray(result.alphas).size > 1 else "curves"
        fig = result.plot(kind=kind, data_name=data_name)
        fig.savefig(buffer, format=fmt, dpi=120, bbox_inches="tight")
    finally:
        plt.close("all")
    return buffer.getvalue()


def _render_relevances(result: Any, fmt: str | None, data_name: str,
                       names: list[str] | None) -> bytes:
    """The relevance chart of a per-feature selection as bytes in format ``fmt``,
    features by their header names when the data had them."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        fig = result.plot_relevances(feature_names=names)
        ax = fig.axes[0]
        ax.set_title(f"{data_name}: {ax.get_title()}")
        fig.savefig(buffer, format=fmt, dpi=120, bbox_inches="tight")
    finally:
        plt.close("all")
    return buffer.getvalue()


def _write_atomic(path: str, data: bytes, force: bool) -> None:
    """Write ``data`` (bytes) to ``path`` through a temporary file in the same folder,
    so that a failure (disk full, interruption) leaves no partial file; an existing
    file is replaced only when ``force``."""
    target = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=_TMP_PREFIX,
                               suffix=_TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if force:
            os.replace(tmp, target)
        else:
            try:  # link fails if the name appeared meanwhile: never clobber
                os.link(tmp, target)
            except FileExistsError:
                raise CommandError(f"{path} exists; pass --force to replace it.") from None
            except OSError:  # file systems without hard links
                if os.path.lexists(target):
                    raise CommandError(f"{path} exists; pass --force to replace it.") from None
                os.replace(tmp, target)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}; nothing was written.") \
            from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)

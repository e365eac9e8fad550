"""Signs of life for long runs: a tqdm bar on a terminal, low-rate lines otherwise.

The policy (``progress=`` of :func:`kernelselect.select_kernel`):

- ``False``: nothing.
- ``True``: from the start — a tqdm bar on stderr when tqdm is installed and stderr is a
  terminal; otherwise a line on stderr every :data:`LINE_INTERVAL` seconds, written by
  a background thread so that it comes even while one long step runs (the first line
  says that installing tqdm would show a bar, when it would).
- a number ``t`` of seconds: the same, but only once the run has lasted ``t`` seconds,
  so that short runs print nothing; lines then come every ``max(t, LINE_INTERVAL)``
  seconds.

The bar or the lines go to stderr, never to stdout, so piped output stays clean.
"""

from __future__ import annotations

import numbers
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, Callable, TextIO, TypeVar

T = TypeVar("T")

__all__ = ["check_progress", "progress_iter", "ProgressBar", "LINE_INTERVAL"]

#: Least number of seconds between two plain progress lines.
LINE_INTERVAL = 10.0


def check_progress(progress: bool | float | None) -> bool | float:
    """``progress`` validated: False, True or a delay in seconds (a float ≥ 0)."""
    if isinstance(progress, (bool, type(None))):
        return bool(progress)
    if isinstance(progress, numbers.Real):
        value = float(progress)
        if 0 <= value < float("inf"):
            return value
    raise ValueError(
        f"progress must be True, False or a delay in seconds (a number >= 0), got {progress!r}."
    )


def _tqdm() -> Callable[..., Any] | None:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


def _duration(seconds: float) -> str:
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"


class _Lines:
    """Plain progress lines on a stream from a background thread: the first after
    ``delay`` seconds, then one every ``interval`` seconds until closed, so that a long
    step still shows signs of life."""

    def __init__(self, total: int, desc: str, unit: str, delay: float, interval: float,
                 stream: TextIO, note: str | None) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.delay, self.interval, self.stream, self.note = delay, interval, stream, note
        self.start = time.monotonic()
        self.done = 0
        self.shown = False
        #: what to say instead of the mean-time estimate of the time left (None: that),
        #: or a function saying it when a line is written (a time left counting down)
        self.status: str | Callable[[], str] | None = None
        self._stop = threading.Event()
        if delay == 0:  # shown from the start: the first line before any work
            self._line()
        self._thread = threading.Thread(target=self._run, name="kernelselect-progress",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait = self.interval if self.shown else self.delay
        while not self._stop.wait(wait):
            self._line()
            wait = self.interval

    def _line(self) -> None:
        done, elapsed = self.done, time.monotonic() - self.start
        line = f"{self.desc}: {done}/{self.total} {self.unit} done, {_duration(elapsed)} elapsed"
        if self.status is not None:
            line += f", {self.status() if callable(self.status) else self.status}"
        elif 0 < done < self.total:
            line += f", about {_duration(elapsed / done * (self.total - done))} left"
        if self.note:
            line += f" ({self.note})"
            self.note = None
        self.shown = True
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.shown and self.done == self.total:  # lines were shown: say it ended
            print(f"{self.desc}: {self.total}/{self.total} {self.unit} done in "
                  f"{_duration(time.monotonic() - self.start)}", file=self.stream, flush=True)


def progress_iter(iterable: Iterable[T], total: int, progress: bool | float, *, desc: str,
                  unit: str, stream: TextIO | None = None) -> Iterator[T]:
    """Yield from ``iterable`` while showing progress according to ``progress``.

    Parameters
    ----------
    iterable : iterable
        The work items; ``total`` of them.
    total : int
    progress : bool or float
        See the module docstring (already checked by :func:`check_progress`).
    desc, unit : str
        What is being done and what is counted, e.g. ``"kernel selection"``, ``"γ"``.
    stream : file, optional
        Where the lines go; ``sys.stderr`` by default.
    """
    if progress is False:
        yield from iterable
        return
    stream = sys.stderr if stream is None else stream
    delay = 0.0 if progress is True else float(progress)
    tqdm = _tqdm()
    if tqdm is not None and _is_tty(stream):
        bar = tqdm(iterable, total=total, desc=desc, unit=unit, file=stream, delay=delay)
        try:
            yield from bar
        finally:
            bar.close()
        return
    note = None
    if tqdm is None and _is_tty(stream):
        note = "install tqdm for a progress bar"
    lines = _Lines(total, desc, unit, delay, max(delay, LINE_INTERVAL), stream, note)
    try:
        for item in iterable:
            yield item
            lines.done += 1
    finally:
        lines.close()


class ProgressBar:
    """One bar (or one series of lines) over a run whose amount of work grows as it
    goes: :meth:`extend` adds planned steps to the total (a selection plans its
    operator builds grid by grid: the first grid, then each extension, Nyström level
    or refinement), :meth:`update` counts steps done, and the time left is estimated
    from the mean time per step so far, or, when the steps carry costs (a Nyström
    level's builds cost n·m²), from the time per unit of cost of the steps last done
    (the cost nearest the next ones: small early levels run below their arithmetic
    rate), said from the moment the steps are planned and counting down while one long
    step runs;
    :meth:`status` says something else instead (a solve's residual against its
    tolerance). Created shown or hidden by ``progress`` as
    :func:`progress_iter` is; nothing is started before the first :meth:`extend`.
    """

    def __init__(self, progress: bool | float, *, desc: str, unit: str,
                 stream: TextIO | None = None) -> None:
        self.progress, self.desc, self.unit = progress, desc, unit
        self.stream = sys.stderr if stream is None else stream
        self._bar: Any = None
        self._lines: _Lines | None = None
        self.total = 0
        self.done = 0
        #: planned and done cost of the steps, when :meth:`extend` gave costs
        self.cost_total = 0.0
        self.cost_done = 0.0
        self._weighted = False
        self._clock = time.monotonic()
        #: seconds per unit of cost of the steps last counted, and when they were
        self._rate = 0.0
        self._last = self._clock

    def _start(self) -> None:
        self._clock = self._last = time.monotonic()
        delay = 0.0 if self.progress is True else float(self.progress)
        tqdm = _tqdm()
        if tqdm is not None and _is_tty(self.stream):
            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit,
                             file=self.stream, delay=delay)
            return
        note = "install tqdm for a progress bar" if tqdm is None and _is_tty(self.stream) \
            else None
        self._lines = _Lines(self.total, self.desc, self.unit, delay,
                             max(delay, LINE_INTERVAL), self.stream, note)

    def extend(self, steps: int, cost: float | None = None, where: str = "") -> None:
        """Add ``steps`` planned steps to the total, each of ``cost`` (in any unit
        proportional to its time, such as its flops) when steps differ in cost: the
        time left is then the cost left times the seconds per unit of cost of the steps
        last done. ``where`` names the planned steps: once steps with costs have been
        done, the status says them and the new time left at once, rather than the
        previous stage's."""
        if self.progress is False or steps <= 0:
            return
        if cost is not None:
            self._weighted = True
        self.cost_total += steps * (1.0 if cost is None else float(cost))
        self.total += int(steps)
        if self._bar is None and self._lines is None:
            self._start()
        elif self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()
        else:
            assert self._lines is not None
            self._lines.total = self.total
        if self._weighted and self.cost_done > 0:
            self._say_left(where)

    def update(self, steps: int = 1, cost: float | None = None, where: str = "",
               seconds: float | None = None) -> None:
        """Count ``steps`` steps done (each of ``cost``, as in :meth:`extend`);
        ``where`` names the stage, said beside the estimate of the time left.
        ``seconds``: what the steps took when they did not run here (steps read back
        from a checkpoint, in moments: their saved seconds), the rate's measure instead
        of the time since the last count; 0 leaves the rate as it was."""
        if self.progress is False:
            return
        now = time.monotonic()
        done_cost = steps * (1.0 if cost is None else float(cost))
        self.done += int(steps)
        self.cost_done += done_cost
        took = now - self._last if seconds is None else float(seconds)
        if done_cost > 0 and (seconds is None or took > 0):
            self._rate = took / done_cost
        self._last = now
        if self._weighted and self.cost_done > 0:
            self._say_left(where)
        if self._bar is not None:
            self._bar.update(int(steps))
        elif self._lines is not None:
            self._lines.done = self.done

    def _say_left(self, where: str) -> None:
        """The status of steps with costs: ``where`` and the time left, the cost left at
        the rate of the steps last done, counting down in the lines."""
        rate = self._rate or (time.monotonic() - self._clock) / self.cost_done
        head = f"{where}, " if where else ""
        self.countdown(lambda left: f"{head}about {left} left (by the steps' costs)",
                       rate * max(0.0, self.cost_total - self.cost_done))

    def countdown(self, text: Callable[[str], str], seconds: float) -> None:
        """Say ``text(the time left)``, ``seconds`` from now: the lines count it down
        while the step runs, so that a long one does not repeat its first estimate."""
        end = time.monotonic() + seconds

        def say() -> str:
            return text(_duration(end - time.monotonic()))

        self.status(say())
        if self._lines is not None:
            self._lines.status = say

    def status(self, text: str) -> None:
        """Say ``text`` beside the count (the bar's postfix, or in the lines instead of
        the estimate from the mean time per step): for runs whose time left is better
        estimated otherwise, such as an iteration's residual against its tolerance."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
        elif self._lines is not None:
            self._lines.status = text

    def close(self) -> None:
        """End the bar (a last line "total/total done in …" when lines were shown)."""
        if self._bar is not None:
            self._bar.close()
        elif self._lines is not None:
            self._lines.close()
        self._bar = self._lines = None

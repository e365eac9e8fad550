"""Thread policy: how many OpenMP and BLAS threads a piece of work gets.

Every compiled kernel, FFT and BLAS/LAPACK call of the package asks this module,
given the amount of work, instead of deciding for itself (the pattern of
scikit-learn's ``utils/_openmp_helpers``):

- OpenMP kernels over a block of the kernel matrix (:func:`block_workers`): the
  caller's ``workers`` when given; otherwise OpenMP's default team, except one thread
  for blocks of fewer than :data:`SMALL_BLOCK` entries, where starting a parallel
  region costs more than it saves (far more on a busy machine, with threads spinning
  for a core).
- FFTs (:func:`fft_threads`): at most one thread per :data:`MIN_POINTS_PER_THREAD`
  points.
- A whole selection (:func:`selection_workers`) left at ``workers=None``: one thread
  for OpenMP and BLAS alike on at most :data:`SERIAL_MAX_N` points, or when other
  processes keep all but one core busy now (:func:`free_cores`, from the run
  queue); otherwise the rules below.
- BLAS/LAPACK: one thread below :data:`SMALL_FLOPS` floating-point operations
  (:func:`blas_for_flops`); one thread around compiled kernels that call BLAS from
  inside their own OpenMP loops (:func:`one_blas_thread`); at most the caller's
  ``workers`` around a whole selection (:func:`blas_threads`).
- The per-γ work of a grid (:func:`map_in_threads`): the γ on the Python threads of
  the row source, BLAS on one thread each.

The thread counts never change a result: the compiled kernels split their work
into blocks fixed by the data, not by the number of threads.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import numbers
import os
import sys
import threading
import time
from typing import Any, Callable, ContextManager, Iterator, Sequence, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

from .._openmp_info import omp_max_threads

__all__ = [
    "WORKERS_PER_CORE",
    "available_cores",
    "max_workers",
    "check_workers",
    "SMALL_BLOCK",
    "MIN_POINTS_PER_THREAD",
    "SMALL_FLOPS",
    "block_workers",
    "block_threads",
    "team",
    "fft_threads",
    "blas_for_flops",
    "blas_threads",
    "one_blas_thread",
    "map_in_threads",
    "openmp_team",
    "SERIAL_MAX_N",
    "free_cores",
    "selection_workers",
    "interruptible",
    "exit_if_abandoned",
    "INTERRUPTIBLE_FLOPS",
    "PassCancelled",
    "cancel_passes",
    "resume_passes",
    "check_cancelled",
]

#: Most threads per core that ``workers`` may ask for (see :func:`max_workers`).
WORKERS_PER_CORE = 8


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity when the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def max_workers() -> int:
    """The largest accepted thread count: ``WORKERS_PER_CORE`` (8) × the available cores.

    More threads than that only contend for the same cores, and thousands of them
    exhaust the OpenMP runtime (thread creation fails, or the process crashes).
    """
    return WORKERS_PER_CORE * available_cores()


def check_workers(workers: Any) -> int:
    """Thread count: None → OpenMP's default (OMP_NUM_THREADS or all cores), at most
    :func:`max_workers`; -1 → all available cores; a positive int up to
    :func:`max_workers` as given (larger values raise ``ValueError``)."""
    limit = max_workers()
    if workers is None:
        return max(1, min(int(omp_max_threads()), limit))
    if isinstance(workers, (bool, np.bool_)) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers must be an integer or None, got {workers!r}.")
    w = int(workers)
    if w == -1:
        return available_cores()
    if w < 1:
        raise ValueError(f"workers must be a positive integer, -1 (all cores) or None, got {workers!r}.")
    if w > limit:
        raise ValueError(
            f"workers={w} is more threads than this machine can use: at most {limit} "
            f"({WORKERS_PER_CORE} per core × {available_cores()} cores); use -1 for all cores "
            "or None for the OpenMP default."
        )
    return w


#: kernel-matrix blocks with fewer entries than this run on one OpenMP thread when
#: ``workers`` is None
SMALL_BLOCK = 2**16

#: FFTs use at most one thread per this many points
MIN_POINTS_PER_THREAD = 2**16

#: BLAS/LAPACK calls below this many floating-point operations run on one thread.
#: OpenBLAS threads wait for work by spinning, so on a machine whose other cores are
#: busy a threaded call waits for its partner thread to be scheduled: on 2 cores
#: with other processes running, eigh of a c×c matrix took 652 ms (c = 200),
#: 5.0 s (400), 0.73 s (800) and 4.2 s (1600) on two threads against 2.9 ms, 33 ms,
#: 0.21 s and 1.2 s on one. The Gram-sized problems of the stand-ins (c ≤ ~2000)
#: stay on one thread; only the large dense factorisations of the exact path use
#: threaded LAPACK.
SMALL_FLOPS = 1e10

_controller_lock = threading.Lock()
_blas_scan: tuple[int, list[Any]] = (-1, [])


def _blas_libs() -> list[Any]:
    """threadpoolctl controllers of the BLAS libraries loaded, looked up again (about
    0.5 ms) only when modules have been imported since the last look-up (scipy loads
    its own OpenBLAS beside numpy's)."""
    global _blas_scan
    loaded = len(sys.modules)
    if _blas_scan[0] != loaded:
        libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        _blas_scan = (loaded, libs)
    return _blas_scan[1]


class _BlasLimiter:
    """The process-wide BLAS thread limit, shared by every thread of the process.

    BLAS thread counts are global to the process, so a limit taken by one Python
    thread is seen by all. Each :meth:`limit` context registers its limit; the count
    in force is the smallest registered one (a caller that needs one thread, around
    OpenMP loops that call BLAS, gets it whatever the others asked for), and the
    counts found before the first registration come back when the last one leaves.
    Enter/exit pairs of concurrent callers may interleave in any order: the state is
    a multiset under a lock, not a stack.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: collections.Counter[int] = collections.Counter()
        self._original: dict[str, int] = {}         # library path → its count before
        self._applied: tuple[int, int] | None = None

    def _apply(self, limit: int | None) -> None:
        # caller holds self._lock
        libs = _blas_libs()
        if limit is None:
            for lib in libs:
                if lib.filepath in self._original:
                    lib.set_num_threads(self._original[lib.filepath])
            self._original, self._applied = {}, None
            return
        if self._applied == (limit, id(libs)):
            return
        for lib in libs:
            original = self._original.setdefault(lib.filepath, lib.get_num_threads())
            lib.set_num_threads(max(1, min(limit, original)))
        self._applied = (limit, id(libs))

    @contextlib.contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        threads = max(1, int(threads))
        with self._lock:
            self._active[threads] += 1
            self._apply(min(self._active))
        try:
            yield
        finally:
            with self._lock:
                self._active[threads] -= 1
                if self._active[threads] == 0:
                    del self._active[threads]
                self._apply(min(self._active) if self._active else None)

    @property
    def active(self) -> int:
        """The number of limits registered now."""
        with self._lock:
            return sum(self._active.values())


_blas_limiter = _BlasLimiter()


#: a selection on at most this many points runs on one thread when ``workers`` is None:
#: its kernel blocks, factorisations and criteria are too small for a second thread to
#: pay for starting and waking it. Measured on an idle 2-core machine (cadata, median
#: of 3 interleaved runs, default threads against one): 1.18× the one-thread time at
#: n = 2000, 1.07× at 3000, 0.86× at 5000, 0.85× at 10⁴
SERIAL_MAX_N = 4000


#: samples of the run queue :func:`free_cores` takes, and the seconds between two
RUNQUEUE_SAMPLES = 3
RUNQUEUE_INTERVAL = 0.002
#: a runnable thread this many nice levels below this process's priority, or more,
#: does not hold a core from it: the scheduler's weights give it under a tenth of a
#: core's time beside this process (CFS: weight 1024 at nice 0, 110 at nice 10)
YIELDING_NICE = 10


def _task_state(path: str) -> tuple[bytes, int] | None:
    """(state, nice) of one task from its /proc stat file; None if it ended."""
    try:
        with open(path, "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) S ppid ...": the name may hold spaces and parentheses; nice is the
    # 19th field, the 17th after the state
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[0], int(fields[16])


def _autogroup(pid: int | str) -> tuple[str, int] | None:
    """(autogroup, its nice) of a process where the kernel groups the scheduling of
    each session (/proc/sys/kernel/sched_autogroup_enabled); None otherwise or if
    unreadable."""
    try:
        with open(f"/proc/{pid}/autogroup", "rb") as f:
            name, _, nice = f.read().split()
        return name.decode(), int(nice)
    except (OSError, ValueError):
        return None


def _competing_runnable() -> list[int]:
    """The process ids of the runnable threads of other processes that compete with
    this one for a core now (one entry per thread): every task of /proc in state R,
    less this process's own, less those that yield to it.

    A thread yields when its scheduling weight is under a tenth of this process's:
    niced :data:`YIELDING_NICE` levels or more below it. With autogroups (the
    scheduler sharing the CPU between sessions first, then between the tasks of a
    session) the nice that counts between two sessions is their groups', and a task's
    own nice counts only within its session.
    """
    me = os.getpid()
    own_nice = os.nice(0)
    own_group = _autogroup(me)
    pids = []
    for proc in os.scandir("/proc"):
        if not proc.name.isdigit() or int(proc.name) == me:
            continue
        try:
            tasks = os.listdir(f"/proc/{proc.name}/task")
        except OSError:
            continue
        group: tuple[str, int] | None = None
        looked_up = own_group is None          # no session groups: nothing to read
        for tid in tasks:
            state = _task_state(f"/proc/{proc.name}/task/{tid}/stat")
            if state is None or state[0] != b"R":
                continue
            if not looked_up:                  # once per process, and only if it runs
                group, looked_up = _autogroup(proc.name), True
            if group is None or group[0] == own_group[0]:        # type: ignore[index]
                yields = state[1] >= own_nice + YIELDING_NICE
            else:
                yields = group[1] >= own_group[1] + YIELDING_NICE  # type: ignore[index]
            if not yields:
                pids.append(int(proc.name))
    return pids


#: seconds for which one reading of the run queue is reused
RUNQUEUE_TTL = 1.0
_runqueue_reading: tuple[float, int | None] = (-float("inf"), None)


def _runnable_others() -> int | None:
    """Threads of other processes running or waiting for a core now, and not yielding
    to this one (:func:`_competing_runnable`), the median over
    :data:`RUNQUEUE_SAMPLES` samples taken :data:`RUNQUEUE_INTERVAL` s apart (a few
    milliseconds), reused for :data:`RUNQUEUE_TTL` s; None where /proc does not say
    (not Linux)."""
    global _runqueue_reading
    now = time.monotonic()
    if now - _runqueue_reading[0] < RUNQUEUE_TTL:
        return _runqueue_reading[1]
    counts: list[int] | None = []
    if not os.path.isdir("/proc/self/task"):
        counts = None
    else:
        try:
            for i in range(RUNQUEUE_SAMPLES):
                if i:
                    time.sleep(RUNQUEUE_INTERVAL)
                counts.append(len(_competing_runnable()))       # type: ignore[union-attr]
        except (OSError, ValueError, IndexError):
            counts = None
    others = None if counts is None else int(np.median(counts))
    _runqueue_reading = (time.monotonic(), others)
    return others


def free_cores() -> int:
    """Threads worth starting now: OMP_NUM_THREADS when set (capped); else the cores
    this process may run on, less those other processes keep busy.

    The others' share is what the run queue holds now (:func:`_runnable_others`:
    other processes' runnable threads, leaving out those niced far below this one),
    not the 1-minute load average, which lags by a minute both ways: a neighbour that
    has just started leaves the average low (two threads beside a spinning process
    took 1.47× one thread's time at n = 2000 on 2 cores), and this process's own
    threads of a moment ago raise it (a selection run right after a threaded one would
    get one thread). Where /proc does not say, the load average less one (this
    process may be part of it), rounded down. On a machine already running more
    processes than cores a second thread finds no free core, so it only adds
    overhead (measured at n = 10⁶ on 2 cores under a load of 6–9: 1.03× the wall time
    and 1.26× the CPU of one thread; docs/streaming.md).
    """
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count() or 1
    threads = max(1, min(check_workers(None), usable))
    if os.environ.get("OMP_NUM_THREADS"):
        return threads
    others = _runnable_others()
    if others is None:  # pragma: no cover - no /proc
        try:
            others = int(max(os.getloadavg()[0] - 1.0, 0.0))
        except (AttributeError, OSError):
            others = 0
    return max(1, min(threads, usable - others))


def selection_workers(workers: int | None, n: int) -> int | None:
    """The thread count of one selection on n points: ``workers`` when given
    (validated); for None, 1 when n ≤ :data:`SERIAL_MAX_N` or when :func:`free_cores`
    leaves one core, else None (the per-call rules of this module: all cores for
    large kernel blocks, FFTs and factorisations). With 1, BLAS is held to one thread
    for the whole call as well."""
    if workers is not None:
        return check_workers(workers)
    if n <= SERIAL_MAX_N or free_cores() == 1:
        return 1
    return None


def block_workers(n_entries: float, workers: int | None) -> int | None:
    """``workers`` for a kernel block of ``n_entries`` entries: 1 for small blocks
    when the caller left ``workers`` at None, else ``workers`` unchanged."""
    if workers is None and n_entries < SMALL_BLOCK:
        return 1
    return workers


def block_threads(n_entries: float, workers: int | None) -> int:
    """The validated OpenMP thread count for a kernel block of ``n_entries`` entries."""
    return check_workers(block_workers(n_entries, workers))


def team(workers: int | None) -> int:
    """The OpenMP team of a compiled call made by an operator for one γ: ``workers``
    as :func:`check_workers` reads it (a few microseconds;
    the machines' entry points rely on it to refuse a count beyond
    :func:`max_workers`)."""
    return check_workers(workers)


def fft_threads(workers: int | None, n_points: int) -> int:
    """Validated FFT thread count, at most one thread per MIN_POINTS_PER_THREAD points."""
    threads = check_workers(workers)
    return max(1, min(threads, n_points // MIN_POINTS_PER_THREAD))


def blas_for_flops(flops: float) -> ContextManager[Any]:
    """A context running BLAS/LAPACK on one thread when ``flops`` < SMALL_FLOPS (a
    no-op otherwise)."""
    if flops >= SMALL_FLOPS:
        return contextlib.nullcontext()
    return _blas_limiter.limit(1)


def one_blas_thread() -> ContextManager[Any]:
    """A context running BLAS on one thread (around compiled kernels that call BLAS
    from their own OpenMP threads, and around work run in parallel tasks)."""
    return _blas_limiter.limit(1)


T = TypeVar("T")
U = TypeVar("U")


def map_in_threads(fn: Callable[[T], U], items: Sequence[T], threads: int) -> list[U]:
    """``[fn(item) for item in items]`` on up to ``threads`` Python threads, BLAS on one
    thread throughout: the per-γ work of a grid (eigendecompositions and small
    products, which release the interpreter lock). Each call runs alone on
    single-threaded BLAS whatever ``threads`` is, so the results, returned in the
    order of ``items``, do not depend on it. The first error raised is raised again
    once the calls already running have ended; calls not yet started are dropped."""
    threads = min(int(threads), len(items))
    with one_blas_thread():
        if threads <= 1:
            return [fn(item) for item in items]
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            futures = [pool.submit(fn, item) for item in items]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise


def blas_threads(workers: int | None) -> ContextManager[Any]:
    """A context limiting BLAS/LAPACK to ``workers`` threads (at most
    :func:`max_workers`); no limit for None."""
    if workers is None:
        return contextlib.nullcontext()
    return _blas_limiter.limit(check_workers(workers))


# --------------------------------------------------------------------------- OpenMP teams

_openmp_libs: dict[bool, list[Any]] = {}
_team = threading.local()


def _openmp_controllers() -> list[Any]:
    """threadpoolctl controllers of every OpenMP runtime loaded (pyFFTW ships its own
    libgomp beside the one of the compiled kernels); looked up once before and once
    after pyFFTW is imported."""
    key = "pyfftw.pyfftw" in sys.modules
    libs = _openmp_libs.get(key)
    if libs is None:
        with _controller_lock:
            libs = _openmp_libs.get(key)
            if libs is None:
                libs = list(ThreadpoolController().select(user_api="openmp").lib_controllers)
                _openmp_libs[key] = libs
    return libs


def openmp_team(threads: int) -> None:
    """Set the default OpenMP team of the calling thread to ``threads`` (capped by
    :func:`check_workers`) in every loaded OpenMP runtime.

    Libraries that open parallel regions without a thread count of their own (FFTW's
    OpenMP threads) take the team size from the runtime's default, which is
    ``OMP_NUM_THREADS``: a value such as 999999 makes the runtime try to start that
    many threads and crash. The default is a per-thread setting, so this is called
    in the thread that runs the transform, before planning and executing.
    """
    threads = check_workers(threads)
    libs = _openmp_controllers()
    if getattr(_team, "setting", None) == (threads, id(libs)):
        return
    for lib in libs:
        lib.set_num_threads(threads)
    _team.setting = (threads, id(libs))


# --------------------------------------------------------------------------- Ctrl-C

R = TypeVar("R")

#: compiled calls of at least this many floating-point operations run in a helper
#: thread when called from the main thread (:func:`interruptible`); below, the call
#: returns within a fraction of a second anyway
INTERRUPTIBLE_FLOPS = 1e10

#: seconds between the main thread's checks for a signal while it waits
_POLL = 0.05


def interruptible(flops: float, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)``, answering Ctrl-C within a fraction of a second.

    A LAPACK factorisation (eigh, Cholesky, the tridiagonal reduction) holds the
    main thread in compiled code for as long as it runs (a minute at n = 6000 on a
    busy machine), and Python runs its signal handlers only when that returns. A call
    of at least :data:`INTERRUPTIBLE_FLOPS` made from the main thread therefore runs
    in a helper thread while the main thread waits for it in short steps, so that
    KeyboardInterrupt is raised at once. The abandoned call cannot be stopped: it
    finishes in the background (at most its own running time) and its memory is
    freed then. The helper thread is not a daemon: an interpreter leaving on the
    KeyboardInterrupt waits for the call to end, because OpenBLAS's exit handlers
    hang or crash while a thread is still inside it. From other threads, and for
    smaller calls, ``fn`` runs directly.
    """
    if flops < INTERRUPTIBLE_FLOPS or threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=run, name="kernelselect-factorisation")
    # listed before it starts: a Ctrl-C that lands anywhere from here on (inside start()
    # on a busy machine, before the wait below) still finds it
    _abandoned.append(worker)
    worker.start()
    while not done.wait(_POLL):
        pass
    _abandoned.remove(worker)
    if "error" in box:
        raise box["error"]
    return box["value"]


#: the helper threads of :func:`interruptible` still running or whose caller left on
#: Ctrl-C (a thread leaves the list when its caller receives the result)
_abandoned: list[threading.Thread] = []


def exit_if_abandoned(code: int) -> None:
    """End the process at once with ``code`` when a call abandoned on Ctrl-C
    (:func:`interruptible`) is still running; return otherwise.

    Python's own exit joins that helper thread, which holds the process for the rest
    of the factorisation (minutes at n = 6000 on a busy machine). ``os._exit`` runs
    neither the interpreter's nor the C library's exit handlers, so it neither waits
    nor enters OpenBLAS's shutdown while a thread is inside BLAS; standard output and
    error are flushed first. For the command line, which owns its process; a library
    caller keeps its interpreter and the call ends in the background.
    """
    if any(t.is_alive() for t in _abandoned):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
    _abandoned.clear()


class PassCancelled(Exception):
    """Raised inside a row-block task of a pass that Ctrl-C abandoned."""


_cancelled = threading.Event()


def cancel_passes() -> None:
    """Mark the passes in flight as abandoned (on KeyboardInterrupt): their queued
    row-block tasks then end at their next block instead of running to the end of
    the pass. Ctrl-C is addressed to the whole process, so every pass in it stops."""
    _cancelled.set()


def resume_passes() -> None:
    """Clear :func:`cancel_passes` (at the start of a new pass)."""
    _cancelled.clear()


def check_cancelled() -> None:
    """Raise :class:`PassCancelled` in a row-block task of an abandoned pass."""
    if _cancelled.is_set():
        raise PassCancelled("the pass was interrupted")

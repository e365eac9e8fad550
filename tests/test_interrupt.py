"""Ctrl-C on the exact selection path: the command line exits at once, even while a
LAPACK factorisation abandoned in its helper thread is still running.

The child process stands in for a large n: every factorisation is counted as large
(``INTERRUPTIBLE_FLOPS = 0``, so it runs in the helper thread as at n = 6000) and is
made long by a sleep in that helper thread (signals reach only the main thread, so
the sleep, like a LAPACK call, cannot be cut short). The parent sends SIGINT once the
child has printed that it is factorising; nothing depends on timing but a generous
bound on the exit.
"""

import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = textwrap.dedent("""
    import signal, sys, time
    # Ctrl-C as a terminal delivers it: a suite started in the background (nohup, `&`
    # without job control) passes an ignored SIGINT on to its children
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import scipy.linalg
    from scipy.linalg import lapack
    from kernelselect.utils import _threads
    _threads.INTERRUPTIBLE_FLOPS = 0.0

    def slow(real):
        def call(*args, **kwargs):
            print("FACTORISING", file=sys.stderr, flush=True)
            time.sleep(600)                 # in the helper thread: no signal ends it
            return real(*args, **kwargs)
        return call

    np.linalg.eigh = slow(np.linalg.eigh)
    lapack.dsytrd = slow(lapack.dsytrd)
    scipy.linalg.cho_factor = slow(scipy.linalg.cho_factor)
    from kernelselect.cli import main
    sys.exit(main(sys.argv[1:]))
""")

#: seconds allowed from SIGINT to the exit: the old code took the rest of the call (600 s
#: here); the bound leaves room for a child starved on a busy machine
EXIT_BOUND = 120
#: seconds allowed for the child to start and reach its factorisation
START_BOUND = 300


def _interrupt(args, tmp_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    child = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        lines = []
        seen = threading.Event()

        def read():
            for raw in child.stderr:
                lines.append(raw.decode(errors="replace"))
                if "FACTORISING" in lines[-1]:
                    seen.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert seen.wait(START_BOUND) or child.poll() is not None, "child never factorised"
        assert child.poll() is None, "".join(lines)
        child.send_signal(signal.SIGINT)
        try:
            code = child.wait(EXIT_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the command line did not exit within {EXIT_BOUND} s of Ctrl-C")
        reader.join(10)
        return code, "".join(lines)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stderr.close()


def test_ctrl_c_during_an_exact_factorisation_exits_at_once(tmp_path):
    code, err = _interrupt(["select", "--dataset", "breast_cancer", "--approximation",
                            "exact", "--criterion", "eloo", "--no-progress",
                            "--gammas", "0.01,0.1"], tmp_path)
    assert code == 130 and "kernelselect: interrupted" in err, err


def test_ctrl_c_on_a_regression_file_with_the_laplacian_kernel(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((150, 3))
    data = np.column_stack([X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(150)])
    np.savetxt(tmp_path / "reg.csv", data, delimiter=",", fmt="%.6f")
    code, err = _interrupt(["select", str(tmp_path / "reg.csv"), "--approximation", "exact",
                            "--kernel", "laplacian", "--criterion", "gcv,ree",
                            "--no-progress"], tmp_path)
    assert code == 130 and "kernelselect: interrupted" in err, err


def test_exit_if_abandoned_returns_when_no_call_is_left_running():
    from kernelselect.utils import _threads
    _threads.exit_if_abandoned(130)          # nothing abandoned: an ordinary return
    assert _threads.interruptible(1e12, lambda a: a + 1, 2) == 3
    _threads.exit_if_abandoned(130)          # the call finished: still an ordinary return


def test_a_ctrl_c_inside_thread_start_still_leaves_the_call_listed(monkeypatch):
    """On a busy machine the SIGINT can land while the main thread is still inside
    ``Thread.start()``, after the helper thread runs: the call must be listed as
    abandoned all the same, or the interpreter's exit waits for it."""
    import threading
    from kernelselect.utils import _threads

    release = threading.Event()
    real_start = threading.Thread.start

    def start_then_interrupt(self):
        real_start(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        _threads.interruptible(1e12, release.wait, 60)
    monkeypatch.undo()
    try:
        running = [t for t in _threads._abandoned if t.is_alive()]
        assert running and running[0].name == "kernelselect-factorisation"
    finally:
        release.set()
        for t in list(_threads._abandoned):
            t.join(60)
        _threads._abandoned.clear()

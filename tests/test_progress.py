"""Progress: a bar or low-rate lines on stderr for long runs, nothing for short ones."""

import io
import time

import numpy as np
import pytest

from kernelselect.utils import _progress
from kernelselect import cli, select_kernel


class Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


def _wait_for_text(stream, timeout=600.0):
    end = time.monotonic() + timeout
    while not stream.getvalue() and time.monotonic() < end:
        time.sleep(0.01)
    return stream.getvalue()


@pytest.mark.parametrize("value, expected", [(False, False), (None, False), (True, True),
                                             (0, 0.0), (2.5, 2.5)])
def test_check_progress_accepts(value, expected):
    assert _progress.check_progress(value) == expected and \
        type(_progress.check_progress(value)) is type(expected)


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), "yes", [1]])
def test_check_progress_refuses(value):
    with pytest.raises(ValueError, match="progress must be True, False or a delay"):
        _progress.check_progress(value)


def test_off_and_short_runs_print_nothing():
    for setting in (False, 30.0):
        stream = Stream(tty=False)
        assert list(_progress.progress_iter(range(5), 5, setting, desc="d", unit="γ",
                                            stream=stream)) == list(range(5))
        assert stream.getvalue() == ""


def test_lines_come_during_a_long_step_and_close_with_a_total(monkeypatch):
    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.01)
    stream = Stream(tty=False)
    seen = []
    for i in _progress.progress_iter(range(2), 2, 0.01, desc="kernel selection", unit="γ",
                                     stream=stream):
        if i == 0:  # a step that lasts until the heartbeat has spoken
            seen.append(_wait_for_text(stream))
    lines = stream.getvalue().splitlines()
    assert seen[0].startswith("kernel selection: 0/2 γ done, 0 s elapsed")
    assert lines[-1].startswith("kernel selection: 2/2 γ done in ")
    assert "tqdm" not in stream.getvalue()        # not a terminal: no advice about bars


def test_terminal_without_tqdm_says_a_bar_is_available(monkeypatch):
    monkeypatch.setattr(_progress, "_tqdm", lambda: None)
    stream = Stream(tty=True)
    for _ in _progress.progress_iter(range(1), 1, True, desc="d", unit="γ", stream=stream):
        _wait_for_text(stream)
    first = stream.getvalue().splitlines()[0]
    assert first == "d: 0/1 γ done, 0 s elapsed (install tqdm for a progress bar)"


def test_terminal_with_tqdm_shows_a_bar():
    pytest.importorskip("tqdm")
    stream = Stream(tty=True)
    assert list(_progress.progress_iter(range(3), 3, True, desc="kernel selection", unit="γ",
                                        stream=stream)) == [0, 1, 2]
    text = stream.getvalue()
    assert "kernel selection" in text and "3/3" in text and "γ" in text


def test_select_kernel_reports_on_stderr_and_checks_the_argument(capsys):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = np.sign(X[:, 0])
    # gcv: the dense exact operator, one γ at a time (the moment criteria stream the
    # whole grid at once)
    select_kernel(X, y, gammas=[0.5, 1.0], criterion="gcv", approximation="exact",
                  progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "kernel selection: 2/2 operators done in" in err
    select_kernel(X, y, gammas=[0.5, 1.0], criterion="gcv", approximation="exact",
                  progress=60)
    assert capsys.readouterr() == ("", "")
    with pytest.raises(ValueError, match="progress must be"):
        select_kernel(X, y, progress="always")
    # kta on "exact": every γ from shared passes, counted when the passes end
    select_kernel(X, y, gammas=[0.5, 1.0], criterion="kta", approximation="exact",
                  progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "kernel selection: 2/2 operators done in" in err


def test_one_bar_over_the_whole_selection(capsys):
    """The default selection (Nyström levels, grid extensions): one series of lines
    whose total grows as levels are planned, ending with every build done."""
    import warnings

    rng = np.random.default_rng(0)
    X = rng.standard_normal((900, 3))
    y = np.sign(X[:, 0] + 0.3 * rng.standard_normal(900))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select_kernel(X, y, progress=True, random_state=0)
    _, err = capsys.readouterr()
    lines = err.strip().splitlines()
    builds = res.details["n_operator_builds"]
    assert lines[0].startswith("kernel selection: 0/15 operators done")
    assert lines[-1].startswith(f"kernel selection: {builds}/{builds} operators done in")
    assert len(lines) == 2 and builds > 15                   # levels were added to one bar


def test_progress_bar_total_grows_and_reports_time_left(monkeypatch):
    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.01)
    stream = Stream(tty=False)
    bar = _progress.ProgressBar(True, desc="d", unit="operators", stream=stream)
    bar.extend(2)
    bar.update(1)
    bar.extend(3)
    assert bar.total == 5 and bar.done == 1
    end = time.monotonic() + 600.0
    while "left" not in stream.getvalue() and time.monotonic() < end:
        time.sleep(0.01)
    text = stream.getvalue()
    assert "1/5 operators done" in text and "left" in text
    bar.update(4)
    bar.close()
    assert stream.getvalue().splitlines()[-1].startswith("d: 5/5 operators done in ")
    hidden = _progress.ProgressBar(False, desc="d", unit="x", stream=Stream(tty=False))
    hidden.extend(3)
    hidden.update(3)
    hidden.close()


def test_cli_progress_policy(monkeypatch, capsys):
    calls = []

    def fake_select(X, y, **kwargs):
        calls.append(kwargs["progress"])
        raise cli.CommandError("stop here")

    import kernelselect

    monkeypatch.setattr(kernelselect, "select_kernel", fake_select)
    for argv, expected in ((["select"], cli.PROGRESS_DELAY),
                           (["select", "--quiet"], cli.QUIET_PROGRESS_DELAY),
                           (["select", "--no-progress"], False)):
        assert cli.main(argv) == 2
        assert calls[-1] == expected
    capsys.readouterr()

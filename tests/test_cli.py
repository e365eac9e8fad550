"""The ``kernelselect`` command: parsing, printing, files, errors, and end to end."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import kernelselect
from kernelselect import cli, datasets


class FakeResult:
    """Stands in for SelectionResult with known curves, to test the printing alone."""

    def __init__(self, gammas, alphas, criteria):
        self.gammas = np.asarray(gammas, dtype=float)
        self.alphas = np.asarray(alphas, dtype=float)
        lg = np.log2(self.gammas)[:, None] + 0.1 * np.arange(len(self.alphas))[None, :]
        self.curves, self.best, self.directions = {}, {}, {}
        for k, name in enumerate(criteria):
            # criterion k has its optimum at log2(gamma) = k - 1 (grid permitting)
            values = (lg - (k - 1)) ** 2 + 1.0
            direction = "min" if k % 2 == 0 else "max"
            if direction == "max":
                values = -values
            self.curves[name] = values
            flat = np.argmin(values) if direction == "min" else np.argmax(values)
            g, a = np.unravel_index(flat, values.shape)
            self.best[name] = dict(gamma=float(self.gammas[g]), alpha=float(self.alphas[a]),
                                   value=float(values[g, a]))
            self.directions[name] = direction
        first = criteria[0]
        self.best_gamma = self.best[first]["gamma"]
        self.best_alpha = self.best[first]["alpha"]
        self.details = {"c": 100, "k": 50, "note": "fake"}
        self.timings = np.full(len(self.gammas), 1e-3)

    def to_dict(self):
        return {"gammas": self.gammas, "alphas": self.alphas, "curves": self.curves,
                "best": self.best, "directions": self.directions, "details": self.details}

    plot_calls = []

    def plot(self, axes=None, **kwargs):
        import matplotlib.pyplot as plt

        FakeResult.plot_calls.append(kwargs)
        fig, ax = plt.subplots()
        for name, values in self.curves.items():
            ax.plot(np.log2(self.gammas), values[:, 0], label=name)
        return fig


@pytest.fixture
def fake_select(monkeypatch):
    calls = []

    def select_kernel(X, y, *, kernel="gaussian", gammas=None, alphas=None, criterion="auto",
                      approximation="auto", random_state=None, workers=None,
                      progress=False, standardize=True, task="auto", refine=False,
                      checkpoint=None):
        calls.append(dict(X=X, y=y, kernel=kernel, gammas=gammas, alphas=alphas,
                          criterion=criterion, approximation=approximation,
                          random_state=random_state, workers=workers, progress=progress,
                          standardize=standardize, task=task, refine=refine,
                          checkpoint=checkpoint))
        names = [criterion] if isinstance(criterion, str) else list(criterion)
        grid = gammas if gammas is not None else np.exp2(np.arange(-3, 4))
        return FakeResult(grid, alphas if alphas is not None else (1.0,), names)

    monkeypatch.setattr(kernelselect, "select_kernel", select_kernel, raising=False)
    return calls


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ parsing helpers


def test_parse_gamma_grid():
    assert cli.parse_gamma_grid("log2:-7:7") == [2.0**k for k in range(-7, 8)]
    assert cli.parse_gamma_grid("log2:0:2:0.5") == pytest.approx(
        [1, 2**0.5, 2, 2**1.5, 4])
    assert cli.parse_gamma_grid("log10:-2:2:5") == pytest.approx([0.01, 0.1, 1, 10, 100])
    assert cli.parse_gamma_grid("LOG10:0:2") == pytest.approx([1, 10, 100])
    for bad in ("log3:1:2", "log2:1", "log2:a:2", "log2:2:1", "log2:0:1:0", "log10:0:1:2.5",
                "log2:0:5000:1"):
        with pytest.raises(cli.CommandError, match="--gamma-grid"):
            cli.parse_gamma_grid(bad)


# ------------------------------------------------------------------ select (printing)


def test_select_default_dataset_prints_table(fake_select, capsys):
    code, out, err = run(["select"], capsys)
    assert code == 0 and err == ""
    call = fake_select[0]
    data = datasets.load(datasets.DEFAULT_DATASET)
    np.testing.assert_array_equal(call["X"], data.X)
    np.testing.assert_array_equal(call["y"], data.y)
    assert call["standardize"] is True and call["progress"] == cli.PROGRESS_DELAY
    assert call["criterion"] == "auto" and call["approximation"] == "auto"
    assert call["gammas"] is None and call["alphas"] is None and call["task"] == "binary"
    assert "breast_cancer (shipped): n=683, d=9, binary, standardised" in out
    # the fake optimum of the first criterion is at log2(gamma) = -1
    selected = [line for line in out.splitlines() if line.startswith(">")]
    assert len(selected) == 1
    assert selected[0].split()[1] == "-1.00" and selected[0].rstrip().endswith("*")
    assert "selected   gamma=0.5 (log2 -1.00), alpha=1, auto=1 (minimise)" in out
    assert "details    c=100, k=50, note=fake" in out
    assert re_time(out)


def re_time(out):
    import re

    return re.search(r"time +\d+\.\d{3} s selection \(7 gammas x 1 alphas\)", out)


def test_select_options_passed_through(fake_select, capsys, tmp_path):
    code, out, _ = run([
        "select", "--dataset", "mpg", "--criterion", "ree,kta,gcv", "--approximation", "exact",
        "--kernel", "laplacian", "--gammas", "0.25, 0.5,1,2", "--alphas", "0.1,1",
        "--no-standardize", "--random-state", "7", "--workers", "1",
    ], capsys)
    assert code == 0
    call = fake_select[0]
    assert call["criterion"] == ["ree", "kta", "gcv"]
    assert call["gammas"] == [0.25, 0.5, 1.0, 2.0] and call["alphas"] == (0.1, 1.0)
    assert call["kernel"] == "laplacian" and call["approximation"] == "exact"
    assert call["random_state"] == 7 and call["workers"] == 1 and call["standardize"] is False
    assert "mpg (shipped): n=392, d=7, regression, raw features" in out
    rows = [line for line in out.splitlines() if line[:1] in (">", " ") and "." in line[:14]]
    assert len(rows) == 4 * 2
    # every criterion marks exactly one best value
    assert sum(line.count("*") for line in rows) == 3
    assert "kta would pick gamma=1, alpha=0.1" in out
    assert "(ree: minimise, kta: maximise, gcv: minimise)" in out


def test_select_gamma_grid_json_plot_quiet(fake_select, capsys, tmp_path):
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    code, out, _ = run(["select", "--dataset", "heart", "--gamma-grid", "log2:-3:3",
                        "--json", str(js), "--plot", str(png), "--quiet"], capsys)
    assert code == 0
    assert fake_select[0]["gammas"] == [2.0**k for k in range(-3, 4)]
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("selected gamma=0.5")
    payload = json.loads(js.read_text())
    assert payload["data"] == {"source": "heart (shipped)", "n": 270, "d": 13,
                               "task": "binary", "standardize": True, "read": "memory",
                               "target": {"array": "y", "from": "the shipped set"}}
    assert payload["result"]["best"]["auto"]["gamma"] == 0.5
    assert len(payload["result"]["curves"]["auto"]) == 7
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the figure is titled with the data set; one α: the curves alone
    assert FakeResult.plot_calls[-1] == {"kind": "curves", "data_name": "heart"}
    run(["select", "--dataset", "heart", "--alphas", "0.1,1", "--plot",
         str(tmp_path / "r2.png"), "--quiet"], capsys)
    assert FakeResult.plot_calls[-1] == {"kind": "both", "data_name": "heart"}


@pytest.mark.parametrize("suffix", [".csv", ".svm", ".npz"])
def test_select_reads_files(fake_select, capsys, tmp_path, suffix):
    data = datasets.load("heart")
    path = tmp_path / f"h{suffix}"
    if suffix == ".csv":
        cols = [f"f{j}" for j in range(data.X.shape[1])]
        rows = [",".join(["label"] + cols)]
        rows += [",".join([str(int(t))] + [repr(float(v)) for v in r]) for r, t in zip(data.X, data.y)]
        path.write_text("\n".join(rows))
        argv = ["select", str(path), "--target", "label"]
    elif suffix == ".svm":
        path.write_text("\n".join(
            f"{int(t)} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(r) if v)
            for r, t in zip(data.X, data.y)))
        argv = ["select", str(path)]
    else:
        np.savez(path, X=data.X, y=(data.y > 0).astype(float))
        argv = ["select", str(path)]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    np.testing.assert_allclose(fake_select[0]["X"][:, : data.X.shape[1]], data.X)
    np.testing.assert_array_equal(fake_select[0]["y"], data.y)
    assert f"{path}: n=270" in out


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "argv, message",
    [
        (["select", "--dataset", "nope"], "unknown dataset 'nope'; shipped datasets: abalone"),
        (["select", "missing.csv"], "no such file: missing.csv"),
        (["select", "heart"], "write --dataset heart"),
        (["select", "--gammas", "1,x"], "--gammas: 'x' is not a number"),
        (["select", "--gammas", "1,-2"], "--gammas: every value must be a positive"),
        (["select", "--alphas", "0"], "--alphas: every value must be a positive"),
        (["select", "--criterion", " , "], "--criterion: give at least one"),
        (["select", "--gamma-grid", "lin:0:1"], "--gamma-grid: 'lin:0:1' is not a grid"),
        (["select", "--dataset", "heart", "x.npz"], "either FILE or --dataset"),
        (["select", "--json", "/no/such/dir/r.json"], "--json: the folder /no/such/dir"),
    ],
)
def test_errors_one_line_exit_2(fake_select, capsys, argv, message):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("kernelselect: error: ")
    assert message in err
    assert "Traceback" not in err


def test_error_from_bad_file_reports_line(fake_select, capsys, tmp_path):
    path = tmp_path / "bad.svm"
    path.write_text("1 1:2\n-1 1:zz\n")
    code, _, err = run(["select", str(path)], capsys)
    assert code == 2 and "bad.svm:2: cannot read '1:zz'" in err


def test_error_raised_by_selection_is_one_line(monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise ValueError("alphas too large;\nsecond line")

    monkeypatch.setattr(kernelselect, "select_kernel", boom, raising=False)
    code, _, err = run(["select", "--criterion", "ree"], capsys)
    assert code == 2 and err == "kernelselect: error: alphas too large;\n"
    with pytest.raises(ValueError, match="xyz"):
        cli.main(["--debug", "select", "--criterion", "xyz"])


def test_usage_errors_and_help(capsys):
    code, _, err = run(["select", "--approximation", "svd"], capsys)
    assert code == 2 and "invalid choice: 'svd'" in err
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "select" in out and "datasets" in out
    code, out, _ = run(["select", "--help"], capsys)
    assert code == 0 and "breast_cancer" in out and "--gamma-grid" in out
    code, out, _ = run([], capsys)  # bare command: the help, and success
    assert code == 0 and "COMMAND" in out and "select" in out
    code, _, err = run(["frobnicate"], capsys)
    assert code == 2 and "invalid choice" in err


def test_version(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out == f"kernelselect {kernelselect.__version__}\n"


def test_datasets_command(capsys):
    code, out, _ = run(["datasets"], capsys)
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert names == [i.name for i in datasets.list_datasets()]
    assert "breast_cancer    binary        683    9  (default" in out


def test_python_dash_m_runs():
    proc = subprocess.run([sys.executable, "-m", "kernelselect", "datasets"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "winequality_red" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "kernelselect", "select", "--dataset", "x"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and proc.stderr.startswith("kernelselect: error: unknown dataset")


def test_config_command_prints_show_config(monkeypatch, capsys):
    monkeypatch.setattr(kernelselect, "show_config",
                        lambda mode="stdout": "openmp : True\nfft    : pyfftw")
    code, out, _ = run(["config"], capsys)
    assert code == 0 and out == "openmp : True\nfft    : pyfftw\n"


# ------------------------------------------------------------------ end to end (real selection)


def test_end_to_end_matches_select_kernel(capsys, tmp_path):
    js = tmp_path / "heart.json"
    code, out, err = run(["select", "--dataset", "heart", "--gamma-grid", "log2:-6:-2:2",
                          "--criterion", "ree,kta", "--random-state", "3",
                          "--approximation", "nystrom", "--json", str(js)], capsys)
    assert code == 0, err
    X, y = datasets.load("heart", return_X_y=True)
    direct = kernelselect.select_kernel(X, y, gammas=[2.0**-6, 2.0**-4, 2.0**-2],
                                        criterion=["ree", "kta"], approximation="nystrom",
                                        random_state=3, standardize=True)
    payload = json.loads(js.read_text())["result"]
    for name in ("ree", "kta"):
        np.testing.assert_allclose(np.asarray(payload["curves"][name]), direct.curves[name],
                                   rtol=1e-12)
        assert payload["best"][name]["gamma"] == direct.best[name]["gamma"]
    rows = [line for line in out.splitlines() if line[:1] in (">", " ") and line[2:13].strip()
            .lstrip("-").replace(".", "").isdigit()]
    assert len(rows) == 3
    selected = [line for line in rows if line.startswith(">")]
    assert len(selected) == 1
    assert float(selected[0].split()[1]) == pytest.approx(math.log2(direct.best_gamma))
    assert f"gamma={direct.best_gamma:.6g}" in out


def test_end_to_end_exact_regression_quiet(capsys):
    code, out, err = run(["select", "--dataset", "servo", "--approximation", "exact",
                          "--criterion", "gcv", "--alphas", "0.1,1", "--gammas", "0.1,0.5,2",
                          "--quiet"], capsys)
    assert code == 0, err
    X, y = datasets.load("servo", return_X_y=True)
    direct = kernelselect.select_kernel(X, y, gammas=[0.1, 0.5, 2.0], alphas=(0.1, 1.0),
                                        criterion="gcv",
                                        approximation="exact", random_state=0,
                                        standardize=True)
    assert out.startswith(f"selected gamma={direct.best_gamma:.6g} ")
    assert f"alpha={direct.best_alpha:.6g}," in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["select", "--dataset", "heart", "--criterion", "nonsense"],
         "criterion='nonsense' is not a known criterion; use one of"),
        (["select", "--dataset", "mpg", "--criterion", "fsm", "--gammas", "1"], "fsm"),
    ],
)
def test_end_to_end_errors(capsys, argv, message):
    code, _, err = run(argv, capsys)
    assert code == 2 and err.startswith("kernelselect: error: ") and message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "extra, approximation",
    [
        (["--sampler", "column_norm", "--landmarks", "60"],
         kernelselect.Nystroem(n_landmarks=60, sampler="column_norm")),
        (["--approximation", "rff", "--features", "50"], kernelselect.RFF(n_features=50)),
        (["--approximation", "random_mcm", "--features", "30", "--criterion", "random_kta_row"],
         kernelselect.RandomMCM(n_features=30)),
    ],
)
def test_end_to_end_configured_approximation(capsys, tmp_path, extra, approximation):
    js = tmp_path / "out.json"
    argv = ["select", "--dataset", "heart", "--gammas", "0.05,0.2", "--quiet",
            "--json", str(js)] + extra
    criterion = extra[extra.index("--criterion") + 1] if "--criterion" in extra else "ree"
    if "--criterion" not in extra:
        argv += ["--criterion", criterion]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    X, y = datasets.load("heart", return_X_y=True)
    direct = kernelselect.select_kernel(X, y, gammas=[0.05, 0.2], criterion=criterion,
                                        approximation=approximation, random_state=0,
                                        standardize=True)
    got = np.asarray(json.loads(js.read_text())["result"]["curves"][criterion])
    np.testing.assert_allclose(got, direct.curves[criterion], rtol=1e-12)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--approximation", "rff", "--sampler", "leverage"], "--approximation nystrom only"),
        (["--features", "10"], "rff or random_mcm only"),
        (["--sampler", "bogus"], "sampler"),
    ],
)
def test_configured_approximation_errors(capsys, extra, message):
    code, _, err = run(["select", "--dataset", "heart", "--gammas", "0.1"] + extra, capsys)
    assert code == 2 and message in err


@pytest.mark.parametrize("workers", ["0", "100000"])
def test_bad_workers_reported_before_any_output(workers, tmp_path, capsys):
    target = tmp_path / "result.json"
    code, out, err = run(["select", "--workers", workers, "--json", str(target)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("kernelselect: error: --workers:") and err.count("\n") == 1
    assert not target.exists()

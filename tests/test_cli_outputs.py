"""``kernelselect select`` checks its outputs before computing, never overwrites the
input or an existing file without --force, and writes nothing for a non-finite
selection."""

import json
import os
import sys

import numpy as np
import pytest

import kernelselect
from kernelselect import cli

FAST = ["--approximation", "exact", "--gammas", "0.1,1", "--quiet"]
# one γ: no grid edge to warn about, for the runs whose stderr must be the error alone
ONE_GAMMA = ["--approximation", "exact", "--gammas", "0.5", "--quiet"]


@pytest.fixture
def good(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    path = tmp_path / "good.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return path


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, message):
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("kernelselect: error: "), err
    assert message in err, err


def test_json_onto_the_input_is_refused_even_with_force(good, capsys, no_selection, monkeypatch):
    before = good.read_bytes()
    for extra in ([], ["--force"]):
        code, out, err = run(["select", good, "--json", good, *extra], capsys)
        one_line_error(code, out, err, "is the input data file")
    link = good.parent / "alias.csv"
    os.link(good, link)
    code, out, err = run(["select", good, "--plot", link, "--force"], capsys)
    one_line_error(code, out, err, "is the input data file")
    monkeypatch.chdir(good.parent)
    code, out, err = run(["select", "good.csv", "--json", "./good.csv"], capsys)
    one_line_error(code, out, err, "is the input data file")
    assert good.read_bytes() == before


def test_existing_output_needs_force(good, tmp_path, capsys):
    js = tmp_path / "r.json"
    js.write_text("keep me")
    code, out, err = run(["select", good, "--json", js, *FAST], capsys)
    one_line_error(code, out, err, "r.json exists; pass --force")
    assert js.read_text() == "keep me"
    code, out, err = run(["select", good, "--json", js, "--force", *FAST], capsys)
    assert code == 0, err
    assert json.loads(js.read_text())["result"]["gammas"] == [0.1, 1.0]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("make_argv, message", [
    (lambda d: ["--json", d], "is a folder"),
    (lambda d: ["--json", "/dev/full"], "is not a regular file"),
    (lambda d: ["--json", d / "no" / "r.json"], "does not exist"),
    (lambda d: ["--plot", d / "x.unknownext"], "has the extension .unknownext"),
    (lambda d: ["--plot", d / "noext"], "has no extension"),
    (lambda d: ["--plot", "-"], "a plot needs a file name"),
    (lambda d: ["--json", d / "same.out", "--plot", d / "same.out"], "name the same file"),
    (lambda d: ["--gammas", ""], "--gammas: the list is empty"),
    (lambda d: ["--alphas", ""], "--alphas: the list is empty"),
    (lambda d: ["--zero-based", "yes"], "--zero-based applies to svmlight files only"),
])
def test_output_problems_found_before_the_selection(good, tmp_path, capsys, no_selection,
                                                    make_argv, message):
    code, out, err = run(["select", good, *make_argv(tmp_path)], capsys)
    one_line_error(code, out, err, message)
    assert out == ""                      # not even the data header
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.csv"]


def test_unknown_criterion_reported_before_the_data_header(good, capsys, no_selection):
    code, out, err = run(["select", good, "--criterion", "ree,bogus"], capsys)
    one_line_error(code, out, err, "'bogus' is not a known criterion")
    assert out == ""


def test_unwritable_folder_found_before_the_selection(good, tmp_path, capsys, no_selection,
                                                      monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli._output.tempfile, "mkstemp", refuse)
    code, out, err = run(["select", good, "--json", tmp_path / "r.json"], capsys)
    one_line_error(code, out, err, "cannot write in the folder")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="the superuser writes into read-only folders")
def test_read_only_folder_found_before_the_selection(good, tmp_path, capsys, no_selection):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, out, err = run(["select", good, "--json", folder / "r.json"], capsys)
    finally:
        folder.chmod(0o755)
    one_line_error(code, out, err, "cannot write in the folder")


def test_plot_without_matplotlib_found_before_the_selection(good, tmp_path, capsys,
                                                            no_selection, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run(["select", good, "--plot", tmp_path / "p.png"], capsys)
    one_line_error(code, out, err, "--plot needs matplotlib")


def test_non_finite_selection_exits_2_and_writes_nothing(good, tmp_path, capsys):
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    code, out, err = run(["select", good, "--alphas", "1e300", "--criterion", "gcv",
                          "--json", js, "--plot", png], capsys)
    assert code == 2 and err.startswith("kernelselect: error: ") and err.count("\n") == 1
    assert "selected" not in out and "nan" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.csv"]


def test_non_finite_result_is_refused_by_the_cli_itself(good, tmp_path, capsys, monkeypatch):
    real = kernelselect.select_kernel

    def nan_selection(*args, **kwargs):
        res = real(*args, **kwargs)
        for name in res.curves:
            res.curves[name][:] = np.nan
        return type(res)(res.gammas, res.alphas, res.curves, res.directions, res.timings,
                         res.details)

    monkeypatch.setattr(kernelselect, "select_kernel", nan_selection)
    js = tmp_path / "r.json"
    code, out, err = run(["select", good, "--json", js, *ONE_GAMMA], capsys)
    one_line_error(code, out, err, "the selection is not finite")
    assert not js.exists()


def test_json_dash_writes_json_to_stdout_and_the_report_to_stderr(good, capsys):
    code, out, err = run(["select", good, "--json", "-", "--approximation", "exact",
                          "--gammas", "0.1,1"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert payload["result"]["gammas"] == [0.1, 1.0]
    assert "selected" in err and "data" in err
    assert not os.path.exists("-")


def test_write_failure_leaves_nothing(good, tmp_path, capsys, monkeypatch):
    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli._output.os, "fsync", full)
    js = tmp_path / "r.json"
    code, out, err = run(["select", good, "--json", js, *ONE_GAMMA], capsys)
    one_line_error(code, out, err, "No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.csv"]


def test_plot_and_json_written_with_their_formats(good, tmp_path, capsys):
    js, pdf = tmp_path / "r.json", tmp_path / "r.pdf"
    code, out, err = run(["select", good, "--json", js, "--plot", pdf, *FAST], capsys)
    assert code == 0, err
    assert pdf.read_bytes().startswith(b"%PDF")
    assert json.loads(js.read_text())["settings"]["approximation"] == "exact"


def test_zero_based_option(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = np.round(rng.standard_normal((30, 3)), 3)
    y = np.where(X[:, 0] > 0, 1, -1)
    path = tmp_path / "z.svm"
    with open(path, "w") as fh:  # 0-based, the layout of scikit-learn's dump_svmlight_file
        for row, t in zip(X, y):
            fh.write(f"{t} " + " ".join(f"{j}:{v}" for j, v in enumerate(row)) + "\n")
    code, out, err = run(["select", path, "--json", "-", *FAST], capsys)
    assert code == 0, err
    assert json.loads(out)["data"]["d"] == 3
    code, out, err = run(["select", path, "--zero-based", "no", *FAST], capsys)
    one_line_error(code, out, err, "feature index 0 in a 1-based file")
    code, out, err = run(["select", path, "--zero-based", "yes", "--json", "-", *FAST], capsys)
    assert code == 0 and json.loads(out)["data"]["d"] == 3


@pytest.mark.parametrize("spec, message", [
    ("log10:-1:1:nan", "every field of 'log10:-1:1:nan' must be a finite number"),
    ("log2:-1e308:1e308", "beyond the float range; keep START and STOP within ±996"),
    ("log2:-1:1:1e-300", "STEP=1e-300 gives 2e+300 values, more than 1000"),
    ("log10:-1:1:1e300", "NUM=1e+300 values is too many"),
    ("log2:3:1", "need START <= STOP"),
])
def test_gamma_grid_errors_name_the_field(good, capsys, no_selection, spec, message):
    code, out, err = run(["select", good, "--gamma-grid", spec], capsys)
    one_line_error(code, out, err, message)


def test_complex_npz_refused_not_truncated(tmp_path, capsys, no_selection):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2)) + 1j
    path = tmp_path / "c.npz"
    np.savez(path, X=X, y=np.sign(X.real[:, 0]))
    code, out, err = run(["select", path], capsys)
    one_line_error(code, out, err, "X holds complex numbers")

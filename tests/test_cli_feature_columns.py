"""``kernelselect select`` on CSV columns: header names through the per-feature
report, JSON and relevance chart; text columns named with the options that leave them
out (--feature-columns, --drop); the help and messages of the first contact."""

import json

import numpy as np
import pytest

from kernelselect import cli, datasets


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write(path, names, rows):
    lines = ([",".join(names)] if names else []) + [",".join(map(str, r)) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def regression_rows():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 3))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(60)
    return [[f"{v:.6f}" for v in x] + [f"{t:.6f}"] for x, t in zip(X, y)]


@pytest.mark.parametrize("names", [["area", "rooms", "age"], None])
def test_per_feature_report_json_and_chart_name_the_columns(tmp_path, capsys,
                                                           regression_rows, names):
    """With a header the features are called by their names everywhere (they were
    x0, x1, …); without one they stay x0, x1, …; a relevance chart is written beside
    --plot."""
    pytest.importorskip("matplotlib")
    header = None if names is None else names + ["price"]
    csv = _write(tmp_path / "reg.csv", header, regression_rows)
    plot, js = tmp_path / "out.png", tmp_path / "out.json"
    code, out, err = run(["select", csv, "--kernel", "ard", "--no-progress",
                          "--plot", plot, "--json", js], capsys)
    assert code == 0, err
    shown = names or ["x0", "x1", "x2"]
    (selected,) = [line for line in out.splitlines() if line.startswith("selected")]
    assert all(f"{name}=" in selected for name in shown)
    if names is not None:
        assert "x0=" not in selected
    record = json.loads(js.read_text())
    assert [f["feature"] for f in record["per_feature"]] == shown
    np.testing.assert_allclose([f["gamma"] for f in record["per_feature"]],
                               record["result"]["best_gamma"])
    assert record["data"].get("feature_names") == names
    chart = tmp_path / "out_relevances.png"
    assert plot.stat().st_size > 0 and chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote      {chart}" in out


def test_the_relevance_chart_is_checked_before_the_run(tmp_path, capsys, regression_rows):
    csv = _write(tmp_path / "reg.csv", ["a", "b", "c", "y"], regression_rows)
    (tmp_path / "p_relevances.png").write_bytes(b"keep")
    code, _, err = run(["select", csv, "--kernel", "ard", "--plot", tmp_path / "p.png"],
                       capsys)
    assert code == 2 and "p_relevances.png exists" in err and "--force" in err
    assert not (tmp_path / "p.png").exists()
    assert (tmp_path / "p_relevances.png").read_bytes() == b"keep"


@pytest.fixture()
def text_csv(tmp_path, regression_rows):
    cities = ["Paris", "Lyon", "Nice"]
    rows = [[r[0], cities[i % 3], r[1], r[3]] for i, r in enumerate(regression_rows)]
    return _write(tmp_path / "homes.csv", ["area", "city", "rooms", "price"], rows), rows


def test_a_text_column_is_named_with_the_options_that_leave_it_out(text_csv, capsys):
    csv, _ = text_csv
    code, _, err = run(["select", csv], capsys)
    assert code == 2
    assert "column 1 'city' holds text ('Paris')" in err
    assert "--drop city" in err and "--feature-columns" in err
    assert "impute or drop such rows" not in err           # not a bad row


def test_a_text_column_without_a_header_is_named_by_its_index(tmp_path, capsys,
                                                              regression_rows):
    rows = [[r[0], "red" if i % 2 else "blue", r[1], r[3]]
            for i, r in enumerate(regression_rows)]
    csv = _write(tmp_path / "plain.csv", None, rows)
    code, _, err = run(["select", csv], capsys)
    assert code == 2 and "column 1 holds text ('blue')" in err and "--drop 1" in err
    code, out, err = run(["select", csv, "--drop", "1", "--quiet"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("option", [["--drop", "city"], ["--drop", "1"],
                                    ["--feature-columns", "area,rooms"],
                                    ["--feature-columns", "0,2"]])
def test_feature_columns_and_drop_select_the_same_data(text_csv, capsys, tmp_path, option):
    csv, rows = text_csv
    js = tmp_path / "sel.json"
    code, out, err = run(["select", csv, *option, "--gammas", "0.5,1", "--alphas", "0.1",
                          "--criterion", "ree", "--json", js, "--no-progress"], capsys)
    assert code == 0, err
    assert f"features   2 of 3 columns: area, rooms ({' '.join(option)})" in out
    record = json.loads(js.read_text())
    assert record["data"]["feature_names"] == ["area", "rooms"]
    assert record["data"]["feature_columns"] == [0, 2] and record["data"]["d"] == 2
    data = datasets.load_csv(csv, target="price", drop="city")
    np.testing.assert_array_equal(data.X, [[float(r[0]), float(r[2])] for r in rows])


@pytest.mark.parametrize("argv, message", [
    (["--drop", "city", "--feature-columns", "0"], "either --feature-columns or --drop"),
    (["--drop", "town"], "--drop: 'town' is not a column"),
    (["--feature-columns", "price"], "--feature-columns: column 3 is the target"),
    (["--drop", "area,city,rooms"], "every feature column is dropped"),
    (["--drop", ","], "--drop: give at least one column"),
])
def test_bad_column_options_are_refused(text_csv, capsys, argv, message):
    csv, _ = text_csv
    code, _, err = run(["select", csv, *argv], capsys)
    assert code == 2 and message in err


def test_column_options_apply_to_csv_only(capsys):
    code, _, err = run(["select", "--dataset", "heart", "--drop", "1"], capsys)
    assert code == 2 and "--drop applies to .csv/.tsv input only" in err


def test_every_select_option_has_help():
    parser = cli.build_parser()
    (select,) = [a for a in parser._subparsers._group_actions[0].choices.items()
                 if a[0] == "select"]
    for action in select[1]._actions:
        assert action.help, f"{action.option_strings or action.dest} has no help"
    (kernel,) = [a for a in select[1]._actions if a.dest == "kernel"]
    assert "ard" in kernel.help and "relevance" in kernel.help


def test_an_unknown_extension_lists_every_format_the_command_reads(tmp_path, capsys):
    path = tmp_path / "data.parquet"
    path.write_bytes(b"PAR1")
    code, _, err = run(["select", path], capsys)
    assert code == 2
    for ext in (".csv", ".npz", ".npy", ".zarr", ".svm"):
        assert ext in err
    with pytest.raises(ValueError, match=r"\.zarr.*open_chunked"):
        datasets.load_file(path)

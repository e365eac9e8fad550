"""``kernelselect select`` on files: the report names the target column, the header
decision and the way the data was read; options that do not apply are refused; no
output may land on anything the run reads; odd inputs and outputs are refused up
front with one line naming the option or file."""

import json
import os
import shutil
import sys

import numpy as np
import pytest

import kernelselect
from kernelselect import cli, datasets

FAST = ["--approximation", "exact", "--gammas", "0.1,1", "--criterion", "ree"]


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, message):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("kernelselect: error: "), err
    assert message in err, err


@pytest.fixture
def calls(monkeypatch):
    """select_kernel replaced by a recorder returning a tiny real result."""
    seen = []
    real = kernelselect.select_kernel

    def record(X, y, **kwargs):
        seen.append((X, y, kwargs))
        Xn = np.asarray(X[:40]) if not hasattr(X, "compute") else np.asarray(X[:40].compute())
        yn = np.asarray(y[:40]) if not hasattr(y, "compute") else np.asarray(y[:40].compute())
        return real(Xn, yn, gammas=[0.1, 1.0], criterion="ree", approximation="exact",
                    task=kwargs["task"])

    monkeypatch.setattr(kernelselect, "select_kernel", record, raising=False)
    return seen


@pytest.fixture
def no_selection(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("select_kernel ran although the command was invalid")

    monkeypatch.setattr(kernelselect, "select_kernel", forbidden, raising=False)


@pytest.fixture
def heart_files(tmp_path):
    data = datasets.load("heart")
    np.save(tmp_path / "h.npy", np.column_stack([data.X, data.y]))
    np.savez(tmp_path / "h.npz", X=data.X, y=data.y)
    return tmp_path


# --------------------------------------------------------------------------- CSV


def test_headerless_text_labels_csv_keeps_every_row(tmp_path, capsys, calls):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    path = tmp_path / "yn.csv"
    path.write_text("\n".join(",".join([*map(repr, r.tolist()), "yes" if r[0] > 0 else "no"])
                              for r in X))
    js = tmp_path / "r.json"
    code, out, err = run(["select", path, "--json", js], capsys)
    assert code == 0, err
    assert calls[0][0].shape == (80, 3)
    assert f"{path}: n=80, d=3, binary" in out
    assert "target     column 3 of 4 (the last: the default, --target -1)" in out
    assert "header     none (auto: the first row is of the same kind" in out
    data = json.loads(js.read_text())["data"]
    assert data["header"]["used"] is False and data["target"]["column"] == 3
    assert data["target"]["from"] == "default (the last column)"


def test_header_options(tmp_path, capsys, calls):
    path = tmp_path / "num.csv"
    path.write_text("1,2,3\n" + "\n".join(f"{i / 7},{i % 5},{i % 2}" for i in range(30)))
    code, out, err = run(["select", path, "--quiet"], capsys)
    assert code == 0 and calls[-1][0].shape == (30, 2)
    code, out, err = run(["select", path, "--no-header"], capsys)
    assert code == 0 and calls[-1][0].shape == (31, 2)
    assert "header     none (given: header=False)" in out
    code, out, err = run(["select", path, "--header", "--target", "1"], capsys)
    assert code == 0 and calls[-1][0].shape == (30, 2)
    assert "target     column 1 '2' of 3 (--target 1)" in out
    assert "the first row, read as column names (given: header=True)" in out


def test_encoding_option(tmp_path, capsys, calls):
    path = tmp_path / "lat.csv"
    rows = [f"{i},{i % 4},{['café', 'cafè', 'cafe'][i % 3]}" for i in range(30)]
    path.write_bytes(("a,b,label\n" + "\n".join(rows)).encode("latin-1"))
    code, _, err = run(["select", path], capsys)
    one_line_error(code, err, "lat.csv: byte 17 (0xe9) is not valid utf-8")
    assert "--encoding" in err
    code, out, err = run(["select", path, "--encoding", "latin-1"], capsys)
    assert code == 0, err
    assert calls[-1][2]["task"] == "multiclass"
    assert "iso8859-1" in out or "latin-1" in out


def test_duplicate_target_name_refused(tmp_path, capsys, no_selection):
    path = tmp_path / "dup.csv"
    path.write_text("a,label,b,label\n1,2,3,0\n5,6,7,1\n")
    code, _, err = run(["select", path, "--target", "label"], capsys)
    one_line_error(code, err, "names 2 columns of")
    assert "(positions 1, 3)" in err


def test_task_multiclass_accepts_text_classes(tmp_path, capsys, calls):
    path = tmp_path / "tri.csv"
    path.write_text("a,b,label\n" + "\n".join(f"{i},{i % 3},{['cat', 'dog', 'cow'][i % 3]}"
                                               for i in range(30)))
    code, _, err = run(["select", path, "--task", "multiclass", "--quiet"], capsys)
    assert code == 0, err
    assert calls[0][2]["task"] == "multiclass"


# --------------------------------------------------------------------------- options that do not apply


@pytest.mark.parametrize("name, extra, message", [
    ("h.npz", ["--target", "0"], "--target applies to .csv/.tsv, .npy and .zarr input"),
    ("h.npz", ["--header"], "--header applies to .csv/.tsv input only"),
    ("h.npy", ["--encoding", "latin-1"], "--encoding applies to .csv/.tsv input only"),
    ("h.npy", ["--target", "label"], "--target: give a column index for .npy input"),
    ("h.npy", ["--target", "14"], "--target 14 is outside the 14 columns"),
    ("h.npz", ["--chunk-rows", "10"], "--chunk-rows applies to .npy/.zarr input only"),
    ("h.csv", ["--scheduler", "tcp://192.0.2.1:8786"],
     "--scheduler applies to .npy/.zarr input only"),
    (None, ["--target", "1"], "not to the shipped dataset breast_cancer"),
])
def test_options_that_do_not_apply_are_refused(heart_files, capsys, no_selection, name, extra,
                                                 message):
    argv = ["select"] + ([heart_files / name] if name else []) + extra
    code, _, err = run(argv, capsys)
    one_line_error(code, err, message)


# --------------------------------------------------------------------------- .npy doors


def test_npy_is_read_in_memory_and_names_its_target(heart_files, capsys, calls):
    js = heart_files / "r.json"
    code, out, err = run(["select", heart_files / "h.npy", "--json", js], capsys)
    assert code == 0, err
    X, y, _ = calls[0]
    assert isinstance(X, np.ndarray)
    data = datasets.load("heart")
    np.testing.assert_array_equal(X, data.X)
    np.testing.assert_array_equal(y, data.y)
    assert "target     column 13 of 14 (the last: the default, --target -1)" in out
    assert "read       in memory" in out
    record = json.loads(js.read_text())["data"]
    assert record["read"] == "memory" and record["target"]["column"] == 13


def test_npy_larger_than_the_limit_is_read_with_dask(heart_files, capsys, calls, monkeypatch):
    pytest.importorskip("dask.array")
    monkeypatch.setattr(cli._data, "max_bytes", lambda: 20_000)
    code, out, err = run(["select", heart_files / "h.npy", "--target", "0"], capsys)
    assert code == 0, err
    assert hasattr(calls[0][0], "compute")
    assert "read       chunk by chunk with Dask" in out and "exceed the limit" in out
    assert "target     column 0 of 14 (--target 0)" in out
    assert f"{heart_files / 'h.npy'} (chunked, Dask): n=270" in out
    monkeypatch.setattr(cli._data, "max_bytes", lambda: 2**40)
    code, out, err = run(["select", heart_files / "h.npy", "--chunk-rows", "100"], capsys)
    assert code == 0 and "--chunk-rows/--scheduler given" in out
    assert hasattr(calls[-1][0], "compute")


def test_npy_and_npz_give_one_answer_with_the_defaults(heart_files, capsys):
    answers = []
    for name in ("h.npy", "h.npz"):
        js = heart_files / f"{name}.json"
        code, _, err = run(["select", heart_files / name, "--quiet", "--no-progress",
                            "--json", js], capsys)
        assert code == 0, err
        answers.append(json.loads(js.read_text())["result"])
    assert answers[0]["best"] == answers[1]["best"]
    np.testing.assert_array_equal(answers[0]["gammas"], answers[1]["gammas"])


def test_zarr_that_fits_is_read_in_memory(heart_files, capsys, calls):
    da = pytest.importorskip("dask.array")
    pytest.importorskip("zarr")
    data = datasets.load("heart")
    store = heart_files / "h.zarr"
    da.from_array(np.column_stack([data.y, data.X]), chunks=(100, -1)).to_zarr(str(store))
    code, out, err = run(["select", store, "--target", "0"], capsys)
    assert code == 0, err
    X, y, _ = calls[0]
    assert isinstance(X, np.ndarray)
    np.testing.assert_array_equal(X, data.X)
    np.testing.assert_array_equal(y, data.y)
    assert "read       in memory" in out and "target     column 0 of 14 (--target 0)" in out


def test_npy_input_errors_name_the_file(tmp_path, capsys, no_selection):
    np.save(tmp_path / "dt.npy", (np.datetime64("2020-01-01") + np.arange(10)).reshape(5, 2))
    code, _, err = run(["select", tmp_path / "dt.npy"], capsys)
    one_line_error(code, err, "dt.npy: the array must hold numbers (bool, integer or float), got dtype datetime64[D]")
    np.save(tmp_path / "lie.npy", np.ones((20, 3)))
    raw = (tmp_path / "lie.npy").read_bytes().replace(b"(20, 3)", b"(2000, 3)")
    (tmp_path / "lie.npy").write_bytes(raw)
    code, _, err = run(["select", tmp_path / "lie.npy"], capsys)
    one_line_error(code, err, "lie.npy: the .npy header declares shape (2000, 3)")


# --------------------------------------------------------------------------- never clobber an input


def test_outputs_inside_a_zarr_input_store_are_refused(tmp_path, capsys, no_selection):
    store = tmp_path / "d.zarr"
    store.mkdir()
    (store / "zarr.json").write_text("{}")
    before = (store / "zarr.json").read_bytes()
    (tmp_path / "link").symlink_to(tmp_path)
    for target in (store / "zarr.json", store / "new.json", tmp_path / "link" / "d.zarr" / "x"):
        code, _, err = run(["select", store, "--json", target, "--force"], capsys)
        one_line_error(code, err, f"inside the input store {store}")
    assert (store / "zarr.json").read_bytes() == before


def test_the_npz_sidecar_is_refused_even_when_absent(heart_files, capsys, no_selection):
    code, _, err = run(["select", heart_files / "h.npz", "--json", heart_files / "h.json",
                        "--force"], capsys)
    one_line_error(code, err, "is the JSON sidecar read with h.npz")
    assert not (heart_files / "h.json").exists()


def test_shipped_dataset_files_are_refused(tmp_path, capsys, no_selection, monkeypatch):
    for root in datasets._shipped_paths():     # the installed files themselves
        target = root / "heart.npz"
        before = target.read_bytes()
        code, _, err = run(["select", "--dataset", "heart", "--json", target, "--force"],
                           capsys)
        one_line_error(code, err, "inside the folder of the shipped datasets")
        assert target.read_bytes() == before
    # a copy standing in for the package folder, reached through a hard link
    copy = tmp_path / "data"
    copy.mkdir()
    shutil.copy(datasets._shipped_paths()[0] / "heart.json", copy / "heart.json")
    os.link(copy / "heart.json", tmp_path / "alias.json")
    monkeypatch.setattr(datasets, "_shipped_paths", lambda: [copy])
    code, _, err = run(["select", "--json", tmp_path / "alias.json", "--force"], capsys)
    one_line_error(code, err, "inside the folder of the shipped datasets")


# --------------------------------------------------------------------------- odd inputs and outputs


def test_fifo_and_device_inputs_are_refused(tmp_path, capsys, no_selection):
    os.mkfifo(tmp_path / "f.csv")
    code, _, err = run(["select", tmp_path / "f.csv"], capsys)
    one_line_error(code, err, "f.csv is a FIFO (named pipe), not a regular file")
    (tmp_path / "z.npy").symlink_to("/dev/zero")
    code, _, err = run(["select", tmp_path / "z.npy"], capsys)
    one_line_error(code, err, "z.npy is a character device")


def test_output_name_longer_than_the_file_system_allows(tmp_path, capsys, no_selection):
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "x" * (limit - 4) + ".json"
    code, _, err = run(["select", "--json", tmp_path / name], capsys)
    one_line_error(code, err, f"the file name is {limit + 1} bytes long, more than the {limit}")


def test_longest_output_name_is_written(tmp_path, capsys, calls):
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    target = tmp_path / ("x" * (limit - 5) + ".json")
    code, _, err = run(["select", "--json", target], capsys)
    assert code == 0, err
    assert json.loads(target.read_text())["data"]["n"] == 683


def test_json_to_closed_stdout(capsys, no_selection, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    code, _, err = run(["select", "--json", "-"], capsys)
    one_line_error(code, err, "--json -: standard output is closed")


def test_auto_cannot_be_combined_with_other_criteria(capsys, no_selection):
    code, _, err = run(["select", "--criterion", "auto,kta"], capsys)
    one_line_error(code, err, "--criterion: 'auto' (the default policy")


def test_bad_scheduler_address_names_the_option(heart_files, capsys, no_selection):
    pytest.importorskip("distributed")
    code, _, err = run(["select", heart_files / "h.npy", "--scheduler", "not an address"],
                       capsys)
    one_line_error(code, err, "--scheduler: cannot connect to 'not an address'")


def test_file_names_are_escaped_in_messages_and_reports(tmp_path, capsys, calls):
    code, out, err = run(["select", "\x1b]0;owned\x07.csv"], capsys)
    assert code == 2 and "\x1b" not in err and "\\x1b]0;owned\\x07.csv" in err
    path = tmp_path / "\x1b[31mred.csv"
    path.write_text("\n".join(f"{i},{i % 3},{i % 2}" for i in range(30)))
    code, out, err = run(["select", path, "--json", tmp_path / "\x1b[2Jr.json"], capsys)
    assert code == 0, err
    assert "\x1b" not in out + err and "\\x1b[31mred.csv: n=30" in out
    assert "wrote      " in out and "\\x1b[2Jr.json" in out


def test_memory_error_is_one_line(capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(kernelselect, "select_kernel", boom, raising=False)
    code, _, err = run(["select", "--quiet"], capsys)
    one_line_error(code, err, "out of memory")

"""Readers never change data silently: CSV headers, encodings and target columns;
.npy headers and dtypes; .npz members bounded before they are decompressed; sidecars
checked; non-regular files refused; loose argument types refused."""

import io
import json
import os
import zipfile

import numpy as np
import pytest

import kernelselect
from kernelselect import datasets


def _rows(X, labels):
    return [",".join([*(repr(float(v)) for v in r), str(t)]) for r, t in zip(X, labels)]


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    return X, X[:, 0] > 0


# --------------------------------------------------------------------------- CSV header


def test_headerless_text_labels_keep_their_first_row(tmp_path, xy):
    X, pos = xy
    path = tmp_path / "yn.csv"
    path.write_text("\n".join(_rows(X, np.where(pos, "yes", "no"))))
    data = datasets.load_csv(path)
    assert data.X.shape == (80, 3) and data.task == "binary"
    np.testing.assert_array_equal(data.X, X)
    np.testing.assert_array_equal(data.y, np.where(pos, 1.0, -1.0))
    assert data.meta["header"] is False and "same kind" in data.meta["header_rule"]


@pytest.mark.parametrize("first", ["1,2,3,4", "0,1,2,3"])
def test_numbered_header_row_is_a_header(tmp_path, xy, first):
    X, pos = xy
    path = tmp_path / "num.csv"
    path.write_text(first + "\n" + "\n".join(_rows(X, pos.astype(int))))
    data = datasets.load_csv(path)
    assert data.X.shape == (80, 3) and data.task == "binary"
    assert data.meta["header"] is True and "numbers the columns" in data.meta["header_rule"]
    assert data.feature_names == first.split(",")[:3]
    # told otherwise, the row is data (and the task follows it: 0/1/4 → 3 values)
    forced = datasets.load_csv(path, header=False)
    assert forced.X.shape == (81, 3) and forced.meta["header_rule"] == "given: header=False"


def test_named_header_over_text_labels(tmp_path, xy):
    X, pos = xy
    path = tmp_path / "named.csv"
    path.write_text("a,b,c,label\n" + "\n".join(_rows(X, np.where(pos, "yes", "no"))))
    data = datasets.load_csv(path, target="label")
    assert data.X.shape == (80, 3) and data.meta["header"] is True
    assert data.meta["target_name"] == "label" and data.meta["target_column"] == 3


def test_a_row_of_small_integers_is_data(tmp_path):
    # whole numbers that do not number the columns, over numbers: data
    path = tmp_path / "ints.csv"
    path.write_text("3,1,2,0\n" + "\n".join(f"{i},{i + 1},{i * 2},{i % 2}" for i in range(20)))
    assert datasets.load_csv(path).X.shape == (21, 3)


def test_duplicate_target_name_is_refused_naming_both_positions(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("a,label,b,label\n1,2,3,0\n5,6,7,1\n8,9,1,0\n")
    with pytest.raises(ValueError, match=r"names 2 columns .*positions 1, 3"):
        datasets.load_csv(path, target="label")
    assert datasets.load_csv(path, target=3).meta["target_column"] == 3


# --------------------------------------------------------------------------- CSV encoding


def test_latin1_labels_are_refused_in_utf8_and_kept_apart_in_latin1(tmp_path):
    path = tmp_path / "lat.csv"
    path.write_bytes("a,b,label\n1,2,café\n3,4,cafè\n5,6,cafe\n7,8,café\n"
                     .encode("latin-1"))
    with pytest.raises(ValueError, match=r"lat.csv: byte 17 \(0xe9\) is not valid utf-8.*"
                                         r"latin-1"):
        datasets.load_csv(path)
    data = datasets.load_csv(path, encoding="latin-1")
    assert data.task == "multiclass" and data.meta["classes"] == ["cafe", "cafè", "café"]


@pytest.mark.parametrize("encoding, bom, message", [
    ("utf-16", True, r"UTF-16 byte-order mark.*encoding='utf-16'"),
    ("utf-16-le", False, r"NUL characters.*utf-16-le"),
])
def test_utf16_read_as_utf8_gets_a_hint(tmp_path, encoding, bom, message):
    path = tmp_path / "u16.csv"
    path.write_bytes("1,2,0\n3,4,1\n5,6,0\n".encode(encoding))
    with pytest.raises(ValueError, match=message):
        datasets.load_csv(path)
    assert datasets.load_csv(path, encoding=encoding).X.shape == (3, 2)


def test_utf8_bom_and_unknown_encoding(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b,y\n1,2,0\n3,4,1\n")
    data = datasets.load_csv(path)
    assert data.feature_names == ["a", "b"]
    with pytest.raises(ValueError, match="encoding='klingon' is not a known"):
        datasets.load_csv(path, encoding="klingon")
    with pytest.raises(TypeError, match="encoding must be"):
        datasets.load_csv(path, encoding=8)


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_line_ends(tmp_path, xy, end):
    X, pos = xy
    path = tmp_path / "ends.csv"
    path.write_bytes(end.join(_rows(X, pos.astype(int))).encode())
    data = datasets.load_csv(path)
    np.testing.assert_array_equal(data.X, X)


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize("kwargs, message", [
    ({"header": "no"}, "header must be True, False or 'auto'"),
    ({"header": 1}, "header must be True, False or 'auto'"),
    ({"target": True}, "target must be a column index"),
    ({"target": 1.7}, "target must be a column index"),
    ({"task": 3}, "task must be"),
    ({"delimiter": ",,"}, "delimiter must be one character"),
])
def test_load_csv_refuses_loose_types(tmp_path, kwargs, message):
    path = tmp_path / "t.csv"
    path.write_text("1,2,0\n3,4,1\n")
    with pytest.raises(TypeError, match=message):
        datasets.load_csv(path, **kwargs)


def test_load_refuses_loose_return_X_y():
    for bad in ("no", 1, None):
        with pytest.raises(TypeError, match="return_X_y must be True or False"):
            datasets.load("heart", return_X_y=bad)
    X, y = datasets.load("heart", return_X_y=np.True_)
    assert X.shape == (270, 13)


def test_multiclass_text_labels_with_task_multiclass(tmp_path):
    path = tmp_path / "tri.csv"
    path.write_text("a,b,label\n" + "\n".join(f"{i},{i % 3},{['cat', 'dog', 'cow'][i % 3]}"
                                               for i in range(30)))
    auto = datasets.load_csv(path)
    given = datasets.load_csv(path, task="multiclass")
    assert auto.task == given.task == "multiclass"
    np.testing.assert_array_equal(auto.y, given.y)
    assert given.meta["classes"] == ["cat", "cow", "dog"]


# --------------------------------------------------------------------------- non-regular files


@pytest.mark.parametrize("reader", [datasets.load_csv, datasets.load_npz, datasets.load_npy,
                                    datasets.load_svmlight, datasets.open_chunked])
def test_fifo_and_devices_are_refused_before_opening(tmp_path, reader):
    suffix = {"load_csv": ".csv", "load_npz": ".npz", "load_npy": ".npy",
              "load_svmlight": ".svm", "open_chunked": ".npy"}[reader.__name__]
    fifo = tmp_path / f"fifo{suffix}"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a FIFO .*not a regular file"):
        reader(fifo)          # would block forever if it opened the FIFO
    zero = tmp_path / f"zero{suffix}"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="is a character device"):
        reader(zero)


# --------------------------------------------------------------------------- .npy


def test_npy_in_memory_equals_npz(tmp_path):
    data = datasets.load("breast_cancer")
    np.save(tmp_path / "bc.npy", np.column_stack([data.X, data.y]))
    np.savez(tmp_path / "bc.npz", X=data.X, y=data.y)
    a = datasets.load_npy(tmp_path / "bc.npy")
    b = datasets.load_file(tmp_path / "bc.npz")
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.task == b.task and a.meta["target_column"] == 9
    first = datasets.load_npy(tmp_path / "bc.npy", target=0)
    np.testing.assert_array_equal(first.X, np.column_stack([data.X, data.y])[:, 1:])


def test_npy_datetime_and_lying_header_are_named(tmp_path):
    np.save(tmp_path / "dt.npy", (np.datetime64("2020-01-01") + np.arange(10)).reshape(5, 2))
    for reader in (datasets.load_npy, datasets.open_chunked):
        with pytest.raises(ValueError, match=r"must hold numbers.*datetime64.*dates and times"):
            reader(tmp_path / "dt.npy")
    np.save(tmp_path / "lie.npy", np.random.default_rng(0).random((20, 3)))
    raw = (tmp_path / "lie.npy").read_bytes().replace(b"(20, 3)", b"(2000, 3)")
    (tmp_path / "lie.npy").write_bytes(raw)
    for reader in (datasets.load_npy, datasets.open_chunked):
        with pytest.raises(ValueError, match=r"declares shape \(2000, 3\).*truncated"):
            reader(tmp_path / "lie.npy")
    (tmp_path / "bad.npy").write_bytes(b"not numpy at all")
    with pytest.raises(ValueError, match="not a .npy array"):
        datasets.load_npy(tmp_path / "bad.npy")


def test_open_chunked_names_the_formats_it_reads(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("1,2\n3,4\n")
    with pytest.raises(ValueError, match="open_chunked reads .npy files and .zarr arrays, "
                                         "not .csv"):
        datasets.open_chunked(path)


def test_load_npy_is_bounded_by_the_memory_guard(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((1000, 4)))
    with kernelselect.config_context(max_bytes=10_000):
        with pytest.raises(ValueError, match="open_chunked"):
            datasets.load_npy(tmp_path / "a.npy")


# --------------------------------------------------------------------------- .npz


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_npz_never_decompresses_members_it_does_not_use(tmp_path):
    X = np.random.default_rng(0).random((30, 2))
    y = (X[:, 0] > 0.5).astype(float)
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("X.npy", _npy_bytes(X))
        zf.writestr("y.npy", _npy_bytes(y))
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f8", "fortran_order": False, "shape": (2**40,)})
        # declares 8 TiB but holds 1 MiB: nothing may try to read or allocate it
        zf.writestr("junk.npy", header.getvalue() + bytes(2**20))
    data = datasets.load_npz(path)
    np.testing.assert_array_equal(data.X, X)
    # the same member named as X is refused from its declared size, before reading
    with pytest.raises(ValueError, match=r"declares shape \(1099511627776,\).*truncated"):
        datasets.load_npz(path, X="junk")


def test_npz_member_bounded_by_the_memory_guard(tmp_path):
    path = tmp_path / "big.npz"
    np.savez_compressed(path, X=np.zeros((2000, 5), dtype=np.float32), y=np.arange(2000) % 2)
    with kernelselect.config_context(max_bytes=50_000):
        with pytest.raises(ValueError, match=r"big.npz, array 'X'.*needs about"):
            datasets.load_npz(path)
    assert datasets.load_npz(path).X.dtype == np.float64


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "must hold an object .* found list"),
    ('{"a": ' * 5000 + "1" + "}" * 5000, "nested too deeply|nests more than"),
    ('{"a": ' + "[" * 100 + "]" * 100 + "}", "nests more than 32 levels"),
    ('{"task": 5}', '"task": 5 is not one of'),
    ("{not json", "invalid JSON sidecar"),
])
def test_sidecar_of_the_wrong_shape_is_refused_naming_it(tmp_path, content, message):
    np.savez(tmp_path / "d.npz", X=np.eye(4), y=[0, 1, 0, 1])
    (tmp_path / "d.json").write_text(content)
    with pytest.raises(ValueError, match=f"d.json: .*{message}|d.json: {message}"):
        datasets.load_npz(tmp_path / "d.npz")


def test_sidecar_that_is_a_folder_is_refused(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.eye(4), y=[0, 1, 0, 1])
    (tmp_path / "d.json").mkdir()
    with pytest.raises(ValueError, match="d.json: the JSON sidecar of d.npz is a folder"):
        datasets.load_npz(tmp_path / "d.npz")
    (tmp_path / "d.json").rmdir()
    (tmp_path / "d.json").write_text(json.dumps({"task": "regression", "note": "ok"}))
    assert datasets.load_npz(tmp_path / "d.npz").task == "regression"


def test_load_file_target_applies_to_columns_only(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.eye(4), y=[0, 1, 0, 1])
    with pytest.raises(ValueError, match="target=0 applies to .csv/.tsv and .npy columns"):
        datasets.load_file(tmp_path / "d.npz", target=0)
    with pytest.raises(TypeError, match="target must be"):
        datasets.load_file(tmp_path / "d.npz", target=2.0)


def test_paths_read_names_the_sidecar(tmp_path):
    assert datasets._paths_read(tmp_path / "d.npz") == [tmp_path / "d.npz", tmp_path / "d.json"]
    assert datasets._paths_read(tmp_path / "d.csv") == [tmp_path / "d.csv"]

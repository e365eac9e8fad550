"""Shipped datasets and the svmlight / CSV / npz readers."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kernelselect import datasets


# ------------------------------------------------------------------ shipped sets


def test_list_datasets_matches_sidecars_and_arrays():
    infos = datasets.list_datasets()
    names = [i.name for i in infos]
    assert names == sorted(names)
    assert {"heart", "breast_cancer", "diabetes_reg", "mpg"} <= set(names)
    tasks = {i.task for i in infos}
    assert tasks == {"binary", "regression"}
    for info in infos:
        data = datasets.load(info.name)
        assert data.X.shape == (info.n, info.d)
        assert data.X.dtype == np.float64 and data.y.dtype == np.float64
        assert data.y.shape == (info.n,)
        assert np.all(np.isfinite(data.X)) and np.all(np.isfinite(data.y))
        assert data.task == info.task == data.meta["task"]
        assert data.name == info.name
        if info.task == "binary":
            assert set(np.unique(data.y)) == {-1.0, 1.0}
            assert int((data.y > 0).sum()) == data.meta["n_pos"]
        else:
            assert np.unique(data.y).size > 2


def test_shipped_data_is_small():
    root = datasets._data_dir()
    total = sum(len(p.read_bytes()) for p in root.iterdir() if p.name.endswith((".npz", ".json")))
    assert total < 2 * 1024**2


def test_load_official_split_and_return_X_y():
    data = datasets.load("ripley")
    assert data.X_train.shape == (250, 2) and data.X_test.shape == (1000, 2)
    np.testing.assert_array_equal(np.vstack([data.X_train, data.X_test]), data.X)
    np.testing.assert_array_equal(np.concatenate([data.y_train, data.y_test]), data.y)
    X, y = datasets.load("Heart", return_X_y=True)
    assert X.shape == (270, 13) and y.shape == (270,)
    assert "test_mask" in datasets.load("energy")
    assert "heart" in repr(datasets.load("heart"))


def test_load_unknown_name_lists_shipped_names():
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*breast_cancer.*heart"):
        datasets.load("nope")
    with pytest.raises(TypeError, match="name must be"):
        datasets.load(3)


def test_bunch_attribute_access():
    d = datasets.Dataset(X=np.zeros((2, 1)), y=np.ones(2), task="regression")
    assert d.task == "regression"
    d.extra = 5
    assert d["extra"] == 5
    with pytest.raises(AttributeError):
        d.missing


# ------------------------------------------------------------------ labels


@pytest.mark.parametrize(
    "raw, expected, positive",
    [
        ([0, 1, 1, 0], [-1, 1, 1, -1], 1),
        ([2, 1, 2], [1, -1, 1], 2),
        ([-1.0, 1.0], [-1, 1], 1.0),
        (["no", "yes", "yes"], [-1, 1, 1], "yes"),
    ],
)
def test_to_binary_labels(raw, expected, positive):
    labels, mapping = datasets.to_binary_labels(raw)
    np.testing.assert_array_equal(labels, np.asarray(expected, dtype=float))
    assert mapping[positive] == 1.0 and len(mapping) == 2
    flipped, mapping2 = datasets.to_binary_labels(raw, positive=[k for k in mapping if k != positive][0])
    np.testing.assert_array_equal(flipped, -labels)


@given(arrays(np.float64, st.integers(2, 40), elements=st.sampled_from([3.5, -7.0])))
@settings(max_examples=30, deadline=None)
def test_to_binary_labels_property(y):
    if np.unique(y).size != 2:
        with pytest.raises(ValueError, match="exactly two distinct"):
            datasets.to_binary_labels(y)
        return
    labels, mapping = datasets.to_binary_labels(y)
    np.testing.assert_array_equal(labels, np.where(y == 3.5, 1.0, -1.0))
    assert mapping == {-7.0: -1.0, 3.5: 1.0}


def test_to_binary_labels_errors():
    with pytest.raises(ValueError, match="exactly two distinct values, y has 3"):
        datasets.to_binary_labels([1, 2, 3])
    with pytest.raises(ValueError, match="exactly two distinct values, y has 1"):
        datasets.to_binary_labels([1, 1])
    with pytest.raises(ValueError, match="positive=5"):
        datasets.to_binary_labels([0, 1], positive=5)
    with pytest.raises(ValueError, match="NaN"):
        datasets.to_binary_labels([0.0, np.nan])


# ------------------------------------------------------------------ svmlight


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_svmlight_basic(tmp_path):
    path = _write(tmp_path, "a.svm", (
        "# a comment line\n"
        "+1 qid:3 1:0.5 3:-2  # trailing comment\n"
        "\n"
        "-1 2:1e-3\n"
        "1 1:1 2:2 3:3 4:4\n"
    ))
    data = datasets.load_svmlight(path)
    expected = np.array([[0.5, 0, -2, 0], [0, 1e-3, 0, 0], [1, 2, 3, 4]])
    np.testing.assert_array_equal(data.X, expected)
    np.testing.assert_array_equal(data.y, [1, -1, 1])
    assert data.task == "binary" and data.name == "a"
    assert data.meta["label_map"] == {"-1": -1, "1": 1}


def test_svmlight_zero_based_and_n_features(tmp_path):
    path = _write(tmp_path, "z.libsvm", "1.5 0:1 2:2\n2.5 1:3\n0.1 0:4\n")
    with pytest.raises(ValueError, match=r"z.libsvm:1: feature index 0 .*zero_based=True"):
        datasets.load_svmlight(path, zero_based=False)
    for zb in (True, "auto"):
        data = datasets.load_svmlight(path, zero_based=zb, n_features=5)
        np.testing.assert_array_equal(data.X, [[1, 0, 2, 0, 0], [0, 3, 0, 0, 0], [4, 0, 0, 0, 0]])
        assert data.task == "regression"
        np.testing.assert_array_equal(data.y, [1.5, 2.5, 0.1])
    with pytest.raises(ValueError, match="more than n_features=2"):
        datasets.load_svmlight(path, zero_based=True, n_features=2)


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 1:2\nabc 1:1\n", r":2: the target 'abc' is not a number"),
        ("1 1:2\n1 1:2 3\n", r":2: expected <index>:<value>, found '3'"),
        ("1 1:2\n\n1 x:2\n", r":3: cannot read 'x:2'"),
        ("1 -1:2\n", r":1: negative feature index"),
        ("# only a comment\n\n", r"no data lines"),
        ("1 1:nan\n-1 1:2\n", r"NaN or infinity"),
    ],
)
def test_svmlight_malformed(tmp_path, text, message):
    path = _write(tmp_path, "bad.svm", text)
    with pytest.raises(ValueError, match=message):
        datasets.load_svmlight(path)


def test_svmlight_bytes_outside_utf8_only_in_comments(tmp_path):
    ok = tmp_path / "latin1_comment.svm"
    ok.write_bytes(b"1 1:0.5 2:1 # caf\xe9\n-1 1:0.1 2:2\n")
    np.testing.assert_array_equal(datasets.load_svmlight(ok).X, [[0.5, 1.0], [0.1, 2.0]])
    bad = tmp_path / "latin1_value.svm"
    bad.write_bytes(b"1 1:0.5 2:1\n-1 1:0.1 2:\xe92\n")
    with pytest.raises(ValueError, match=":2: cannot read"):
        datasets.load_svmlight(bad)


def test_svmlight_size_guard(tmp_path):
    path = _write(tmp_path, "big.svm", "1 1:1 100000:1\n-1 5:1\n")
    with pytest.raises(ValueError, match="max_dense_bytes"):
        datasets.load_svmlight(path, max_dense_bytes=1000)
    assert datasets.load_svmlight(path).X.shape == (2, 100000)


def test_svmlight_round_trip_against_shipped(tmp_path):
    data = datasets.load("heart")
    lines = []
    for row, label in zip(data.X, data.y):
        fields = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{int(label):+d} {fields}")
    path = _write(tmp_path, "heart.txt", "\n".join(lines) + "\n")
    back = datasets.load_file(path, n_features=data.X.shape[1])
    np.testing.assert_array_equal(back.X, data.X)
    np.testing.assert_array_equal(back.y, data.y)


@given(
    arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 6)),
           elements=st.one_of(st.just(0.0), st.floats(-1e6, 1e6, allow_nan=False))),
    st.randoms(use_true_random=False),
)
@settings(max_examples=40, deadline=None)
def test_svmlight_property_round_trip(tmp_path_factory, X, rnd):
    y = np.arange(X.shape[0], dtype=float) * 0.5 + 10.0
    lines = []
    for row, label in zip(X, y):
        entries = [f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0]
        rnd.shuffle(entries)  # order within a line does not matter
        lines.append(" ".join([repr(float(label)), *entries]))
    path = tmp_path_factory.mktemp("svm") / "p.svm"
    path.write_text("\n".join(lines))
    data = datasets.load_svmlight(path, n_features=X.shape[1], task="regression")
    np.testing.assert_array_equal(data.X, X)
    np.testing.assert_array_equal(data.y, y)


# ------------------------------------------------------------------ CSV


def test_csv_header_target_by_name_and_index(tmp_path):
    path = _write(tmp_path, "t.csv", "a,b,label,c\n1,2,yes,3\n4,5,no,6\n7,8,yes,9\n")
    data = datasets.load_csv(path, target="label")
    np.testing.assert_array_equal(data.X, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    np.testing.assert_array_equal(data.y, [1, -1, 1])
    assert data.feature_names == ["a", "b", "c"]
    assert data.meta["label_map"] == {"no": -1, "yes": 1}
    same = datasets.load_csv(path, target=2)
    np.testing.assert_array_equal(same.X, data.X)


def test_csv_no_header_delimiters(tmp_path):
    for delim in (",", ";", "\t", " "):
        text = "\n".join(delim.join(map(str, r)) for r in [[1, 2, 0.5], [3, 4, 1.5], [5, 6, 2.5]])
        path = _write(tmp_path, "n.csv", "# comment\n" + text + "\n")
        data = datasets.load_csv(path)
        np.testing.assert_array_equal(data.X, [[1, 2], [3, 4], [5, 6]])
        np.testing.assert_array_equal(data.y, [0.5, 1.5, 2.5])
        assert data.task == "regression" and "feature_names" not in data
    data = datasets.load_csv(path, target=0, task="regression")
    np.testing.assert_array_equal(data.y, [1, 3, 5])


@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("a,b,y\n1,2,3\n4,,6\n", {}, r"t.csv:3: a missing value in b"),
        ("a,b,y\n1,2,3\n4,zz,6\n", {}, r"t.csv:3: 'zz' in b"),
        ("1,2,3\n4,5\n", {}, r"t.csv:2: expected 3 fields, found 2"),
        ("a,b,y\n1,2,3\n", {"target": "q"}, r"target='q' is not a column.*a, b, y"),
        ("1,2,3\n", {"target": "y"}, r"read without a header row"),
        ("1,2,3\n", {"target": 5}, r"target=5 is out of range"),
        ("1\n2\n", {}, r"one column per line"),
        ("a,b,y\n", {}, r"only a header"),
        ("a,b,t\n1,2,3\n3,4,y\n", {"task": "regression"}, r"t.csv:3: target 'y' is not a number"),
        ("1,2,3\n1,2,4\n", {"task": "cluster"}, r"task='cluster' is not known"),
    ],
)
def test_csv_errors(tmp_path, text, kwargs, message):
    path = _write(tmp_path, "t.csv", text)
    with pytest.raises(ValueError, match=message):
        datasets.load_csv(path, **kwargs)


# ------------------------------------------------------------------ npz and files


def test_npz_with_sidecar_and_split(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    y = np.array([0, 1] * 5)
    np.savez(tmp_path / "s.npz", X=X, y=y, X_train=X[:6], y_train=y[:6], X_test=X[6:], y_test=y[6:])
    data = datasets.load_npz(tmp_path / "s.npz")
    assert data.task == "binary"
    np.testing.assert_array_equal(data.y, 2.0 * y - 1)
    np.testing.assert_array_equal(data.y_test, 2.0 * y[6:] - 1)
    (tmp_path / "s.json").write_text(json.dumps({"task": "regression", "notes": "x"}))
    data = datasets.load_npz(tmp_path / "s.npz")
    assert data.task == "regression" and data.meta["notes"] == "x"
    np.testing.assert_array_equal(data.y, y)
    np.savez(tmp_path / "k.npz", features=X, target=y)
    with pytest.raises(ValueError, match=r"no array named 'X', 'y'.*features, target"):
        datasets.load_npz(tmp_path / "k.npz")
    data = datasets.load_npz(tmp_path / "k.npz", X="features", y="target", task="multiclass")
    assert data.task == "multiclass"
    np.savez(tmp_path / "m.npz", X=X, y=y[:4])
    with pytest.raises(ValueError, match="10 rows but y has 4"):
        datasets.load_npz(tmp_path / "m.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not an .npz archive"):
        datasets.load_npz(tmp_path / "junk.npz")


def test_npz_reads_shared_format_copy(tmp_path):
    data = datasets.load("mpg")
    np.savez(tmp_path / "mpg.npz", X=data.X, y=data.y)
    back = datasets.load_file(tmp_path / "mpg.npz")
    assert back.task == "regression"
    np.testing.assert_array_equal(back.X, data.X)


def test_missing_file_and_unknown_extension(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        datasets.load_file(tmp_path / "absent.csv")
    with pytest.raises(FileNotFoundError, match="no such file"):
        datasets.load_svmlight(tmp_path / "absent.svm")
    path = _write(tmp_path, "x.parquet", "")
    with pytest.raises(ValueError, match="cannot tell the format.*parquet"):
        datasets.load_file(path)
    with pytest.raises(IsADirectoryError):
        datasets.load_npz(tmp_path)


def test_svmlight_written_by_scikit_learn_loads_by_default(tmp_path):
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    rng = np.random.default_rng(0)
    X = np.round(rng.standard_normal((12, 4)), 3)
    y = np.where(X[:, 0] > 0, 1, -1)
    for zero_based in (True, False):
        path = tmp_path / f"z{int(zero_based)}.svm"
        sklearn_datasets.dump_svmlight_file(X, y, str(path), zero_based=zero_based)
        data = datasets.load_svmlight(path)
        np.testing.assert_allclose(data.X, X)
        np.testing.assert_array_equal(data.y, y)


def test_load_csv_feature_columns_and_drop(tmp_path):
    """features= keeps the listed columns (file order), drop= leaves some out; indices
    (negative too) and header names alike; the target is never a feature."""
    path = tmp_path / "t.csv"
    path.write_text("id,a,b,c,y\nr1,1,2,3,0.5\nr2,4,5,6,1.5\nr3,7,8,9,2.5\n")
    kept = datasets.load_csv(path, target="y", drop="id")
    np.testing.assert_array_equal(kept.X, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert kept.feature_names == ["a", "b", "c"] and kept.meta["feature_columns"] == [1, 2, 3]
    some = datasets.load_csv(path, target=-1, features=["c", 1])
    np.testing.assert_array_equal(some.X, [[1, 3], [4, 6], [7, 9]])
    assert some.feature_names == ["a", "c"] and some.meta["n_columns"] == 5
    dropped = datasets.load_csv(path, drop=[0, -2])
    np.testing.assert_array_equal(dropped.X, [[1, 2], [4, 5], [7, 8]])
    with pytest.raises(ValueError, match=r"column 0 'id' holds text \('r1'\).*drop=\['id'\]"):
        datasets.load_csv(path)
    with pytest.raises(ValueError, match="features: column 4 is the target"):
        datasets.load_csv(path, features=["a", "y"])
    with pytest.raises(TypeError, match="drop: a column is an index"):
        datasets.load_csv(path, drop=[1.5])

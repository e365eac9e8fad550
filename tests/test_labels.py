"""The label encoder against a plain reference, and every caller against the encoder."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelselect import datasets, di
from kernelselect.models._cv import machine_targets, make_folds
from kernelselect.utils._labels import (check_labels, codes_for, column_codes, decide, encode_as,
                                  encode_labels, one_vs_rest)
from kernelselect.utils._targets import prepare_targets
from kernelselect.criteria import encode_binary


def _reference(labels):
    """Sorted distinct labels, each sample's position among them, ±1 and one-vs-rest
    columns, written with Python lists only."""
    classes = sorted(set(labels))
    codes = [classes.index(v) for v in labels]
    signed = [1.0 if c == 1 else -1.0 for c in codes] if len(classes) == 2 else None
    ovr = [[1.0 if c == k else -1.0 for k in range(len(classes))] for c in codes]
    return classes, codes, signed, ovr


_pools = st.sampled_from([
    st.integers(-5, 5),
    st.text(alphabet="abcXYZ_ 0", min_size=0, max_size=3),
    st.booleans(),
    st.floats(-3.0, 3.0, allow_nan=False, width=32).map(float),
    st.sampled_from([-1.0, 1.0]),
])


@st.composite
def label_lists(draw, min_classes=2):
    pool = draw(_pools)
    values = draw(st.lists(pool, min_size=min_classes, max_size=6, unique=True))
    n = draw(st.integers(len(values), 30))
    picks = draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
    picks[:len(values)] = range(len(values))               # every value present
    order = draw(st.permutations(range(n)))
    return [values[picks[i]] for i in order]


@given(label_lists())
def test_encoder_matches_reference(labels):
    classes, codes, signed, ovr = _reference(labels)
    enc = encode_labels(labels)
    assert enc.classes.tolist() == classes
    np.testing.assert_array_equal(enc.classes, np.unique(np.asarray(labels)))
    assert enc.codes.dtype == np.intp and enc.codes.tolist() == codes
    assert enc.decode(enc.codes).tolist() == labels            # round trip
    assert enc.one_vs_rest().tolist() == ovr
    if signed is None:
        with pytest.raises(ValueError, match="two classes"):
            enc.signed()
        assert enc.columns().tolist() == ovr
    else:
        assert enc.signed().tolist() == signed
        assert enc.columns().tolist() == [[s] for s in signed]
    # decisions: the column of each sample's class wins / the sign picks classes[1]
    F = np.asarray(ovr) if signed is None else np.asarray(signed)[:, None]
    assert decide(F, enc.classes).tolist() == labels
    assert column_codes(enc.columns()).tolist() == codes      # columns → codes


@given(label_lists())
def test_callers_agree_with_encoder(labels):
    enc = encode_labels(labels)
    arr = np.asarray(labels)
    Y, classes = machine_targets(arr, classification=True)
    np.testing.assert_array_equal(classes, enc.classes)
    np.testing.assert_array_equal(Y, enc.columns())
    np.testing.assert_array_equal(one_vs_rest(arr), enc.one_vs_rest())
    task = "binary" if enc.n_classes == 2 else "multiclass"
    t = prepare_targets(arr, task)
    np.testing.assert_array_equal(t.classes, enc.classes)
    if task == "binary":
        np.testing.assert_array_equal(t.y, enc.signed())
        signed, mapping = datasets.to_binary_labels(arr)
        np.testing.assert_array_equal(signed, enc.signed())
        assert list(mapping.values()) == [-1.0, 1.0]
        if arr.dtype.kind in "iufb":
            np.testing.assert_array_equal(encode_binary(arr)[0], enc.signed())
    else:
        np.testing.assert_array_equal(t.y, enc.codes)
        np.testing.assert_array_equal(t.Y, enc.one_vs_rest())
    counts = np.bincount(enc.codes)
    np.testing.assert_allclose((di.encode_targets(arr) ** 2).sum(axis=0), counts / counts)


def test_object_labels_read_as_numbers_or_strings():
    assert check_labels(np.array([1, 2.5, 1], dtype=object)).dtype == np.float64
    assert check_labels(np.array([1, "a"], dtype=object)).tolist() == ["1", "a"]
    assert check_labels([[1], [2]]).tolist() == [1, 2]
    assert check_labels([[1, 2]], squeeze="any").tolist() == [1, 2]


@pytest.mark.parametrize("bad, kind, message", [
    ([[1, 2], [3, 4]], ValueError, r"y must be 1-D of shape \(n,\)"),
    ([], ValueError, "y is empty"),
    ([1.0, np.nan], ValueError, "NaN or infinity"),
    (np.array([1, None], dtype=object), ValueError, "missing labels"),
    ([1 + 1j, 2], TypeError, "complex"),
    ([3, 3, 3], ValueError, "one class only"),
])
def test_bad_labels_are_named(bad, kind, message):
    with pytest.raises(kind, match=message):
        encode_labels(bad)


def test_class_count_messages():
    with pytest.raises(ValueError, match="exactly two distinct values, y has 3 distinct"):
        encode_labels([0, 1, 2], exactly=2)
    with pytest.raises(ValueError, match="labels has 2 entries but X has 3 rows"):
        encode_labels([0, 1], "labels", n=3)
    assert encode_labels([4, 4], min_classes=1).n_classes == 1
    # strata of one class are allowed; the folds cover every sample once
    folds = make_folds(np.zeros(8), 2, stratify=True, random_state=0)
    assert sorted(np.concatenate([b for _, b in folds]).tolist()) == list(range(8))


@given(label_lists(), st.integers(1, 7))
def test_chunks_encoded_with_the_whole_targets_classes(labels, chunk):
    """encode_as on pieces (Dask chunks) gives the encoding of the whole array."""
    arr = np.asarray(labels)
    enc = encode_labels(arr)
    pieces = [arr[i:i + chunk] for i in range(0, arr.size, chunk)]
    np.testing.assert_array_equal(np.concatenate([codes_for(p, enc.classes) for p in pieces]),
                                  enc.codes)
    task = "binary" if enc.n_classes == 2 else "multiclass"
    got = np.concatenate([encode_as(p, enc.classes, task) for p in pieces])
    want = enc.signed() if task == "binary" else enc.codes.astype(np.float64)
    np.testing.assert_array_equal(got, want)


def test_label_outside_the_classes_is_named():
    with pytest.raises(ValueError, match="'z', which is not one of its classes"):
        codes_for(np.array(["a", "z"]), np.array(["a", "b"]))

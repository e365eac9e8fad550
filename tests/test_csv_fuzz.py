"""Fuzzing the CSV reader over dialects and encodings: delimiters, quoting, header or
none (named or numbered), line ends \\n, \\r\\n and \\r, byte-order marks, UTF-8,
Latin-1 and UTF-16, text and numeric labels. Every row must come back with its
values and the task must be the one the labels mean, or the reader must refuse with
a ValueError naming the file (and, for encodings, the byte and the encoding to pass).
The command line is run on the same files and must read the same rows."""

import csv
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import cli, datasets

LABELS = {
    "binary_text": (["cafè", "café"], "binary"),
    "binary_number": (["0", "1"], "binary"),
    "multiclass_text": (["cafe", "cafè", "café"], "multiclass"),
    "multiclass_ascii": (["cow", "dog", "cat"], "multiclass"),
}
ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "utf-16"]


@st.composite
def csv_files(draw):
    n = draw(st.integers(4, 25))
    d = draw(st.integers(1, 4))
    values = draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
                           min_size=n * d, max_size=n * d))
    X = np.asarray(values, dtype=float).reshape(n, d)
    kind = draw(st.sampled_from(list(LABELS) + ["regression"]))
    if kind == "regression":
        y_text = [repr(v + 0.25) for v in draw(st.lists(st.integers(-50, 50), min_size=n,
                                                        max_size=n, unique=True))]
        task = "regression"
    else:
        classes, task = LABELS[kind]
        y_text = [classes[i % len(classes)] for i in range(n)]
    header = draw(st.sampled_from(["none", "named"] + (["numbered0", "numbered1"]
                                                       if d + 1 >= 3 else [])))
    delimiter = draw(st.sampled_from([",", "\t", ";", "|", "whitespace"]))
    quoting = (csv.QUOTE_NONE if delimiter == "whitespace" else
               draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC])))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    target_first = draw(st.booleans())
    rows = [[repr(float(v)) for v in r] for r in X]
    rows = [([t] + r if target_first else r + [t]) for r, t in zip(rows, y_text)]
    if header == "named":
        names = [f"f{j}" for j in range(d)]
        names = ["label"] + names if target_first else names + ["label"]
        rows = [names] + rows
    elif header.startswith("numbered"):
        start = int(header[-1])
        rows = [[str(start + j) for j in range(d + 1)]] + rows
    if delimiter == "whitespace":
        text = end.join(" ".join(r) for r in rows)
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter=delimiter, quoting=quoting, lineterminator=end)
        writer.writerows(rows)
        text = buffer.getvalue()
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    encoding = draw(st.sampled_from(ENCODINGS))
    return dict(X=X, y_text=y_text, task=task, header=header != "none",
                target=0 if target_first else -1, raw=text.encode(encoding),
                encoding=encoding, ascii=text.isascii())


FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


def _check(data, case):
    assert data.X.shape == case["X"].shape
    np.testing.assert_array_equal(data.X, case["X"])
    assert data.task == case["task"]
    assert data.meta["header"] is case["header"]
    if case["task"] == "regression":
        np.testing.assert_array_equal(data.y, [float(v) for v in case["y_text"]])
    else:          # the labels keep their identity: equal labels ↔ equal codes
        codes = np.asarray(data.y)
        same = np.equal.outer(case["y_text"], case["y_text"])
        np.testing.assert_array_equal(np.equal.outer(codes, codes), same)


@FUZZ
@given(case=csv_files())
def test_every_row_survives_every_dialect(tmp_path_factory, case):
    path = tmp_path_factory.mktemp("csv") / "data.csv"
    path.write_bytes(case["raw"])
    read_as = {"utf-8-sig": "utf-8"}.get(case["encoding"], case["encoding"])
    _check(datasets.load_csv(path, target=case["target"], encoding=read_as), case)
    # read with the default (UTF-8): right, or refused naming the byte and the fix
    if case["encoding"] in ("utf-8", "utf-8-sig") or (case["encoding"] == "latin-1"
                                                      and case["ascii"]):
        _check(datasets.load_csv(path, target=case["target"]), case)
    else:
        with pytest.raises(ValueError, match=r"data.csv: .*(byte \d+|byte-order mark).*"
                                             r"encoding="):
            datasets.load_csv(path, target=case["target"])
    # the command line reads the same rows
    seen = []

    def record(X, y, **kwargs):
        seen.append((X, kwargs["task"]))
        raise ValueError("recorded")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernelselect, "select_kernel", record, raising=False)
        code = cli.main(["select", str(path), "--target", str(case["target"]),
                         "--encoding", read_as, "--quiet", "--no-progress"])
    assert code == 2 and len(seen) == 1
    np.testing.assert_array_equal(seen[0][0], case["X"])
    assert seen[0][1] == case["task"]

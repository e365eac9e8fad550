"""``kernelselect predict --proba / --interval``."""

import numpy as np
import pytest

from kernelselect.cli import main


def test_predict_proba_prints_probabilities_that_sum_to_one(capsys):
    assert main(["predict", "--dataset", "heart", "--proba", "--rows", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[-2:] == ["p(-1.0)", "p(1.0)"]
    rows = np.array([[float(v) for v in line.split()[-2:]] for line in lines[3:8]])
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-5)
    assert "log-loss" in lines[-1]


def test_predict_interval_writes_every_held_out_row(tmp_path, capsys):
    out = tmp_path / "pred.csv"
    assert main(["predict", "--dataset", "servo", "--interval", "0.8", "--rows", "0",
                 "--output", str(out)]) == 0
    table = np.genfromtxt(out, delimiter=",", names=True)
    assert table.size == 42                                 # 25 % of 167 rows
    assert np.all(table["lower"] <= table["prediction"])
    assert np.all(table["prediction"] <= table["upper"])
    assert "0.8 intervals: coverage" in capsys.readouterr().out
    assert main(["predict", "--dataset", "servo", "--interval", "0.8", "--output",
                 str(out)]) == 2                            # exists, no --force


@pytest.mark.parametrize("argv, words", [
    (["--dataset", "servo", "--proba"], "--proba needs class labels"),
    (["--dataset", "heart", "--interval", "0.9"], "--interval needs a real target"),
    (["--dataset", "servo", "--interval", "1.5"], "strictly between 0 and 1"),
    (["--dataset", "servo", "--test-fraction", "0"], "--test-fraction"),
])
def test_predict_refuses_bad_options(argv, words, capsys):
    assert main(["predict", *argv]) == 2
    assert words in capsys.readouterr().err


def test_predict_takes_the_column_options_of_select(tmp_path, capsys):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=60)
    lines = ["id,a,b,y"] + [f"r{i},{a:.6f},{b:.6f},{t:.6f}"
                            for i, ((a, b), t) in enumerate(zip(X, y))]
    path = tmp_path / "rows.csv"
    path.write_text("\n".join(lines) + "\n")
    assert main(["predict", str(path), "--target", "y", "--interval", "0.9"]) == 2
    assert "--drop" in capsys.readouterr().err              # the text column is named
    for option in (["--drop", "id"], ["--feature-columns", "a,b"]):
        assert main(["predict", str(path), "--target", "y", "--interval", "0.9",
                     *option]) == 0
        assert "0.9 intervals: coverage" in capsys.readouterr().out

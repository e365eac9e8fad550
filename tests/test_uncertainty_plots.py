"""The reliability diagram and the interval plot."""

import numpy as np
import pytest

from kernelselect.models import plot_calibration, plot_intervals, reliability


def test_reliability_bins_by_hand():
    P = np.array([[0.95, 0.05], [0.9, 0.1], [0.35, 0.65], [0.3, 0.7]])
    y = np.array(["a", "b", "b", "a"])
    r = reliability(P, y, classes=["a", "b"], n_bins=5)
    # confidences 0.95, 0.9 → bin 4 (one hit of two); 0.65, 0.7 → bin 3 (one hit of two)
    np.testing.assert_array_equal(r["count"], [0, 0, 0, 2, 2])
    np.testing.assert_allclose(r["confidence"][3:], [0.675, 0.925])
    np.testing.assert_allclose(r["accuracy"][3:], [0.5, 0.5])
    np.testing.assert_allclose(r["ece"], 0.5 * 0.175 + 0.5 * 0.425)


def test_perfectly_calibrated_probabilities_have_small_ece():
    rng = np.random.default_rng(0)
    p = rng.random(50000)
    y = (rng.random(50000) < p).astype(int)
    assert float(reliability(np.column_stack([1 - p, p]), y)["ece"]) < 0.01


def test_plots_draw_and_return_their_axes():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1)
    p = rng.random(200)
    ax = plot_calibration(np.column_stack([1 - p, p]), (p > 0.5).astype(int), label="m")
    assert "ECE" in ax.get_legend().get_texts()[0].get_text()
    x = rng.standard_normal(50)
    band = np.column_stack([x - 1, x + 1])
    ax = plot_intervals(x, band, y_true=x + 0.5 * rng.standard_normal(50), prediction=x)
    assert any("inside" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close("all")


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="proba"):
        reliability(np.ones((3, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="classes"):
        reliability(np.full((2, 3), 1 / 3), np.array([0, 1]))
    with pytest.raises(ValueError, match="n_bins"):
        reliability(np.full((2, 2), 0.5), np.array([0, 1]), n_bins=0)
    with pytest.raises(ValueError, match="intervals"):
        plot_intervals(np.zeros(3), np.zeros((4, 2)))

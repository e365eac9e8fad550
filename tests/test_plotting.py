"""SelectionResult.plot: the figure carries the labels, markers and title a reader needs."""

import numpy as np
import pytest

import kernelselect
from kernelselect.selection import _plotting

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import QuadMesh  # noqa: E402


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 3))
    y = np.sign(X[:, 0] + 0.3 * rng.standard_normal(80))
    return kernelselect.select_kernel(X, y, criterion=["ree", "kta", "eloo"],
                                      approximation="exact", alphas=[0.01, 0.1, 1.0],
                                      random_state=0)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _marker_lines(ax, marker):
    return [line for line in ax.get_lines() if line.get_marker() == marker
            and line.get_linestyle() == "None"]


def test_curves_axes_labels_and_markers(result):
    fig = result.plot(data_name="toy")
    axes = fig.axes
    assert len(axes) == 4                      # three panels and the α colour bar
    panels = [ax for ax in axes if ax.get_xlabel() == "log₂ γ"]
    assert len(panels) == 3
    for ax, name in zip(panels, result.criteria):
        better = "lower" if result.directions[name] == "min" else "higher"
        label = "eloo, squared loss" if name == "eloo" else name
        assert ax.get_ylabel() == f"{label} ({better} is better)"
        assert ax.get_title() == label
        # one line per α in the colour of its log10 α (one black line for a criterion
        # that does not depend on α), then the selected point and the panel's own best
        lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
        colours = {matplotlib.colors.to_hex(ln.get_color()) for ln in lines}
        assert len(lines) == (1 if name == "kta" else 3)
        if name != "kta":
            cmap = matplotlib.colormaps[_plotting.ALPHA_CMAP]
            assert colours == {matplotlib.colors.to_hex(cmap(v)) for v in (0.0, 0.5, 1.0)}
        (selected,) = _marker_lines(ax, "D")
        (own,) = _marker_lines(ax, "o")
        gi, ai = result.best["ree"]["index"]
        assert selected.get_xdata()[0] == pytest.approx(np.log2(result.gammas[gi]))
        assert selected.get_ydata()[0] == pytest.approx(result.curves[name][gi, ai])
        oi, oj = result.best[name]["index"]
        assert own.get_xdata()[0] == pytest.approx(np.log2(result.gammas[oi]))
        assert own.get_ydata()[0] == pytest.approx(result.curves[name][oi, oj])
        assert own.get_markerfacecolor() == "none"      # drawn differently from the choice
        assert selected.get_markerfacecolor() != "none"
    (bar,) = [ax for ax in axes if ax not in panels]
    assert bar.get_ylabel() == "log₁₀ α (one line per α)"
    assert all(ax.get_legend() is None for ax in panels)        # the legend is off the data
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    b = result.best["ree"]
    assert labels == [f"selected by ree: γ = {b['gamma']:.4g}, α = {b['alpha']:.4g}",
                      "best of the panel's criterion"]
    title = fig.get_suptitle()
    assert title.startswith("toy: ") and "exact approximation" in title and "n = 80" in title


def test_heatmap_has_a_mesh_a_labelled_colorbar_and_markers(result):
    fig = result.plot(kind="heatmap", title="my title")
    assert fig.get_suptitle() == "my title"
    panels = [ax for ax in fig.axes if ax.get_xlabel() == "log₂ γ"]
    assert len(panels) == 3
    for ax, name in zip(panels, result.criteria):
        meshes = [c for c in ax.collections if isinstance(c, QuadMesh)]
        assert len(meshes) == 1
        values = meshes[0].get_array()
        assert values.size == result.gammas.size * result.alphas.size
        assert ax.get_ylabel() == "log₁₀ α"
        label = "eloo, squared loss" if name == "eloo" else name
        assert ax.get_title() == f"{label} over (γ, α)"
        (own,) = _marker_lines(ax, "o")
        oi, oj = result.best[name]["index"]
        assert own.get_xdata()[0] == pytest.approx(np.log2(result.gammas[oi]))
        assert own.get_ydata()[0] == pytest.approx(np.log10(result.alphas[oj]))
        assert len(_marker_lines(ax, "D")) == 1
    bar_labels = {ax.get_ylabel() for ax in fig.axes if ax not in panels}
    assert bar_labels == {"ree (lower is better)", "kta (higher is better)",
                          "eloo, squared loss (lower is better)"}


def test_both_kinds_and_given_axes(result):
    fig = result.plot(kind="both", title="")
    assert fig.get_suptitle() == ""
    assert sum(ax.get_ylabel() == "log₁₀ α" for ax in fig.axes) == 3
    fig2, axes = plt.subplots(1, 3)
    assert result.plot(axes) is fig2
    assert all(ax.get_legend() is not None for ax in axes)   # own legends on given axes
    with pytest.raises(ValueError, match="axes must hold 3 axes"):
        result.plot(axes[:2])


def test_bad_kinds_are_refused(result):
    with pytest.raises(ValueError, match="kind='surface' is not a plot kind"):
        result.plot(kind="surface")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    one_alpha = kernelselect.select_kernel(X, X[:, 0], criterion="ree", approximation="exact")
    with pytest.raises(ValueError, match="needs an α path"):
        one_alpha.plot(kind="heatmap")


@pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")
def test_a_search_in_levels_is_drawn_whole():
    """The coarse grid dashed under the last level's curves; in the heat map the coarse
    grid with each later window drawn over it and outlined."""
    from matplotlib.patches import Rectangle

    rng = np.random.default_rng(5)
    X = rng.standard_normal((900, 3))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(900)
    res = kernelselect.select_kernel(X, y, random_state=3, kernel="gaussian")
    assert len(res.levels) >= 2
    coarse, last = res.levels[0], res.levels[-1]
    fig = res.plot(kind="both")
    curves, heat = fig.axes[0], [ax for ax in fig.axes if ax.get_ylabel() == "log₁₀ α"][0]
    dashed = [ln for ln in curves.get_lines() if ln.get_linestyle() == "--"]
    solid = [ln for ln in curves.get_lines() if ln.get_linestyle() == "-"]
    assert len(dashed) == coarse.alphas.size and len(solid) == last.alphas.size
    np.testing.assert_allclose(np.sort(dashed[0].get_xdata()), np.sort(np.log2(coarse.gammas)))
    np.testing.assert_allclose(np.sort(solid[0].get_xdata()), np.sort(np.log2(last.gammas)))
    (mesh,) = [c for c in heat.collections if isinstance(c, QuadMesh)]
    shown = np.ma.filled(mesh.get_array(), np.nan).reshape(coarse.alphas.size,
                                                           coarse.gammas.size).T
    gi = [int(np.flatnonzero(np.isclose(coarse.gammas, g))[0]) for g in last.gammas]
    np.testing.assert_allclose(shown[gi], last.curves["eloo"], equal_nan=True)
    outside = np.setdiff1d(np.arange(coarse.gammas.size),
                           [int(np.flatnonzero(np.isclose(coarse.gammas, g))[0])
                            for lv in res.levels[1:] for g in lv.gammas])
    np.testing.assert_allclose(shown[outside], coarse.curves["eloo"][outside], equal_nan=True)
    boxes = [p for p in heat.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(boxes) == len(res.levels) - 1
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert f"{coarse.approximation}: the coarse grid" in labels



# ------------------------------------------------------------ the value axis, windows, grey


def _exploded(result, name, factor):
    """A copy of ``result`` whose smallest-α curve of ``name`` is ``factor`` times higher
    away from the best γ (the small-α curves that explode under interpolation)."""
    import copy

    res = copy.deepcopy(result)
    gi, _ = res.best[name]["index"]
    far = np.arange(res.gammas.size) != gi
    res.curves[name][far, 0] *= factor
    return res


def _gap(result, name):
    """The height, in axis fractions, between the best value of ``name`` and the
    median of its curves in the curves panel."""
    fig = result.plot(kind="curves")
    ax = [a for a in fig.axes if a.get_title().startswith(name)][0]
    values = np.asarray(result.curves[name], dtype=float)
    gi, ai = result.best[name]["index"]
    scale = np.log10 if ax.get_yscale() == "log" else (lambda v: v)
    low, high = (scale(v) for v in ax.get_ylim())

    def height(v):
        return (scale(v) - low) / (high - low)

    best, middle = height(values[gi, ai]), height(np.median(values))
    cut = ax.get_ylim()[1] < np.nanmax(values)
    return middle - best, best, cut, ax


@pytest.mark.parametrize("factor", [1e3, 1e6])
def test_exploding_curves_leave_the_minimum_visible(result, factor):
    """The best value stays apart from the bulk of the curves when the small-α curve
    explodes: at least half the gap of the unexploded curves (on a linear axis, at
    10³ times, both sat on the bottom); a cut axis says so."""
    plain, _, _, _ = _gap(result, "eloo")
    gap, best, cut, ax = _gap(_exploded(result, "eloo", factor), "eloo")
    assert plain > 0.1
    assert 0 <= best and gap >= 0.5 * plain
    if cut:
        assert any("off the axis" in t.get_text() for t in ax.texts)


def test_a_criterion_to_maximise_keeps_a_linear_axis(result):
    fig = result.plot(kind="curves")
    ax = [a for a in fig.axes if a.get_title() == "kta"][0]
    assert ax.get_yscale() == "linear" and not ax.texts


def test_grey_cells_are_explained_only_when_there_are_some(result):
    fig = result.plot(kind="heatmap")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not any(label.startswith("grey:") for label in labels)     # every cell evaluated
    import copy

    holes = copy.deepcopy(result)
    holes.curves["ree"][0, 0] = np.nan
    fig = holes.plot(kind="heatmap")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sum(label.startswith("grey: not evaluated") for label in labels) == 1
    fig, axes = plt.subplots(1, 3)
    holes.plot(axes, kind="heatmap")                 # given axes: in that panel's legend
    texts = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in axes]
    assert any(t.startswith("grey:") for t in texts[0])
    assert not any(t.startswith("grey:") for t in texts[1])


@pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")
@pytest.mark.parametrize("seed", [5, 11])
def test_window_names_do_not_overlap(seed):
    """Each window of a search in levels is named once, in the legend with its own line
    style, not in text drawn over the map (where nested windows' names overlapped)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((900, 3))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(900)
    res = kernelselect.select_kernel(X, y, random_state=3, kernel="gaussian")
    assert len(res.levels) >= 3
    fig = res.plot(kind="both")
    fig.canvas.draw()
    heat = [ax for ax in fig.axes if ax.get_ylabel() == "log₁₀ α"][0]
    boxes = [t.get_window_extent() for t in heat.texts]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j])
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    for level in res.levels[1:]:
        assert labels.count(f"outline: the window of {level.approximation}") == 1
    outlines = [p for p in heat.patches if not p.get_fill()]
    assert len({str(p.get_linestyle()) for p in outlines}) == len(outlines)
    (mesh,) = [c for c in heat.collections if isinstance(c, QuadMesh)]
    holes = bool(np.ma.getmaskarray(mesh.get_array()).any())
    assert any(label.startswith("grey: not evaluated") for label in labels) == holes


# ------------------------------------------------------------ the per-feature kernel


@pytest.fixture(scope="module")
def ard_result():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 3))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(120)
    return kernelselect.select_kernel(X, y, kernel="ard", random_state=0)


def test_a_per_feature_choice_is_not_marked_on_the_isotropic_grid(ard_result):
    res = ard_result
    assert res.details["ard"]["kept"]
    fig = res.plot(kind="both")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not any(label.startswith("selected by") for label in labels)
    start = res.best[res.criteria[0]]
    assert f"isotropic start (by {res.criteria[0]}): γ = {start['gamma']:.4g}, " \
           f"α = {start['alpha']:.4g}" in labels
    (chosen,) = [label for label in labels if label.startswith("selected: one γ per feature")]
    assert f"α = {res.best_alpha:.4g}" in chosen
    heat = [ax for ax in fig.axes if ax.get_ylabel() == "log₁₀ α"][0]
    (diamond,) = _marker_lines(heat, "D")
    assert matplotlib.colors.to_hex(diamond.get_markerfacecolor()) != \
        matplotlib.colors.to_hex("tab:red")
    lines = [ln for ln in heat.get_lines() if ln.get_linestyle() == "--"]
    assert len(lines) == 1
    np.testing.assert_allclose(lines[0].get_ydata(), np.log10(res.best_alpha))


def test_an_isotropic_kernel_kept_by_the_guard_is_marked_selected(ard_result):
    import copy

    res = copy.deepcopy(ard_result)
    res.details["ard"]["kept"] = False
    fig = res.plot(kind="curves")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(label.startswith("selected (the guard kept the isotropic kernel")
               for label in labels)
    assert not any("one γ per feature" in label for label in labels)
    ax = fig.axes[0]
    (diamond,) = _marker_lines(ax, "D")
    assert matplotlib.colors.to_hex(diamond.get_markerfacecolor()) == \
        matplotlib.colors.to_hex("tab:red")

"""The machines and the selection estimators on row-chunked Dask arrays: the Nyström
machine by conjugate gradients, one task per chunk per pass, the in-memory fit's bits."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

from kernelselect import (KernelRidgeRegressor, KernelSelectionCV, LSSVMClassifier,  # noqa: E402
                          NystroemPCG, fit_krr)
from kernelselect.models import _fit_policy  # noqa: E402
from kernelselect import _policy as _rules  # noqa: E402


@pytest.fixture(autouse=True)
def threads_scheduler():
    with dask.config.set(scheduler="threads"):
        yield


def data(seed=0, n=700, d=3, t=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sin(X @ rng.standard_normal((d, t))) + 0.1 * rng.standard_normal((n, t))
    return X, Y


def chunked(A, rows=250):
    return da.from_array(A, chunks=(rows,) + A.shape[1:])


@pytest.mark.parametrize("intercept", [False, True, "mean"])
def test_regressor_on_dask_has_the_in_memory_bits(intercept):
    X, Y = data()
    recipe = NystroemPCG(n_centres=60)
    lazy = KernelRidgeRegressor(gamma=0.4, alpha=0.5, approximation=recipe, random_state=1,
                                fit_intercept=intercept).fit(chunked(X), chunked(Y[:, 0]))
    eager = KernelRidgeRegressor(gamma=0.4, alpha=0.5, approximation=recipe, random_state=1,
                                 fit_intercept=intercept).fit(X, Y[:, 0])
    assert lazy.n_features_in_ == 3 and lazy.n_iter_ == eager.n_iter_
    np.testing.assert_array_equal(lazy.model_.coef, eager.model_.coef)      # the same fit
    np.testing.assert_array_equal(lazy.intercept_, eager.intercept_)
    pred = lazy.predict(chunked(X))
    # X's chunks of 250 rows end inside the passes' 64-row blocks: the predictions' chunks
    # are moved to the blocks' boundaries, so each row is computed in its in-memory block
    assert isinstance(pred, da.Array) and pred.chunks[0] == (256, 256, 188)
    np.testing.assert_array_equal(pred.compute(), eager.predict(X))
    np.testing.assert_array_equal(lazy.predict(X), eager.predict(X))


def test_default_on_dask_is_the_nystrom_machine_at_any_n():
    X, Y = data(1, n=300)
    reg = KernelRidgeRegressor(gamma=0.4, alpha=0.5, random_state=0).fit(chunked(X), Y[:, 0])
    assert reg.approximation_ == "nystrom-pcg"
    assert reg.n_centres_ == min(300, _fit_policy.MIN_CENTRES)


def test_multi_target_function_on_dask():
    X, Y = data(2, t=3)
    recipe = NystroemPCG(n_centres=50)
    lazy = fit_krr(chunked(X), chunked(Y), 0.4, [0.1, 1.0], approximation=recipe,
                   random_state=0)
    eager = fit_krr(X, Y, 0.4, [0.1, 1.0], approximation=recipe, random_state=0)
    np.testing.assert_array_equal(lazy.coef, eager.coef)
    F = lazy.decision_function(chunked(X, 256))
    assert isinstance(F, da.Array) and F.shape == (700, 3, 2)
    np.testing.assert_array_equal(F.compute(), eager.decision_function(X))


def test_classifier_on_dask_labels():
    X, _ = data(3)
    y = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.5, 0.5])]
    recipe = NystroemPCG(n_centres=60)
    lazy = LSSVMClassifier(gamma=0.5, alpha=0.1, approximation=recipe,
                           random_state=0).fit(chunked(X), chunked(y))
    eager = LSSVMClassifier(gamma=0.5, alpha=0.1, approximation=recipe,
                            random_state=0).fit(X, y)
    assert lazy.classes_.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(lazy.dual_coef_, eager.dual_coef_)
    labels = lazy.predict(chunked(X))
    assert isinstance(labels, da.Array)
    np.testing.assert_array_equal(labels.compute(), eager.predict(X))
    np.testing.assert_array_equal(lazy.decision_function(X), eager.decision_function(X))


def test_dask_refusals():
    X, Y = data(4, n=300)
    with pytest.raises(ValueError, match="needs X in memory.*NystroemPCG"):
        KernelRidgeRegressor(approximation="exact").fit(chunked(X), Y[:, 0])
    exact = KernelRidgeRegressor(approximation="exact").fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="predicts on X in memory"):
        exact.predict(chunked(X))
    with pytest.raises(ValueError, match="criterion='cv'"):
        KernelSelectionCV(criterion="cv").fit(chunked(X), Y[:, 0])
    with pytest.raises(ValueError, match="selection was not started.*needs X in memory"):
        KernelSelectionCV(KernelRidgeRegressor(approximation="exact")).fit(chunked(X), Y[:, 0])
    reg = KernelRidgeRegressor(approximation=NystroemPCG(n_centres=20)).fit(chunked(X), Y[:, 0])
    with pytest.raises(ValueError, match="2 features.*expecting 3"):
        reg.predict(chunked(X[:, :2]))


@pytest.mark.parametrize("standardize", [False, True])
def test_selection_on_dask(monkeypatch, standardize):
    monkeypatch.setattr(_rules, "EXACT_FIT_MAX_N", 100)
    monkeypatch.setattr(_rules, "MIN_CENTRES", 40)
    X, Y = data(5, n=600)
    lazy = KernelSelectionCV(random_state=0, standardize=standardize).fit(chunked(X),
                                                                          chunked(Y[:, 0]))
    eager = KernelSelectionCV(random_state=0, standardize=standardize).fit(X, Y[:, 0])
    assert lazy.best_kernel_ == eager.best_kernel_
    assert lazy.best_params_.keys() == eager.best_params_.keys()
    for key, value in eager.best_params_.items():      # γ per feature under kernel="auto"
        np.testing.assert_allclose(lazy.best_params_[key], value, rtol=1e-12)
    refit = lazy.selection_.details["refit"]
    assert refit["approximation"] == "nystrom-pcg" and refit["n_centres"] >= 40
    pred = lazy.predict(chunked(X))
    assert isinstance(pred, da.Array)
    machine = (lambda sel: sel.best_estimator_[-1]) if standardize else (
        lambda sel: sel.best_estimator_)
    np.testing.assert_array_equal(machine(lazy).model_.coef, machine(eager).model_.coef)
    np.testing.assert_array_equal(machine(lazy).intercept_, machine(eager).intercept_)
    assert refit["intercept_form"] == machine(eager).intercept_form_
    assert refit["intercept_rule"] == "leave-one-out"
    np.testing.assert_allclose(pred.compute(), eager.predict(X), rtol=0, atol=1e-12)
    assert lazy.score(chunked(X), chunked(Y[:, 0])) == pytest.approx(
        eager.score(X, Y[:, 0]), abs=1e-12)


def test_standardizer_has_the_same_bits_on_dask():
    from kernelselect import Standardizer

    rng = np.random.default_rng(9)
    X = rng.standard_normal((70_000, 3)) * [1.0, 1e-170, 1e170] + [0.0, 0.0, 5e170]
    eager = Standardizer().fit(X)
    lazy = Standardizer().fit(da.from_array(X, chunks=(30_000, -1)))   # parts realigned
    for name in ("exponent_", "mean_", "scale_"):
        np.testing.assert_array_equal(getattr(lazy, name), getattr(eager, name))
    Z = lazy.transform(da.from_array(X, chunks=(30_000, -1)))
    assert isinstance(Z, da.Array)
    np.testing.assert_array_equal(Z.compute(), eager.transform(X))
    np.testing.assert_allclose(eager.transform(X).mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(eager.transform(X).std(axis=0), 1.0, rtol=1e-12)


def test_standardizer_on_dask_computes_no_vector_of_n(monkeypatch):
    """Its fit computes per-chunk column sums only: no placeholder target of n values is
    built on the client and sent through the scheduler."""
    from kernelselect import Standardizer
    from kernelselect.utils import _dask

    shapes = []
    real = _dask.compute

    def spy(*things):
        out = real(*things)
        shapes.extend(np.shape(a) for a in (out if len(things) > 1 else (out,))
                      if isinstance(a, np.ndarray))
        return out

    monkeypatch.setattr(_dask, "compute", spy)
    X, _ = data(n=900)
    Standardizer().fit(chunked(X, rows=300))
    assert not any(900 in shape for shape in shapes), shapes


def test_memory_limit_caps_the_centres_on_dask(monkeypatch):
    """On Dask the centres are capped by the client's part of the solve (the m × m
    factors) and each task's, through the memory guard's limit; a recipe asking for
    more is refused with the largest m that fits, and the selection's refit says when
    the cap, not the rule, set m."""
    import kernelselect
    from kernelselect.solvers import _nystroem_pcg as _nystrom_machine
    from kernelselect.models._fit_policy import auto_centres
    from kernelselect.solvers._pcg import (largest_dask_centres, nystrom_pcg_client_bytes,
                                           nystrom_pcg_task_bytes)

    X, Y = data(3, n=700)
    limit = nystrom_pcg_client_bytes(700, 300, 3, 1)
    assert nystrom_pcg_task_bytes(700, 300, 3, 1) < limit          # the client's part binds
    assert auto_centres(700, None, 3, 1, chunks=(250, 250, 200)) == 500   # the rule
    with kernelselect.config_context(max_bytes=limit):
        assert auto_centres(700, None, 3, 1, chunks=(250, 250, 200)) == 300
        with pytest.warns(kernelselect.ApproximationWarning, match="300 centres, fewer "
                          "than the 500.*Dask client"):
            reg = KernelRidgeRegressor(gamma=0.4, alpha=0.5, random_state=0).fit(
                chunked(X), Y[:, 0])
        assert reg.n_centres_ == 300
        with pytest.raises(ValueError, match="client's part.*Use at most 300 centres"):
            KernelRidgeRegressor(approximation=NystroemPCG(n_centres=400)).fit(chunked(X),
                                                                                Y[:, 0])
    # the selection itself needs more than this limit at n = 700: the refit's cap alone
    monkeypatch.setattr(_nystrom_machine, "largest_dask_centres",
                        lambda n, rows, d, t: largest_dask_centres(n, rows, d, t, limit))
    with pytest.warns(kernelselect.ApproximationWarning, match="fewer than the"):
        sel = KernelSelectionCV(random_state=0).fit(chunked(X), chunked(Y[:, 0]))
    refit = sel.selection_.details["refit"]
    assert refit["n_centres"] == 300 and refit["centres_rule"] == "memory cap"
    assert refit["approximation_gap"]["centres_rule"] == "memory cap"


def test_client_budget_caps_the_automatic_centres_on_dask(monkeypatch):
    """Without a limit set, the automatic m on Dask keeps the client's part within the
    client budget (512 MiB by default); a limit that was set is the budget; centres
    given explicitly are held to the limit only; the selection's refit records the
    cap and its budget."""
    import kernelselect
    from kernelselect.models._fit_policy import auto_centres
    from kernelselect.solvers._pcg import nystrom_pcg_client_bytes
    from kernelselect.utils import _resources

    monkeypatch.delenv("KERNELSELECT_MAX_BYTES", raising=False)
    X, Y = data(3, n=700)
    chunks = (250, 250, 200)
    assert _resources.dask_client_limit() == min(_resources.max_bytes(), 512 * 2**20)
    assert auto_centres(700, None, 3, 1, chunks=chunks) == 500          # the rule
    budget = nystrom_pcg_client_bytes(700, 300, 3, 1)
    monkeypatch.setattr(_resources, "DASK_CLIENT_BYTES", budget)
    assert _resources.dask_client_limit() == budget
    assert auto_centres(700, None, 3, 1, chunks=chunks) == 300          # the client's cap
    assert auto_centres(700, None, 3, 1) == 500                         # in memory: none
    with kernelselect.config_context(max_bytes="1G"):                   # a limit set
        assert _resources.dask_client_limit() == 2**30
        assert auto_centres(700, None, 3, 1, chunks=chunks) == 500
    with pytest.warns(kernelselect.ApproximationWarning, match="Dask client"):
        reg = KernelRidgeRegressor(gamma=0.4, alpha=0.5, random_state=0).fit(chunked(X),
                                                                           Y[:, 0])
    assert reg.n_centres_ == 300
    given = KernelRidgeRegressor(gamma=0.4, alpha=0.5, random_state=0,
                                 approximation=NystroemPCG(n_centres=400, max_iter=2)
                                 ).fit(chunked(X), Y[:, 0])
    assert given.n_centres_ == 400
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = KernelSelectionCV(random_state=0).fit(chunked(X), chunked(Y[:, 0]))
    capped = [w for w in caught if issubclass(w.category, kernelselect.ApproximationWarning)
              and "fewer than the" in str(w.message)]
    # once, by the refit at the selection's d_eff: not also by the check ahead of it
    assert len(capped) == 1, [str(w.message) for w in capped]
    refit = sel.selection_.details["refit"]
    assert refit["n_centres"] == 300 and refit["centres_rule"] == "memory cap"
    assert refit["approximation_gap"]["centres_rule"] == "memory cap"
    assert refit["centres_budget"] == budget


def alive_when_called(monkeypatch, module, owner, method):
    """Watch the targets that ``module``'s ``dask_training_data`` gathers: the returned
    list gets, at each call of ``owner.method``, whether that gathered copy is still
    held anywhere (after a garbage collection)."""
    import gc
    import weakref

    gathered, alive = [], []
    real_gather, real_method = module.dask_training_data, getattr(owner, method)

    def keep_ref(X, y):
        X, y_local, y_dask = real_gather(X, y)
        gathered.append(weakref.ref(y_local))
        return X, y_local, y_dask

    def watched(self, *args):
        gc.collect()
        alive.append(gathered[0]() is not None)
        return real_method(self, *args)

    monkeypatch.setattr(module, "dask_training_data", keep_ref)
    monkeypatch.setattr(owner, method, watched)
    return alive


def test_selection_on_dask_lets_go_of_its_gathered_targets_before_the_refit(monkeypatch):
    """On Dask input the refit gathers the targets it needs; the selection's own gathered
    copy (n values on the client, 76 MiB at 10^7 rows) is released before it starts."""
    from kernelselect.models import _selection_cv

    monkeypatch.setattr(_rules, "EXACT_FIT_MAX_N", 100)
    monkeypatch.setattr(_rules, "MIN_CENTRES", 40)
    alive_at_refit = alive_when_called(monkeypatch, _selection_cv, KernelRidgeRegressor,
                                       "_fit_validated")
    X, Y = data(5, n=600)
    KernelSelectionCV(random_state=0, standardize=False).fit(chunked(X), chunked(Y[:, 0]))
    assert alive_at_refit == [False]


@pytest.mark.parametrize("machine", ["regressor", "classifier"])
def test_machine_on_dask_solves_without_its_gathered_targets(monkeypatch, machine):
    """The machines gather y once for its checks (ȳ, the classes); the solve streams
    y's chunks, so the gathered copy is released before it starts."""
    from kernelselect.models import _machines

    cls = KernelRidgeRegressor if machine == "regressor" else LSSVMClassifier
    alive_at_solve = alive_when_called(monkeypatch, _machines, cls, "_fit_machine")
    X, Y = data(2, n=500)
    y = Y[:, 0] if machine == "regressor" else np.where(Y[:, 0] > 0, 1, -1)
    extra = {"fit_intercept": "mean"} if machine == "regressor" else {}
    cls(gamma=0.4, alpha=0.5, approximation=NystroemPCG(n_centres=40), random_state=0,
        **extra).fit(chunked(X), chunked(y))
    assert alive_at_solve == [False]

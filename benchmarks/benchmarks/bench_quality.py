"""Selection quality of the defaults on the shipped datasets (asv ``track_*``).

Each shipped dataset is split once with a fixed seed: at most ``TRAIN_CAP`` training
rows (half the set when smaller) and at most ``TEST_CAP`` of the others as the test
part; features are standardised on the training rows, and regression targets too.
On those rows:

* **defaults**: ``KernelSelectionCV(random_state=0)`` — ``select_kernel``'s defaults,
  then the refit of the machine they chose — scored on the test part;
* **gridsearch**: scikit-learn's 5-fold ``GridSearchCV(KernelRidge(kernel="rbf"))``
  over 15 γ = 2^k / d (k = −7…7) × 7 α = n_fit·10^k (k = −6…0), refitted at its
  choice, scored the same way — the peer a user would run, and a fixed reference
  that does not depend on kernelselect.

Score: test accuracy for binary sets (higher is better), NMSE = test mean squared
error of the standardised target (lower is better) for regression sets.
``track_defaults_minus_gridsearch`` is defaults − gridsearch (accuracy points, or
NMSE: a regression shows as a drop for binary sets and a rise for regression sets).

All datasets are computed once in ``setup_cache`` (about a minute on two cores); the
``track_*`` methods read the results.
"""

import warnings

import numpy as np

TRAIN_CAP = 500
TEST_CAP = 2000
SEED = 0


def shipped():
    """The shipped datasets' names, or [] on commits without them."""
    try:
        from kernelselect.datasets import list_datasets
    except ImportError:
        return []
    return [info.name for info in list_datasets()]


def fixed_split(name):
    """(Xtr, ytr, Xte, yte, task) of the shipped set ``name``, split and scaled as the
    module docstring says."""
    from kernelselect.datasets import load

    data = load(name)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
    perm = np.random.default_rng(SEED).permutation(X.shape[0])
    n_train = min(X.shape[0] // 2, TRAIN_CAP)
    tr, te = perm[:n_train], perm[n_train:n_train + TEST_CAP]
    mean, std = X[tr].mean(axis=0), X[tr].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    Xtr, Xte = (X[tr] - mean) / std, (X[te] - mean) / std
    ytr, yte = y[tr], y[te]
    if data.task == "regression":
        m, s = ytr.mean(), ytr.std() or 1.0
        ytr, yte = (ytr - m) / s, (yte - m) / s
    return Xtr, ytr, Xte, yte, data.task


def score(pred, y, task):
    """Accuracy (binary) or mean squared error (regression, standardised target)."""
    if task == "regression":
        return float(np.mean((np.asarray(pred, dtype=np.float64) - y) ** 2))
    return float(np.mean(np.asarray(pred) == y))


def defaults_score(Xtr, ytr, Xte, yte, task):
    from kernelselect import KernelSelectionCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # GridEdgeWarning and the like
        est = KernelSelectionCV(random_state=SEED).fit(Xtr, ytr)
    return score(est.predict(Xte), yte, task)


def gridsearch_score(Xtr, ytr, Xte, yte, task):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

    d = Xtr.shape[1]
    n_fit = Xtr.shape[0] - Xtr.shape[0] // 5
    grid = {"gamma": list(2.0 ** np.arange(-7, 8) / d),
            "alpha": list(n_fit * 10.0 ** np.arange(-6, 1))}
    if task == "binary":
        cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
        scoring = make_scorer(lambda yt, yp: np.mean(np.where(yp >= 0, 1.0, -1.0) == yt))
    else:
        cv = KFold(5, shuffle=True, random_state=SEED)
        scoring = "neg_mean_squared_error"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # ill-conditioned solves at tiny α
        search = GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=cv, scoring=scoring,
                              n_jobs=1).fit(Xtr, ytr)
    pred = search.predict(Xte)
    if task == "binary":
        pred = np.where(pred >= 0, 1.0, -1.0)
    return score(pred, yte, task)


class DefaultsQuality:
    params = shipped()
    param_names = ["dataset"]
    timeout = 900

    def setup_cache(self):
        try:
            import sklearn  # noqa: F401
            have_sklearn = True
        except ImportError:
            have_sklearn = False
        out = {}
        for name in shipped():
            Xtr, ytr, Xte, yte, task = fixed_split(name)
            row = {"defaults": None, "gridsearch": None}
            try:
                row["defaults"] = defaults_score(Xtr, ytr, Xte, yte, task)
            except ImportError:                  # a commit without KernelSelectionCV
                pass
            if have_sklearn:
                row["gridsearch"] = gridsearch_score(Xtr, ytr, Xte, yte, task)
            out[name] = row
        return out

    setup_cache.timeout = 900

    def setup(self, cache, name):
        # asv reports a benchmark whose setup raises NotImplementedError as skipped
        if cache[name]["defaults"] is None:
            raise NotImplementedError("KernelSelectionCV is not available in this version")

    def track_defaults(self, cache, name):
        return cache[name]["defaults"]

    def track_gridsearch(self, cache, name):
        # NaN (shown as failed) where scikit-learn is not installed
        return cache[name]["gridsearch"] if cache[name]["gridsearch"] is not None else np.nan

    def track_defaults_minus_gridsearch(self, cache, name):
        return cache[name]["defaults"] - self.track_gridsearch(cache, name)

    track_defaults.unit = "accuracy (binary) or NMSE (regression)"
    track_gridsearch.unit = "accuracy (binary) or NMSE (regression)"
    track_defaults_minus_gridsearch.unit = "accuracy or NMSE difference"

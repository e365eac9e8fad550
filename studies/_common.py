"""Shared pieces of every study: data, splits, scaling, the kernel ridge scorer, the
final classifier, timed selection calls, raw-record files and the significance tests.

Data are found in ``$KERNELSELECT_DATA`` or, by default, in ``../shared/data`` beside
the repository; a set missing there is taken from the package's shipped datasets when
it ships. Nothing is ever downloaded.
"""

import argparse
import gzip
import json
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("KERNELSELECT_DATA", REPO.parent / "shared" / "data"))
RESULTS = REPO / "studies" / "results"


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


def list_data(data_dir=None):
    """(name, task, n, d) of every set in ``data_dir`` (default :data:`DATA`) that has
    an ``.npz`` file and a JSON sidecar, sorted by name."""
    out = []
    for meta_path in sorted(Path(data_dir or DATA).glob("*.json")):
        meta = json.loads(meta_path.read_text())
        if meta_path.with_suffix(".npz").exists():
            out.append((meta["name"], meta["task"], int(meta["n"]), int(meta["d"])))
    return out


def load_data(name, data_dir=None):
    """The :class:`kernelselect.datasets.Dataset` ``name``: ``<data_dir>/<name>.npz``
    (default :data:`DATA`), else the shipped set of that name."""
    from kernelselect import datasets

    path = Path(data_dir or DATA) / f"{name}.npz"
    if path.exists():
        return datasets.load_npz(path)
    if name in {info.name for info in datasets.list_datasets()}:
        return datasets.load(name)
    raise FileNotFoundError(f"{path} not found and {name!r} is not a shipped dataset; set "
                            "KERNELSELECT_DATA (or --data-dir) to the folder holding the "
                            "shared datasets.")


#: How each multiclass or oversized set is made into the binary problem a table uses.
#: ``rows``: keep the first rows only; ``positive``: one-vs-rest with this class code.
PREPARATION = {
    "a9a": {"rows": 32561,
            "why": "the first 32561 rows = LIBSVM a9a's training file, the 'adult (32561, 123)' "
                   "of paper 000 (the stored file appends the 16281-row test file)"},
    "penbased": {"positive": 0,
                 "why": "one-vs-rest: digit 0 (+1) against the other nine digits (−1); paper 000 "
                        "does not say how it made the 10-class set binary"},
}


def load(name):
    """(X, y) with y in {−1, +1}, prepared as :data:`PREPARATION` says."""
    d = load_data(name)
    X, y = np.asarray(d.X, dtype=np.float64), np.asarray(d.y, dtype=np.float64)
    prep = PREPARATION.get(name, {})
    if "rows" in prep:
        X, y = X[:prep["rows"]], y[:prep["rows"]]
    if "positive" in prep:
        y = np.where(y == prep["positive"], 1.0, -1.0)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"{name}: {classes.size} classes after preparation; add it to PREPARATION.")
    y = np.where(y == classes[1], 1.0, -1.0)
    return X, y


# --------------------------------------------------------------------------- splits and scaling


def seeded_split(n, name, repeat, n_train, sort=True):
    """The first ``n_train`` of a permutation drawn from ``default_rng([repeat,
    crc32(name)])`` train, the rest test (both sorted unless ``sort`` is false); the
    generator is returned for the subsamples that follow."""
    rng = np.random.default_rng([repeat, zlib.crc32(name.encode())])
    perm = rng.permutation(n)
    tr, te = perm[:n_train], perm[n_train:]
    if sort:
        tr, te = np.sort(tr), np.sort(te)
    return tr, te, rng


def split(n, train_fraction, name, repeat):
    """Seeded random train/test indices, ``round(train_fraction·n)`` training rows."""
    return seeded_split(n, name, repeat, int(round(train_fraction * n)))


def half_split(X, y, task, name, repeat):
    """The selection-quality split: the first n // 2 rows of the seeded permutation
    train (in permutation order), features standardised on them, regression targets
    centred and scaled by the training mean and standard deviation.
    Returns (Xtr, ytr, Xte, yte, rng)."""
    tr, te, rng = seeded_split(X.shape[0], name, repeat, X.shape[0] // 2, sort=False)
    Xtr, Xte = standardise(X[tr], X[te])
    ytr, yte = y[tr].copy(), y[te].copy()
    if task == "regression":
        m, s = ytr.mean(), ytr.std() or 1.0
        ytr, yte = (ytr - m) / s, (yte - m) / s
    return Xtr, ytr, Xte, yte, rng


def capped_half_split(name, task, data, split, cap, test_cap):
    """:func:`half_split` of the Dataset ``data`` with at most ``cap`` training and
    ``test_cap`` test rows (seeded subsamples): (Xtr, ytr, Xte, yte, n_train before the
    cap, the split's seed 1000 + split)."""
    Xtr, ytr, Xte, yte, rng = half_split(data.X, data.y, task, name, split)
    n_full = Xtr.shape[0]
    idx = subsample(rng, n_full, cap)
    tidx = subsample(rng, Xte.shape[0], test_cap)
    return (np.ascontiguousarray(Xtr[idx]), ytr[idx], np.ascontiguousarray(Xte[tidx]),
            yte[tidx], n_full, 1000 + split)


def subsample(rng, n, cap):
    """All n row indices, or a sorted seeded sample of ``cap`` of them."""
    return np.arange(n) if n <= cap else np.sort(rng.choice(n, size=cap, replace=False))


def standardise(X, *others):
    """X and each of ``others`` centred and scaled by X's column means and standard
    deviations (constant columns are centred only). Always a tuple."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return tuple((A - mean) / std for A in (X, *others))


def minmax(Xtr, Xte):
    """Scale every feature to [0, 1] on the training part (LIBSVM's usual scaling;
    constant features become 0). The test part uses the same map, unclipped."""
    lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (Xtr - lo) / span, (Xte - lo) / span


# --------------------------------------------------------------------------- scoring


def sq_dists(A, B):
    """Squared Euclidean distances between the rows of A and B (clipped at 0)."""
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d, 0.0, out=d)
    return d


def targets(y, task):
    """KRR targets and the class labels: regression: y as one column, None; binary: ±1
    (the larger label +1); multiclass: one-vs-rest ±1 columns (classes sorted)."""
    if task == "regression":
        return np.asarray(y, float)[:, None], None
    classes = np.unique(y)
    T = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    if task == "binary":
        return T[:, 1:], classes
    return T, classes


def score(pred, y, task, classes):
    """Accuracy of the sign (binary) or of the argmax (multiclass), or the mean squared
    error (regression), of KRR outputs ``pred`` (m, columns of :func:`targets`)."""
    if task == "regression":
        return float(np.mean((pred[:, 0] - y) ** 2))
    if task == "binary":
        lab = np.where(pred[:, 0] >= 0, classes[1], classes[0])
    else:
        lab = classes[np.argmax(pred, axis=1)]
    return float(np.mean(lab == y))


def krr_predictions(Xtr, T, Xte, gammas, alpha, block=4000):
    """Test outputs of Gaussian kernel ridge regression without intercept, (K + αI)c = T,
    for every γ: shape (len(gammas), m, T.shape[1]). The γ share one training distance
    matrix and, per block of test rows, one cross distance matrix."""
    import scipy.linalg

    n = Xtr.shape[0]
    Dtr = sq_dists(Xtr, Xtr)
    coefs = []
    for g in gammas:
        K = np.exp(-g * Dtr)
        K.flat[:: n + 1] += alpha
        coefs.append(scipy.linalg.cho_solve(
            scipy.linalg.cho_factor(K, overwrite_a=True, check_finite=False), T))
    del Dtr
    out = np.empty((len(gammas), Xte.shape[0], T.shape[1]))
    for s in range(0, Xte.shape[0], block):
        D = sq_dists(Xte[s:s + block], Xtr)
        for j, g in enumerate(gammas):
            out[j, s:s + block] = np.exp(-g * D) @ coefs[j]
    return out


def test_scores(Xtr, ytr, Xte, yte, task, gammas, alpha):
    """:func:`score` of KRR refitted on the training rows at every γ (one α)."""
    T, classes = targets(ytr, task)
    return [score(p, yte, task, classes)
            for p in krr_predictions(Xtr, T, Xte, gammas, alpha)]


def test_score(Xtr, ytr, Xte, yte, task, gamma, alpha):
    """:func:`score` of KRR refitted on the training rows at (γ, α)."""
    return test_scores(Xtr, ytr, Xte, yte, task, [gamma], alpha)[0]


# --------------------------------------------------------------------------- models


class TestAccuracy:
    """Test accuracy of the LSSVM with bias (ridge α) trained at a given γ, computed
    once per γ on demand. ``fit_rows`` restricts the training rows (a cap)."""

    def __init__(self, Xtr, ytr, Xte, yte, alpha, fit_rows=None):
        rows = np.arange(Xtr.shape[0]) if fit_rows is None else fit_rows
        self.X, self.y = Xtr[rows], ytr[rows]
        self.Xte, self.yte = Xte, yte
        self.alpha = alpha
        self.cache = {}
        self.seconds = 0.0

    def __call__(self, gamma):
        import kernelselect

        key = float(gamma)
        if key not in self.cache:
            t0 = time.perf_counter()
            model = kernelselect.fit_lssvm(self.X, self.y, key, alpha=self.alpha)
            f = np.asarray(model.decision_function(self.Xte)).reshape(-1)
            self.cache[key] = float(np.mean(np.where(f >= 0, 1.0, -1.0) == self.yte))
            self.seconds += time.perf_counter() - t0
        return self.cache[key]


def timed_select(X, y, gammas, alpha, criterion, approximation, seed, **params):
    """One ``select_kernel`` call: (chosen γ index per criterion, curves, seconds)."""
    import kernelselect

    t0 = time.perf_counter()
    # the protocol fixes the feature scaling (minmax) and the grid: no re-standardising
    res = kernelselect.select_kernel(X, y, gammas=gammas, alphas=(alpha,), criterion=criterion,
                                     approximation=approximation, random_state=seed,
                                     standardize=False, **params)
    seconds = time.perf_counter() - t0
    chosen = {c: (None if res.best[c]["index"] is None else int(res.best[c]["index"][0]))
              for c in res.criteria}
    curves = {c: [None if not np.isfinite(v) else float(f"{v:.6g}")
                  for v in np.asarray(res.curves[c])[:, 0]] for c in res.criteria}
    return chosen, curves, seconds


def timed_cv(X, y, gammas, alpha, seed, machine="lssvm", approximation="exact"):
    """5-fold CV error over γ: (chosen γ index, curve, seconds)."""
    import kernelselect

    t0 = time.perf_counter()
    res = kernelselect.cross_validate_grid(X, y, gammas=gammas, alphas=[alpha], machine=machine,
                                           loss="error", approximation=approximation, cv=5,
                                           random_state=seed)
    seconds = time.perf_counter() - t0
    curve = np.asarray(res.curves["cv"])[:, 0]
    return int(np.argmin(curve)), [float(f"{v:.6g}") for v in curve], seconds


# --------------------------------------------------------------------------- records


def append_record(path, record):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(record, separators=(",", ":")) + "\n")


def read_jsonl(path):
    """Every record of ``path.gz`` (the committed archive) and then of ``path`` (plain
    jsonl, appended while a study runs); a ``path`` ending in .gz is read alone. Blank
    lines and a last line cut short by an interrupted run are skipped."""
    path = Path(path)
    sources = [path] if path.suffix == ".gz" else [Path(str(path) + ".gz"), path]
    out = []
    for p in sources:
        if not p.exists():
            continue
        with (gzip.open if p.suffix == ".gz" else open)(p, "rt") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return out


#: the records of the defaults study (``defaults_quality.py``): the training halves it scored
DEFAULTS_STUDY = RESULTS / "defaults_quality_raw.jsonl.gz"


def defaults_study_halves(splits, datasets=None, min_n=400):
    """The defaults study's ``defaults`` records (one per data set and split) of
    ``splits`` (and ``datasets``, names) whose training half has more than ``min_n``
    rows: the halves the speed studies rerun with the study's seeds (below 400 rows the
    exact path decides, which the speed work leaves alone)."""
    return [r for r in read_jsonl(DEFAULTS_STUDY)
            if r["method"] == "defaults" and r["n_train"] > min_n and r["split"] in splits
            and (datasets is None or r["dataset"] in datasets)]


def capped_halves(recs, cap, test_cap):
    """For each record of :func:`defaults_study_halves`, (record, Xtr, ytr, Xte, yte,
    seed): its training and test halves capped at ``cap`` and ``test_cap`` rows, with
    the study's seed."""
    for r in recs:
        data = load_data(r["dataset"])
        Xtr, ytr, Xte, yte, _, seed = capped_half_split(r["dataset"], r["task"], data,
                                                        r["split"], cap, test_cap)
        yield r, Xtr, ytr, Xte, yte, seed


def timed_defaults(X, y, seed):
    """(seconds, result) of ``select_kernel(X, y, random_state=seed)`` with its
    defaults, warnings silenced."""
    import warnings

    import kernelselect

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(X, y, random_state=seed)
        return time.perf_counter() - t0, res


def read_records(path):
    """:func:`read_jsonl` keyed by (dataset, repeat, part): later lines win."""
    out = {}
    for rec in read_jsonl(path):
        out[(rec["dataset"], rec["repeat"], rec.get("part", ""))] = rec
    return list(out.values())


def write_archive(path, recs, separators=None):
    """Write ``recs`` as JSON lines into ``path.gz`` (the archive kept in the
    repository; ``path`` is the plain jsonl file, or the archive itself). The gzip
    header carries mtime 0, so the same records give the same bytes."""
    path = Path(path)
    target = path if path.suffix == ".gz" else Path(str(path) + ".gz")
    text = "".join(json.dumps(r, separators=separators) + "\n" for r in recs)
    with open(target, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(text.encode())


def archive(path):
    """Write every record of ``path`` (and its archive) into ``path.gz``, sorted."""
    recs = sorted(read_records(path), key=lambda r: (r["dataset"], r.get("part", ""), r["repeat"]))
    write_archive(path, recs, separators=(",", ":"))
    return len(recs)


def done_keys(path):
    return {(r["dataset"], r["repeat"], r.get("part", "")) for r in read_records(path)}


# --------------------------------------------------------------------------- statistics


def paired_t(a, b):
    """Paper 003's paired t statistic for "A better than B": d_i = B_i − A_i (test
    errors), t = mean(d) / (sd(d)/√N) with the sample standard deviation; A is
    significantly better when t > 1.676 (one-sided 5 %, 49 degrees of freedom).
    None when fewer than two pairs; +inf/−inf when every difference is equal and non-zero."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    if d.size < 2:
        return None
    sd = d.std(ddof=1)
    if sd == 0:
        return 0.0 if d.mean() == 0 else float(np.sign(d.mean()) * np.inf)
    return float(d.mean() / (sd / np.sqrt(d.size)))


def z_statistic(best, other):
    """Paired z statistic of accuracies over repeats, best − other: z = mean(d)/(sd(d)/√R),
    d_r = acc_best,r − acc_other,r; z > 1.64 means the other method is significantly
    worse at the one-sided 5 % level (normal approximation, as paper 000 uses after
    Cawley & Talbot 2007; with few repeats it is only indicative)."""
    return paired_t(other, best)


def note_lines(recs, label, heading="Notes:", end=""):
    """Report lines for the records that carry a ``note``, each named by ``label(record)``
    (none when no record has one)."""
    notes = [f"- {label(r)}: {r['note']}{end}" for r in recs if r.get("note")]
    return ["", heading, ""] + notes if notes else []


def write_report(path, lines):
    """Write a study's markdown report (``lines`` joined by newlines) and print it."""
    path.write_text("\n".join(lines) + "\n")
    print(path.read_text(), end="")


def report_head(title, intro, columns):
    """A report's first lines: the title, the ``intro`` paragraph (a triple-quoted
    string, reflowed onto one line) and the head of its table, ``columns`` being
    ``(name, align)`` pairs with align ``"l"`` or ``"r"``."""
    rule = "".join("|---" if align == "l" else "|---:" for _, align in columns) + "|"
    return [f"# {title}", "", " ".join(intro.split()), "",
            "| " + " | ".join(name for name, _ in columns) + " |", rule]


def command_parser(doc):
    """(parser, sub-parsers) for a study run as ``study.py <command> [options]``, its
    description the first line of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    return parser, parser.add_subparsers(dest="command", required=True)


def held_out_parser(doc, tasks, small_splits, cap):
    """The parser of a study over the shared sets' held-out halves, with the options
    every such study takes: where the data and results live, which sets, tasks and
    splits (``small_splits`` extra on sets with at most ``--small`` training rows) and
    the caps on the training and test halves."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=DATA)
    p.add_argument("--out-dir", type=Path, default=RESULTS)
    p.add_argument("--datasets", default=None)
    p.add_argument("--tasks", default=tasks)
    p.add_argument("--splits", default="0,1")
    p.add_argument("--small-splits", default=small_splits,
                   help="extra splits for sets whose training half has at most --small rows")
    p.add_argument("--small", type=int, default=1000)
    p.add_argument("--cap", type=int, default=cap)
    p.add_argument("--test-cap", type=int, default=10000)
    p.add_argument("--report-only", action="store_true",
                   help="rebuild the report from the raw records, running nothing")
    return p


def parse_held_out(parser, argv):
    """The parsed arguments of a :func:`held_out_parser`, its output folder made."""
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    return args


def run_and_record(raw, name, task, split, method, run):
    """Run ``run()`` for one (set, split, method) of a held-out study, append the
    records it returns to ``raw`` and log them with the time taken. An exception is
    recorded as an ``error/<method>`` record: one failing set is a result, not a stop."""
    t0 = time.perf_counter()
    try:
        recs = run()
    except Exception as exc:
        recs = [dict(dataset=name, task=task, split=split, method=f"error/{method}",
                     error=f"{type(exc).__name__}: {exc}")]
    for r in recs:
        append_record(raw, r)
    log(f"{name} split {split} {method}: {time.perf_counter() - t0:.1f} s "
        + " ".join(f"{r['method']}={r.get('score', r.get('error'))}" for r in recs))
    return recs


def run_command(parser, sub, argv, report, **commands):
    """Add the command ``report`` (rebuild the report from the raw records) to a
    :func:`command_parser`, parse ``argv`` and call the chosen command's function
    (``report`` or one of ``commands``) with the parsed arguments."""
    sub.add_parser("report")
    args = parser.parse_args(argv)
    return {**commands, "report": report}[args.command](args)


def peak_rss():
    """Peak resident set size (bytes) since the last reset_peak_rss(), from /proc."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmHWM not found in /proc/self/status")


def reset_peak_rss():
    """Reset the peak resident set size to the current one (Linux ≥ 4.0: writing 5 to
    clear_refs). A forked child starts with its parent's pages: without a reset its
    peak would include the parent's arrays."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")

"""Compare two asv result files (same machine, --python=same runs): ratio after/before
per benchmark case, with the third-party peers (code no commit can change) as the noise
control. Usage: python benchmarks/compare_runs.py BEFORE.json AFTER.json [--out report.md]"""
import itertools, json, statistics, sys

PEER_NAMES = ("time_numpy_peer", "peakmem_reference")


def cases(path):
    d = json.load(open(path))
    cols = d["result_columns"]
    ri, pi = cols.index("result"), cols.index("params")
    si = cols.index("samples") if "samples" in cols else None
    out = {}
    for name, row in d["results"].items():
        res = row[ri]
        params = row[pi] if len(row) > pi else []
        combos = list(itertools.product(*params)) if params else [()]
        samples = row[si] if si is not None and len(row) > si and row[si] else [None] * len(combos)
        if res is None:
            continue
        for combo, r, s in zip(combos, res, samples):
            if r is None or (isinstance(r, float) and r != r):
                continue
            key = (name, ", ".join(p.strip("'") for p in combo))
            out[key] = (r, min(s) if s else r)
    return d["commit_hash"][:7], out


def is_peer(name, params):
    return name.endswith(PEER_NAMES) or "scipy.fft" in params.split(", ")


def summary(ratios):
    r = sorted(ratios)
    if len(r) < 2:
        return f"{len(r)} cases" + (f": {r[0]:.2f}" if r else "")
    q = statistics.quantiles(r, n=4)
    return (f"{len(r)} cases: median {statistics.median(r):.2f}, middle half {q[0]:.2f}–{q[2]:.2f}, "
            f"range {r[0]:.2f}–{r[-1]:.2f}, {sum(x > 1.1 for x in r)} above 1.1, "
            f"{sum(x < 0.9 for x in r)} below 0.9")


def main(argv):
    before_hash, before = cases(argv[0])
    after_hash, after = cases(argv[1])
    rows = []
    for key in sorted(set(before) & set(after)):
        (b, bmin), (a, amin) = before[key], after[key]
        if b > 0 and bmin > 0:
            rows.append((a / b, amin / bmin, key, b, a, is_peer(*key)))
    own = [r for r in rows if not r[5]]
    peers = [r for r in rows if r[5]]
    lines = [f"# asv: {before_hash} against {after_hash}", ""]
    for label, sel in (("kernelselect's own code", own), ("third-party peers", peers)):
        lines.append(f"- {label}, median ratio: {summary([r[0] for r in sel])}")
        lines.append(f"- {label}, ratio of the fastest samples: {summary([r[1] for r in sel])}")
    lines += ["", "| ratio (median) | ratio (fastest) | benchmark | parameters | before | after | peer |",
              "|---:|---:|---|---|---:|---:|---|"]
    for ratio, rmin, (name, params), b, a, peer in sorted(rows, key=lambda r: -r[0]):
        lines.append(f"| {ratio:.2f} | {rmin:.2f} | {name} | {params} | {b:.4g} | {a:.4g} | {'yes' if peer else ''} |")
    text = "\n".join(lines) + "\n"
    if "--out" in argv:
        open(argv[argv.index("--out") + 1], "w").write(text)
    print("\n".join(lines[:8]))


if __name__ == "__main__":
    main(sys.argv[1:])

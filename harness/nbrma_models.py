"""nbrma_models — paper 001 §3's performance models fitted to the D1-D7 results (docs/models.md).

A model is a form (linear a·s + b, proportional c·x, or a constant) over one counter of one
benchmark: P_put = a·s + b from D1_put_latency's latency_us against size, P_fence = c·log2 p
from D5_fence's fence_us against procs, ... (MODELS below, with the paper's Cray XE6 fit).

Noise: the machines are shared, so one fit is not a measurement. Each run (a directory of D
results) gives one fit per (series, model); the band of a parameter is the median and the
spread (min, max, MAD) of its fits over the runs. A fit also carries its own residual (RMS, µs)
and the 95 % confidence interval of its parameters (Student t on the least-squares standard
errors; none when the points only just determine the parameters). Linear fits weight each
point by 1/y² (relative errors), see fit_linear.

regress(): a parameter of a fresh fit is WORSE when its median exceeds
    max(band max, median + 3·1.4826·MAD) · (1 + slack) + floor(unit)
of the stored baseline: all parameters are costs, so only growth fails.
"""
import glob
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbrma_results  # noqa: E402

# name, benchmark, counter, x (parameter name or a function of params), form, paper fit
# (parameter -> value in µs units), unit of x. Forms: "linear" (a, b), "prop" (c), "const" (c).
MODELS = [
    ("P_put", "D1_put_latency", "latency_us", "size", "linear", {"a": 0.16e-3, "b": 1.0}, "B"),
    ("P_get", "D1_get_latency", "latency_us", "size", "linear", {"a": 0.17e-3, "b": 1.9}, "B"),
    ("P_msg", "D3_put_rate", "per_put_us", None, "const", {"c": 0.080}, None),
    ("P_acc,sum", "D4_acc_sum", "latency_us", "size", "linear", {"a": 28e-3, "b": 2.4}, "B"),
    ("P_acc,min", "D4_acc_min", "latency_us", "size", "linear", {"a": 0.8e-3, "b": 7.3}, "B"),
    ("P_CAS", "D4_cas", "latency_us", None, "const", {"c": 2.4}, None),
    ("P_FOP", "D4_fetch_and_op", "latency_us", None, "const", {}, None),
    ("P_fence", "D5_fence", "fence_us", "log2p", "prop", {"c": 2.9}, "log2 p"),
    ("P_post", "D6_pscw_ring", "post_us", "k", "prop", {"c": 0.35}, "k"),
    ("P_complete", "D6_pscw_ring", "complete_us", "k", "prop", {"c": 0.35}, "k"),
    ("P_start", "D6_pscw_ring", "start_us", None, "const", {"c": 0.7}, None),
    ("P_wait", "D6_pscw_ring", "wait_us", None, "const", {"c": 1.8}, None),
    ("P_lock,excl", "D7_lock_exclusive", "lock_us", None, "const", {"c": 5.4}, None),
    ("P_lock,shrd", "D7_lock_shared", "lock_us", None, "const", {"c": 2.7}, None),
    ("P_lock_all", "D7_lock_all", "lock_us", None, "const", {"c": 2.7}, None),
    ("P_unlock", "D7_lock_exclusive", "unlock_us", None, "const", {"c": 0.4}, None),
    ("P_flush", "D7_flush", "flush_us", None, "const", {"c": 0.076}, None),
    ("P_sync", "D7_sync", "sync_us", None, "const", {"c": 0.017}, None),
]
FORM_TEXT = {"linear": "a·{x} + b", "prop": "c·{x}", "const": "c"}
# Units of each parameter (y is µs) and the absolute floor regress() adds to a band.
FLOOR = {"us": 0.05, "us/B": 1e-5, "us/log2 p": 0.05, "us/k": 0.05}

# Two-sided 95 % Student t quantiles by degrees of freedom (the standard library has none).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000}


def t95(dof):
    if dof <= 0:
        return None
    best = max(k for k in _T95 if k <= dof)
    return _T95[best] if dof <= 60 else 1.960


class FitError(Exception):
    pass


def fit_linear(xs, ys):
    """Relative least squares y = a·x + b (weights 1/y², so that every point counts by its
    relative error: over sizes 1 B … 4 MiB, b is set by the small messages and a by the large
    ones, instead of the largest few deciding both): ({a, b}, residual RMS in y's unit,
    {a: (lo, hi), b: (lo, hi)} or None)."""
    n = len(xs)
    if n < 2 or len(set(xs)) < 2:
        raise FitError("a linear fit needs two distinct x, got %s" % sorted(set(xs)))
    floor = max(1e-9, 1e-6 * max(abs(y) for y in ys))
    ws = [1.0 / max(abs(y), floor) ** 2 for y in ys]
    sw = sum(ws)
    mx = sum(w * x for w, x in zip(ws, xs)) / sw
    my = sum(w * y for w, y in zip(ws, ys)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
    a = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys)) / sxx
    b = my - a * mx
    res = [y - (a * x + b) for x, y in zip(xs, ys)]
    rms = math.sqrt(sum(r * r for r in res) / n)
    ci = None
    t = t95(n - 2)
    if t:
        s2 = sum(w * r * r for w, r in zip(ws, res)) / (n - 2)
        se_a = math.sqrt(s2 / sxx)
        se_b = math.sqrt(s2 * (1.0 / sw + mx * mx / sxx))
        ci = {"a": (a - t * se_a, a + t * se_a), "b": (b - t * se_b, b + t * se_b)}
    return {"a": a, "b": b}, rms, ci


def fit_prop(xs, ys):
    """Least squares y = c·x through the origin."""
    n = len(xs)
    sxx = sum(x * x for x in xs)
    if n < 1 or sxx == 0:
        raise FitError("a proportional fit needs a point with x != 0")
    c = sum(x * y for x, y in zip(xs, ys)) / sxx
    ssr = sum((y - c * x) ** 2 for x, y in zip(xs, ys))
    ci = None
    t = t95(n - 1)
    if t:
        se = math.sqrt(ssr / (n - 1) / sxx)
        ci = {"c": (c - t * se, c + t * se)}
    return {"c": c}, math.sqrt(ssr / n), ci


def fit_const(ys):
    if not ys:
        raise FitError("no points")
    c = statistics.fmean(ys)
    ci = None
    t = t95(len(ys) - 1)
    if t:
        se = statistics.stdev(ys) / math.sqrt(len(ys))
        ci = {"c": (c - t * se, c + t * se)}
    return {"c": c}, math.sqrt(sum((y - c) ** 2 for y in ys) / len(ys)), ci


def xvalue(spec, params):
    if spec == "log2p":
        p = params.get("procs")
        return math.log2(p) if isinstance(p, (int, float)) and p > 0 else None
    v = params.get(spec)
    return float(v) if isinstance(v, (int, float)) else None


def param_units(form, xunit):
    if form == "linear":
        return {"a": "us/" + xunit, "b": "us"}
    if form == "prop":
        return {"c": "us/" + xunit}
    return {"c": "us"}


def points(results, bench, counter, xspec):
    """{series: [(x, y)]} of one benchmark's counter (errors skipped)."""
    out = {}
    for r in results:
        if r.bench != bench or r.error is not None or counter not in r.counters:
            continue
        x = xvalue(xspec, r.params) if xspec else 0.0
        if x is None:
            continue
        out.setdefault(r.series or "-", []).append((x, float(r.counters[counter])))
    return out


def fit_run(results):
    """One run's fits: {series: {model: {params, residual_us, ci95, points}}}."""
    fits = {}
    for name, bench, counter, xspec, form, _, _ in MODELS:
        for series, pts in points(results, bench, counter, xspec).items():
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            try:
                if form == "linear":
                    par, rms, ci = fit_linear(xs, ys)
                elif form == "prop":
                    par, rms, ci = fit_prop(xs, ys)
                else:
                    par, rms, ci = fit_const(ys)
            except FitError:
                continue
            pred = [par["a"] * x + par["b"] if form == "linear" else
                    par["c"] * x if form == "prop" else par["c"] for x in xs]
            rel = [(y - q) / y for y, q in zip(ys, pred) if y]
            fits.setdefault(series, {})[name] = {
                "params": par, "residual_us": rms, "ci95": ci, "points": sorted(pts),
                "residual_rel": math.sqrt(sum(r * r for r in rel) / len(rel)) if rel else 0.0}
    return fits


def band(values):
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    return {"median": med, "min": min(values), "max": max(values), "mad": mad, "n": len(values)}


def run_dirs(results_dir):
    """The runs under a results directory: each results/<mpi>/runs/*/ holding D results, and the
    directory itself when it holds D results (a plain `make bench`)."""
    dirs = []
    for d in [results_dir] + sorted(glob.glob(os.path.join(results_dir, "runs", "*", ""))):
        if glob.glob(os.path.join(d, "d[1-7]_*.json")):
            dirs.append(os.path.normpath(d))
    return dirs


def fit_runs(runs):
    """runs: list of (label, results). -> models document (without the MPI label)."""
    per_run = [(label, fit_run(rs)) for label, rs in runs]
    models = {}
    for label, fits in per_run:
        for series, ms in fits.items():
            for name, f in ms.items():
                m = models.setdefault(series, {}).setdefault(name, {"fits": []})
                m["fits"].append(dict(f, run=label))
    for series, ms in models.items():
        for name, m in ms.items():
            spec = next(s for s in MODELS if s[0] == name)
            m["form"] = spec[4]
            m["units"] = param_units(spec[4], spec[6] or "")
            m["paper"] = spec[5]
            m["band"] = {p: band([f["params"][p] for f in m["fits"]]) for p in m["fits"][0]["params"]}
            m["residual_us"] = statistics.median(f["residual_us"] for f in m["fits"])
            m["residual_rel"] = statistics.median(f["residual_rel"] for f in m["fits"])
    return {"runs": [label for label, _ in per_run], "models": models}


def load_runs(results_dir):
    dirs = run_dirs(results_dir)
    if not dirs:
        raise FitError("no D results (d1_*.json ... d7_*.json) in %s or %s/runs/*/: run "
                       "`make models RUNS=3` or `make bench BENCH='^D'` first" %
                       (results_dir, results_dir))
    return [(os.path.relpath(d, results_dir), nbrma_results.load_dir(d)) for d in dirs]


# ---- presentation -------------------------------------------------------------------------------

def fmt_param(v, unit):
    if unit == "us/B":
        return "%.3g ns/B" % (v * 1e3)
    if v != 0 and abs(v) < 1:
        return "%.0f ns" % (v * 1e3) if unit == "us" else "%.0f ns/%s" % (v * 1e3, unit[3:])
    return "%.2f µs" % v if unit == "us" else "%.2f µs/%s" % (v, unit[3:])


def model_text(m, pars, xunit):
    form = m["form"]
    u = m["units"]
    if not pars:
        return "-"
    if form == "linear":
        return "%s·s + %s" % (fmt_param(pars["a"], u["a"]), fmt_param(pars["b"], u["b"]))
    if form == "prop":
        return "%s" % fmt_param(pars["c"], u["c"])
    return fmt_param(pars["c"], u["c"])


def table(doc, out=sys.stdout):
    """Each model per series: the band's median fit, its spread, residual, beside 001's."""
    rows = [("model", "form", "series", "fit (median of runs)", "spread (min..max)",
             "resid (rel)", "runs", "paper 001 (Cray XE6)")]
    for spec in MODELS:
        name, xs = spec[0], {"size": "s", "log2p": "log2 p", "k": "k"}.get(spec[3], "")
        for series in sorted(doc["models"], key=lambda s: (("vendor", "ref", "ref-nb") + (s,)).index(s)):
            m = doc["models"][series].get(name)
            if not m:
                continue
            med = {p: b["median"] for p, b in m["band"].items()}
            spread = ", ".join("%s %s..%s" % (p, fmt_param(b["min"], m["units"][p]),
                                              fmt_param(b["max"], m["units"][p]))
                               for p, b in m["band"].items())
            rows.append((name, FORM_TEXT[m["form"]].format(x=xs), series,
                         model_text(m, med, xs), spread, "%s (%.0f%%)" % (
                             fmt_param(m["residual_us"], "us"), 100 * m.get("residual_rel", 0)),
                         str(m["band"][next(iter(m["band"]))]["n"]),
                         model_text(m, m["paper"], xs) if m["paper"] else "-"))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip(), file=out)
        if i == 0:
            print("  ".join("-" * x for x in w), file=out)


def regress(base, fresh, slack=0.10, out=sys.stdout):
    """Compare fresh fits with a stored baseline; print a table; return the number WORSE."""
    rows = [("series", "model", "param", "baseline median", "allowed", "fresh", "verdict")]
    worse = 0
    for series, ms in sorted(base["models"].items()):
        for name, m in sorted(ms.items()):
            for p, b in sorted(m["band"].items()):
                unit = m["units"][p]
                hi = max(b["max"], b["median"] + 3 * 1.4826 * b["mad"])
                allowed = hi + slack * abs(b["median"]) + FLOOR.get(unit, 0.0)
                f = fresh["models"].get(series, {}).get(name)
                if f is None:
                    rows.append((series, name, p, fmt_param(b["median"], unit),
                                 fmt_param(allowed, unit), "-", "MISSING"))
                    worse += 1
                    continue
                v = f["band"][p]["median"]
                verdict = "ok"
                if v > allowed:
                    verdict = "WORSE"
                    worse += 1
                rows.append((series, name, p, fmt_param(b["median"], unit),
                             fmt_param(allowed, unit), fmt_param(v, unit), verdict))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip(), file=out)
        if i == 0:
            print("  ".join("-" * x for x in w), file=out)
    print("regress: %d parameter(s) worse than the baseline's band (slack %.0f %%)" %
          (worse, 100 * slack) if worse else
          "regress: every parameter within the baseline's band (slack %.0f %%)" % (100 * slack),
          file=out)
    return worse

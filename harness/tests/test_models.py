#!/usr/bin/env python3
"""test_models.py — nbrma-models on synthetic D results (TAP): the fits recover known model
parameters with confidence intervals that contain them, bands come from the runs, `regress`
passes the baseline's own runs and fails (exit 1, WORSE row) a slower implementation."""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "harness"))
import nbrma_models as nm  # noqa: E402

n_tests, failed = 0, 0


def ok(cond, desc, diag=""):
    global n_tests, failed
    n_tests += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_tests, desc))
    if not cond:
        failed += 1
        for line in str(diag).splitlines()[-30:]:
            print("# " + line)


def gb(benchmarks):
    return {"context": {"nbrma_mpi": "synthetic"}, "benchmarks": [
        dict({"name": n, "run_name": n, "run_type": "iteration", "iterations": 1,
              "real_time": 1.0, "time_unit": "us"}, **c) for n, c in benchmarks]}


def write_run(d, rng, put_b=1.0, noise=0.01):
    """One run of D1, D5, D7 results drawn from known models with multiplicative noise."""
    os.makedirs(d, exist_ok=True)
    j = lambda v: v * (1 + rng.uniform(-noise, noise))  # noqa: E731
    # D1: additive noise, which is what least squares' intervals assume.
    d1 = [("D1_put_latency/%s/size:%d" % (s, n),
           {"latency_us": 0.0002 * n + put_b + rng.uniform(-0.02, 0.02)})
          for s in ("vendor", "ref") for n in (8, 64, 512, 4096, 32768, 262144)]
    d5 = [("D5_fence/vendor/procs:%d" % p, {"fence_us": j(3.0 * (p.bit_length() - 1))})
          for p in (2, 4, 8)]
    d7 = [("D7_flush/vendor", {"flush_us": j(0.08), "samples": 100})]
    for name, bs in (("d1_latency.np2", d1), ("d5_fence.np2", d5), ("d7_passive.np2", d7)):
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(gb(bs), f)


def run(*args):
    p = subprocess.run([sys.executable, os.path.join(TOP, "harness", "nbrma-models")] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    # The fitting routines alone: exact data, then noisy data.
    par, rms, ci = nm.fit_linear([1, 2, 3, 4], [3, 5, 7, 9])
    ok(abs(par["a"] - 2) < 1e-12 and abs(par["b"] - 1) < 1e-12 and rms < 1e-12,
       "fit_linear recovers y = 2x + 1 exactly", par)
    par, rms, ci = nm.fit_prop([1, 2, 3], [2.9, 6.1, 9.0])
    ok(abs(par["c"] - 3.0) < 0.05 and ci["c"][0] < 3.0 < ci["c"][1],
       "fit_prop: c near 3 and the 95% interval contains 3", (par, ci))
    par, rms, ci = nm.fit_linear([1, 2], [1, 2])
    ok(ci is None, "two points: no confidence interval is claimed")
    try:
        nm.fit_linear([4, 4, 4], [1, 2, 3])
        ok(False, "one distinct x: the linear fit refuses")
    except nm.FitError as e:
        ok("two distinct x" in str(e), "one distinct x: the linear fit refuses, saying why", e)

    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base")
        for i in range(3):
            write_run(os.path.join(base, "runs", str(i)), rng)
        rc, out = run("fit", "--results", base, "--no-plots")
        ok(rc == 0, "fit on three synthetic runs exits 0", out)
        with open(os.path.join(base, "models.json")) as f:
            doc = json.load(f)
        put = doc["models"]["vendor"]["P_put"]
        ok(put["band"]["b"]["n"] == 3, "each parameter's band comes from the 3 runs", put["band"])
        ok(abs(put["band"]["a"]["median"] - 0.0002) < 0.00001
           and abs(put["band"]["b"]["median"] - 1.0) < 0.05,
           "P_put: a = 0.2 ns/B and b = 1 µs recovered", put["band"])
        ok(all(f["ci95"]["a"][0] < 0.0002 < f["ci95"]["a"][1] for f in put["fits"]),
           "every run's 95% interval for a contains the true slope (seeded noise)",
           [f["ci95"] for f in put["fits"]])
        fence = doc["models"]["vendor"]["P_fence"]["band"]["c"]
        ok(abs(fence["median"] - 3.0) < 0.1, "P_fence: c = 3 µs per log2 p recovered", fence)
        ok(abs(doc["models"]["vendor"]["P_flush"]["band"]["c"]["median"] - 0.08) < 0.002,
           "P_flush: the constant recovered")
        ok("P_put" in out and "0.16 ns/B·s + 1.00 µs" in out,
           "the table prints paper 001's Cray fit beside ours", out)

        same = os.path.join(tmp, "same")
        write_run(os.path.join(same, "runs", "0"), rng)
        rc, out = run("regress", "--baseline", os.path.join(base, "models.json"), "--results", same)
        ok(rc == 0, "regress: a fresh run of the same implementation passes", out)
        ok("every parameter within" in out, "and says so", out)

        slow = os.path.join(tmp, "slow")
        write_run(os.path.join(slow, "runs", "0"), rng, put_b=1.5)
        rc, out = run("regress", "--baseline", os.path.join(base, "models.json"), "--results", slow)
        ok(rc == 1, "regress: put's constant cost up 50% exits 1", out)
        ok(any(line.startswith("vendor") and "P_put" in line and " b " in line and "WORSE" in line
               for line in out.splitlines()), "the table marks vendor P_put b WORSE", out)
        ok(not any("P_fence" in line and "WORSE" in line for line in out.splitlines()),
           "and nothing else", out)

        rc, out = run("regress", "--baseline", os.path.join(tmp, "none.json"), "--results", slow)
        ok(rc == 2 and "cannot read" in out, "a missing baseline is an error (exit 2) naming it", out)
        rc, out = run("fit", "--results", os.path.join(tmp, "empty"), "--no-plots")
        ok(rc == 2 and "no D results" in out, "no D results: exit 2 and what to run", out)
    print("1..%d" % n_tests)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""bench-scaling.py — rmacheck's scaling benchmark (`make bench`, docs/rmacheck.md "Scaling").

Runs scaling.c (2 ranks; per iteration a put between two fences, then every int of the window
loaded and zeroed, loads and stores alternating) natively and under rmacheck, for about 10^3 to
10^7 loads and stores (10^6 with --quick), and records per point the median over --reps runs of:
the native run, the whole rmacheck run (launch, program under the runtime, analysis, report),
the program's part and the analysis' part of it, and the log bytes the ranks wrote. Native and
rmacheck runs alternate, so a load that changes during the benchmark hits both alike.

Writes OUT/rmacheck_scaling.json (Google Benchmark's layout: one entry RC_scaling/accesses:N
per point, the figures as counters; plots/plot.py draws rmacheck_scaling from it) and prints a
table. Progress on stderr. Exit status 1 when a run fails or rmacheck reports anything but
"no hazard" (the program is correct), 2 on bad arguments.

    bench-scaling.py --bin build/mpich/bin --mpicc mpicc.mpich --runner "mpiexec.mpich -n" \\
        --out results/mpich --mpi mpich --work build/mpich/rmacheck-bench [--quick] [--reps N]
"""
import argparse
import json
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STATS = re.compile(r"^rmacheck: stats: program ([0-9.]+) s, analysis ([0-9.]+) s, log (\d+) bytes,"
                   r" (\d+) lines, (\d+) events, (\d+) load/store intervals")


def log(msg):
    print("bench-scaling: " + msg, file=sys.stderr, flush=True)


def run(cmd, timeout):
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return time.monotonic() - t, p


def points(quick):
    """(iterations, ints) for about 10^3 .. 10^7 loads and stores (4 per int and iteration: two
    ranks, each loading and storing it)."""
    out = []
    for e in range(3, 7 if quick else 8):
        target = 10 ** e
        ints = 250 if target < 4 * 1024 * 4 else 1024
        out.append((max(1, round(target / (4 * ints))), ints))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="directory with rmacheck and rmacheck-cc")
    ap.add_argument("--mpicc", required=True)
    ap.add_argument("--runner", required=True, help='launcher up to the rank count, e.g. '
                    '"mpiexec.mpich -n"')
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--mpi", required=True)
    ap.add_argument("--work", required=True, help="where the two builds of scaling.c go")
    ap.add_argument("--quick", action="store_true", help="up to 10^6 accesses, one run each")
    ap.add_argument("--reps", type=int, default=0, help="runs per point (default 3; 1 with "
                    "--quick)")
    ap.add_argument("--filter", default=".", help="run only if this regex matches "
                    "'rmacheck_scaling' (make bench's BENCH)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    a = ap.parse_args()
    try:
        if not re.search(a.filter, "rmacheck_scaling"):
            return 0
    except re.error as e:
        print("bench-scaling: --filter '%s': %s" % (a.filter, e), file=sys.stderr)
        return 2
    reps = a.reps or (1 if a.quick else 3)
    if reps < 1:
        print("bench-scaling: --reps must be at least 1", file=sys.stderr)
        return 2
    rc, rcc = os.path.join(a.bin, "rmacheck"), os.path.join(a.bin, "rmacheck-cc")
    for f in (rc, rcc):
        if not os.access(f, os.X_OK):
            print("bench-scaling: no %s (build first: make MPI=%s)" % (f, a.mpi), file=sys.stderr)
            return 2
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    src = os.path.join(HERE, "scaling.c")
    native, checked = os.path.join(a.work, "scaling"), os.path.join(a.work, "scaling-rmacheck")
    for cmd in (shlex.split(a.mpicc) + ["-O2", "-g", src, "-o", native],
                [rcc, "-O2", "-g", src, "-o", checked]):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            print("bench-scaling: %s failed:\n%s" % (" ".join(cmd), p.stdout), file=sys.stderr)
            return 1
    runner = shlex.split(a.runner)
    results, failed = [], False
    for iters, ints in points(a.quick):
        args = ["--iters", str(iters), "--ints", str(ints)]
        accesses = 4 * iters * ints
        nat, tot, prog, ana, logb, lines, evs, ivs = [], [], [], [], [], [], [], []
        for k in range(reps):
            log("%d accesses (%d iterations x %d ints), run %d/%d" % (accesses, iters, ints,
                                                                      k + 1, reps))
            try:
                t, p = run(runner + ["2", native] + args, a.timeout)
                if p.returncode != 0:
                    raise RuntimeError("native run exited %d: %s" % (p.returncode,
                                                                     p.stderr.strip()[-300:]))
                nat.append(t)
                t, p = run([rc, "--stats", "--"] + runner + ["2", checked] + args, a.timeout)
                m = [STATS.match(l) for l in p.stderr.splitlines()]
                m = [x for x in m if x]
                if p.returncode != 0 or "rmacheck: no hazard" not in p.stdout or not m:
                    raise RuntimeError("rmacheck exited %d: %s %s" % (
                        p.returncode, p.stdout.strip()[-300:], p.stderr.strip()[-300:]))
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                log("FAILED: %s" % e)
                failed = True
                break
            tot.append(t)
            g = m[-1].groups()
            prog.append(float(g[0]))
            ana.append(float(g[1]))
            logb.append(int(g[2]))
            lines.append(int(g[3]))
            evs.append(int(g[4]))
            ivs.append(int(g[5]))
        if len(tot) < reps:
            continue
        med = statistics.median
        r = {"accesses": accesses, "iters": iters, "ints": ints, "reps": reps,
             "native_s": med(nat), "rmacheck_s": med(tot), "program_s": med(prog),
             "analysis_s": med(ana), "log_bytes": med(logb), "log_lines": med(lines),
             "events": med(evs), "loadstore_intervals": med(ivs)}
        r["ratio"] = r["rmacheck_s"] / r["native_s"] if r["native_s"] > 0 else 0.0
        results.append(r)
    doc = {"context": {"nbrma_mpi": a.mpi, "host_name": socket.gethostname(),
                       "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                       "load_avg_at_end": os.getloadavg()[0], "reps": reps,
                       "program": "suites/conformance/rmacheck/scaling.c, 2 ranks"},
           "benchmarks": []}
    for r in results:
        name = "RC_scaling/accesses:%d" % r["accesses"]
        b = {"name": name, "run_name": name, "run_type": "iteration", "iterations": r["reps"],
             "real_time": r["rmacheck_s"] * 1e6, "cpu_time": 0.0, "time_unit": "us"}
        b.update({k: v for k, v in r.items() if k != "reps"})
        doc["benchmarks"].append(b)
    path = os.path.join(a.out, "rmacheck_scaling.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("rmacheck scaling (%s, 2 ranks, median of %d; load average %.1f): %s"
          % (a.mpi, reps, os.getloadavg()[0], path))
    print("%10s %6s %8s %10s %10s %10s %10s %7s %12s %8s" % (
        "accesses", "iters", "native", "rmacheck", "program", "analysis", "ratio", "lines",
        "log bytes", "events"))
    for r in results:
        print("%10d %6d %7.2fs %9.2fs %9.2fs %9.2fs %9.1fx %7d %12d %8d" % (
            r["accesses"], r["iters"], r["native_s"], r["rmacheck_s"], r["program_s"],
            r["analysis_s"], r["ratio"], r["log_lines"], r["log_bytes"], r["events"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

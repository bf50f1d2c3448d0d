#!/usr/bin/env python3
"""perfgate.py — the deterministic performance gate (docs/models.md §Deterministic gate).

Costs that do not depend on machine noise, measured on one process:
  * instructions per call on the reference's fast paths (put, get, accumulate, fetch_and_op,
    compare_and_swap, put+flush's flush, lock+unlock, lock_all+unlock_all, and the nonblocking
    ilock+iunlock+2 MPI_Wait, ilock_all+iunlock_all+MPI_Waitall), counted by
    callgrind: nbrma-fastpath runs twice with different call counts N1 < N2 and each
    operation's cost is the difference of its function's inclusive cost divided by N2 - N1
    (setup and first calls cancel out);
  * instructions per (operation + MPI_Win_flush) across nodes over UCX (issue 22's fast paths:
    xnode_put_flush, xnode_get_flush, xnode_fop_flush): nbrma-fastpath xnode on two processes,
    each its own virtual node (NBRMA_RANKS_PER_NODE=1, NBRMA_NET=ucx, NBRMA_UCX_TLS=sm), rank 0
    under callgrind, N1 and N2 iterations as above. The UCP calls are counted too: they are
    part of the call, and the same UCX version's are deterministic. Needs a launcher; measured
    only when libnbrma is built with UCX (the entries read "skipped" otherwise);
  * heap bytes one window of each flavour costs under the reference, the vendor window it keeps
    underneath included (glibc mallinfo2 around MPI_Win_create / _allocate / _create_dynamic);
  * the window metadata of each flavour as MPIX_Win_get_stats counts it (paper 004's F3, exact),
    measured on 2 and on 4 processes and written as base + per_peer * P: metadata_base_FLAVOUR
    and metadata_per_peer_FLAVOUR (P a power of two: the node-shared control block is rounded
    to whole cache lines, so odd P adds padding). Needs a launcher.

  perfgate.py measure  --bin FASTPATH [--out FILE] [--runner 'mpiexec -n']        print/write the measurement (JSON)
  perfgate.py baseline --bin FASTPATH --mpi MPI --out FILE write a baseline with tolerances
  perfgate.py check    --bin FASTPATH --baseline FILE      measure, compare, table; exit 1 if worse
  perfgate.py compare  BASELINE MEASURED                   compare two files (no measuring)

A measured value fails when it exceeds baseline + max(abs_tol, rel_tol * baseline). A value
below baseline - tolerance passes and is flagged "better: regenerate the baseline".
Exit status: 0 within tolerance, 1 worse, 2 usage or measurement error.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

N1, N2 = 200, 1200

# metric -> (functions whose inclusive costs add up to one call, calls per iteration, unit)
OPS = {
    "put": (("MPI_Put",), 2, "instr"),  # N plain puts plus N puts before a flush
    "get": (("MPI_Get",), 1, "instr"),
    "accumulate": (("MPI_Accumulate",), 1, "instr"),
    "fetch_and_op": (("MPI_Fetch_and_op",), 1, "instr"),
    "compare_and_swap": (("MPI_Compare_and_swap",), 1, "instr"),
    "flush": (("MPI_Win_flush",), 1, "instr"),
    "lock_unlock": (("MPI_Win_lock", "MPI_Win_unlock"), 1, "instr"),
    "lock_all_unlock_all": (("MPI_Win_lock_all", "MPI_Win_unlock_all"), 1, "instr"),
    # the same epochs nonblocking, their requests waited for (issue 24: about the blocking cost)
    "ilock_iunlock_wait": (("MPIX_Win_ilock", "MPIX_Win_iunlock", "MPI_Wait"), 1, "instr"),
    "ilock_all_iunlock_all_waitall": (("MPIX_Win_ilock_all", "MPIX_Win_iunlock_all",
                                       "MPI_Waitall"), 1, "instr"),
}
FLAVOURS = ("create", "allocate", "dynamic")
# xnode metric -> nbrma-fastpath xnode OP, and the entry points one iteration calls once each
XNODE = {"xnode_put_flush": ("put", ("MPI_Put", "MPI_Win_flush")),
         "xnode_get_flush": ("get", ("MPI_Get", "MPI_Win_flush")),
         "xnode_fop_flush": ("fop", ("MPI_Fetch_and_op", "MPI_Win_flush"))}
XNODE_ENV = {"NBRMA_IMPL": "ref", "NBRMA_RANKS_PER_NODE": "1", "NBRMA_NET": "ucx",
             "NBRMA_UCX_TLS": "sm"}
# Default tolerances: a few instructions or 5 %, whichever is larger; heap bytes 64 B or 5 %.
TOL = {"instr": (5, 0.05), "bytes": (64, 0.05), "meta": (0, 0.0)}


class GateError(Exception):
    pass


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        raise GateError("'%s' failed (exit %d):\n%s" % (" ".join(cmd), p.returncode,
                                                        (p.stdout + p.stderr)[-2000:]))
    return p.stdout


def inclusive_costs(cgfile, lib):
    """{function: inclusive Ir} for the functions of object `lib` in a callgrind output file.
    Read from the file itself: a function's own cost lines plus the inclusive cost of each call
    it makes (inlined code, which callgrind_annotate lists under the header's file name, stays
    with the function that holds it)."""
    names = {"ob": {}, "fn": {}}
    costs, cur_ob, cur_fn = {}, "", ""

    def name(kind, rest):
        m = re.match(r"\((\d+)\)\s*(.*)", rest)
        if not m:
            return rest.strip()
        if m.group(2):
            names[kind][m.group(1)] = m.group(2).strip()
        return names[kind].get(m.group(1), "")

    try:
        f = open(cgfile)
    except OSError as e:
        raise GateError("cannot read callgrind output %s: %s" % (cgfile, e))
    with f:
        for line in f:
            if line[0].isdigit() or line[0] in "+-*":
                if cur_fn and os.path.basename(cur_ob).startswith(lib):
                    parts = line.split()
                    if len(parts) >= 2:  # a self cost, or the inclusive cost of a call
                        costs[cur_fn] = costs.get(cur_fn, 0) + int(parts[1])
                continue
            key, _, rest = line.partition("=")
            if key == "ob":
                cur_ob = name("ob", rest)
            elif key == "fn":
                cur_fn = name("fn", rest)
            elif key in ("cob", "cfn"):
                name(key[1:], rest)  # may define a compressed name used later
    return costs


def run_all(procs, env):
    """Run the (command, callgrind file) pairs at once (the runs mostly wait on MPI start-up
    under valgrind); each must succeed. Returns the pairs. Each launch gets a TMPDIR of its own:
    two Open MPI mpiruns started together race to create their shared session directory
    (/tmp/ompi.<host>.<uid>: "mkdir ... File exists", orte_session_dir failed; seen once in
    make baseline MPI=openmpi, 2026-12-03)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = []
        for i, (cmd, cg) in enumerate(procs):
            own = os.path.join(tmp, str(i))
            os.mkdir(own)
            started.append((cmd, cg, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                      stderr=subprocess.STDOUT, text=True,
                                                      env=dict(env, TMPDIR=own))))
        for cmd, cg, p in started:
            out = p.communicate()[0]
            if p.returncode != 0:
                raise GateError("'%s' failed (exit %d):\n%s" % (" ".join(cmd), p.returncode,
                                                                out[-2000:]))
    return procs


def measure(fastpath, runner):
    if not os.access(fastpath, os.X_OK):
        raise GateError("no executable %s: build it first (make MPI=...)" % fastpath)
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            raise GateError("%s is not installed (make deps installs valgrind)" % tool)
    env = dict(os.environ, NBRMA_IMPL="ref")
    launch = shlex.split(runner) + ["1"] if runner else []
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Both counts at once: the runs mostly wait on MPI start-up under valgrind.
        procs = []
        for n in (N1, N2):
            cg = os.path.join(tmp, "cg.%d" % n)
            procs.append((launch + ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg,
                                    fastpath, "ops", str(n)], cg))
        costs = [inclusive_costs(cg, "libnbrma") for _, cg in run_all(procs, env)]
        for metric, (fns, per, unit) in OPS.items():
            missing = [f for f in fns if f not in costs[0] or f not in costs[1]]
            if missing:
                raise GateError("callgrind shows no %s in libnbrma (is the reference serving "
                                "the window?)" % ", ".join(missing))
            d = sum(costs[1][f] - costs[0][f] for f in fns)
            res[metric] = {"value": round(d / ((N2 - N1) * per), 1), "unit": unit}
    if not runner:
        raise GateError("the per-peer window metadata needs a launcher taking a rank count "
                        "(--runner 'mpiexec -n', or TEST_RUNNER)")
    meta, stats = {}, {}
    for np_ in (1, 2, 4):
        # heap bytes from the one-process run (windows over MPI_COMM_SELF); metadata from 2 and 4
        cmd = shlex.split(runner) + [str(np_), fastpath, "meta"]
        for line in run(cmd, dict(os.environ)).splitlines():
            f = line.split()
            try:
                if len(f) == 2 and f[0].startswith("ref_") and np_ == 1:
                    meta[f[0]] = int(f[1])
                elif len(f) == 3 and f[0].startswith("meta_"):
                    stats[(f[0][5:], int(f[1]))] = int(f[2])
            except ValueError:
                raise GateError("'%s' printed a malformed line: %r" % (" ".join(cmd), line))
    for f in FLAVOURS:
        if "ref_" + f not in meta:
            raise GateError("nbrma-fastpath meta printed no %s window" % f)
        res["window_%s" % f] = {"value": meta["ref_" + f], "unit": "bytes"}
        for np_ in (2, 4):
            if (f, np_) not in stats:
                raise GateError("nbrma-fastpath meta on %d processes printed no metadata of a "
                                "%s window" % (np_, f))
        per = (stats[(f, 4)] - stats[(f, 2)]) / 2.0
        res["metadata_base_%s" % f] = {"value": stats[(f, 2)] - 2 * per, "unit": "meta"}
        res["metadata_per_peer_%s" % f] = {"value": per, "unit": "meta"}
    res.update(measure_xnode(fastpath, runner))
    return res


def has_ucx(fastpath):
    """Whether the libnbrma that fastpath runs on links UCX (ldd lists libucp)."""
    p = subprocess.run(["ldd", fastpath], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p.returncode == 0 and "libucp.so" in p.stdout


def measure_xnode(fastpath, runner):
    """The XNODE metrics: rank 0 of nbrma-fastpath xnode under callgrind, N1 and N2 iterations."""
    if not runner:
        raise GateError("the across-node fast paths need a launcher taking a rank count "
                        "(--runner 'mpiexec -n', or TEST_RUNNER)")
    res = {}
    if not has_ucx(fastpath):
        for metric in XNODE:
            res[metric] = {"value": None, "unit": "instr", "skip": "libnbrma built without UCX"}
        return res
    launch = shlex.split(runner)
    env = dict(os.environ, **XNODE_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        for metric, (op, fns) in XNODE.items():
            procs = []
            for n in (N1, N2):  # both counts at once, as above
                cg = os.path.join(tmp, "cg.%s.%d" % (op, n))
                # MPMD: rank 0 under valgrind, rank 1 not; the launcher's rank-count option
                # (its last word: -n, -np) again for the second part
                procs.append((launch + ["1", "valgrind", "--tool=callgrind",
                                        "--callgrind-out-file=" + cg, fastpath, "xnode", op,
                                        str(n), ":", launch[-1], "1", fastpath, "xnode", op,
                                        str(n)], cg))
            costs = []
            for cmd, cg in run_all(procs, env):
                costs.append(inclusive_costs(cg, "libnbrma"))
                ucp = inclusive_costs(cg, "libucp")
                if not any(k.startswith("ucp_") for k in ucp):
                    raise GateError("rank 0 of '%s' made no UCP call: the pair did not go over "
                                    "UCX (NBRMA_NET=ucx)" % " ".join(cmd))
            missing = [f for f in fns if f not in costs[0] or f not in costs[1]]
            if missing:
                raise GateError("callgrind shows no %s in libnbrma across nodes"
                                % ", ".join(missing))
            d = sum(costs[1][f] - costs[0][f] for f in fns)
            res[metric] = {"value": round(d / (N2 - N1), 1), "unit": "instr"}
    return res


def with_tolerances(measured, mpi, command):
    entries = {}
    for k, e in measured.items():
        if e.get("skip"):  # not measured on this build: no baseline value for it
            continue
        a, r = TOL[e["unit"]]
        entries[k] = {"value": e["value"], "unit": e["unit"], "abs_tol": a, "rel_tol": r}
    return {"mpi": mpi, "generated": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"), "regenerate": command,
            "valgrind": run(["valgrind", "--version"]).strip() if shutil.which("valgrind") else "",
            "entries": entries}


UNITS = {"instr": "instructions per call", "bytes": "heap bytes per window (ref + its vendor window)",
         "meta": "window metadata bytes in one process (MPIX_Win_get_stats): base + per_peer * P"}


def compare(baseline, measured, out=sys.stdout):
    """Print the table; return the number of entries worse than their tolerance."""
    rows, worse = [], 0
    for k, b in baseline["entries"].items():
        tol = max(b.get("abs_tol", 0), b.get("rel_tol", 0) * abs(b["value"]))
        m = measured.get(k)
        if m is not None and m.get("skip"):
            rows.append((k, b["unit"], b["value"], "-", "-", "-", "skipped: " + m["skip"]))
            continue
        if m is None:
            rows.append((k, b["unit"], b["value"], b["value"] + tol, "-", "-", "MISSING"))
            worse += 1
            continue
        v = m["value"]
        change = "%+.1f%%" % (100.0 * (v - b["value"]) / b["value"]) if b["value"] else "%+g" % v
        if v > b["value"] + tol:
            verdict = "WORSE"
            worse += 1
        elif v < b["value"] - tol:
            verdict = "better: regenerate the baseline"
        else:
            verdict = "ok"
        rows.append((k, b["unit"], b["value"], round(b["value"] + tol, 1), v, change, verdict))
    for k in measured:
        if k not in baseline["entries"] and not measured[k].get("skip"):
            rows.append((k, measured[k]["unit"], "-", "-", measured[k]["value"], "-",
                         "new: not in the baseline"))
    head = ("metric", "unit", "baseline", "allowed", "measured", "change", "verdict")
    w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    fmt = "  ".join("%%-%ds" % x if i in (0, 1, 6) else "%%%ds" % x for i, x in enumerate(w))
    print(fmt % head, file=out)
    for r in rows:
        print(fmt % tuple(str(c) for c in r), file=out)
    print("units: " + "; ".join("%s = %s" % kv for kv in UNITS.items()), file=out)
    if worse:
        print("perfgate: %d metric(s) worse than the baseline %s allows (%s)." % (
            worse, baseline.get("mpi", ""), baseline.get("regenerate", "make baseline")), file=out)
        print("perfgate: if the cost is intended, regenerate and commit the baseline: %s" %
              baseline.get("regenerate", "make baseline"), file=out)
    else:
        print("perfgate: all %d metrics within tolerance" % len(baseline["entries"]), file=out)
    return worse


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise GateError("cannot read %s: %s" % (path, e))
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("measure", "baseline", "check"):
        s = sub.add_parser(name)
        s.add_argument("--bin", required=True, help="the nbrma-fastpath executable")
        s.add_argument("--out")
        s.add_argument("--mpi", default="")
        s.add_argument("--baseline")
        s.add_argument("--runner", default=os.environ.get("TEST_RUNNER", ""),
                       help="MPI launcher taking a rank count, e.g. 'mpiexec.mpich -n' "
                       "(default $TEST_RUNNER; empty: singleton start)")
    s = sub.add_parser("compare")
    s.add_argument("baseline_file")
    s.add_argument("measured_file")
    o = ap.parse_args()
    try:
        if o.cmd == "compare":
            b, m = load(o.baseline_file), load(o.measured_file)
            m = m.get("entries", m)
            return 1 if compare(b, m) else 0
        measured = measure(o.bin, o.runner)
        if o.cmd == "measure":
            text = json.dumps(measured, indent=1, sort_keys=True) + "\n"
        elif o.cmd == "baseline":
            if not o.mpi:
                raise GateError("baseline needs --mpi")
            text = json.dumps(with_tolerances(measured, o.mpi, "make baseline MPI=%s" % o.mpi),
                              indent=1) + "\n"
        else:
            if not o.baseline:
                raise GateError("check needs --baseline FILE")
            b = load(o.baseline)
            return 1 if compare(b, measured) else 0
        if o.out:
            with open(o.out, "w") as f:
                f.write(text)
            print("perfgate: wrote %s" % o.out)
        else:
            sys.stdout.write(text)
        return 0
    except GateError as e:
        print("perfgate: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""plot.py — draw the nbrma figures from benchmark JSON: plot.py --results results/mpich
Reads DIR/*.json (and, for the per-MPI comparisons, the sibling directories DIR/../*/), writes one
whitespace-separated table per figure to DIR/plots/data/ and runs gnuplot on plots/<figure>.gp
to produce DIR/plots/<figure>.png and .pdf. Layout and figures: docs/plots.md.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))  # repo and share/nbrma alike
import nbrma_results  # noqa: E402

SERIES_ORDER = ("vendor", "ref", "ref-nb")


class Failure(Exception):
    pass


# ---- loading ---------------------------------------------------------------------------------

def load_files(directory, strict, warn):
    """Error-free results of DIR/*.json. A file that cannot be read is fatal when strict,
    otherwise (sibling directories) skipped with a warning."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        if os.path.basename(path) in nbrma_results.NOT_RESULTS:
            continue
        try:
            out.extend(r for r in nbrma_results.load_file(path) if r.error is None)
        except nbrma_results.ResultsError as e:
            if strict:
                raise Failure(str(e))
            warn("skipping %s" % e)
    return out


def dedup(results):
    """Keep the last result per (MPI, name): a rerun in a later file replaces the earlier one."""
    return list({(r.mpi, r.name): r for r in results}.values())


def load_all(directory, warn):
    """(own results, own plus sibling results). A sibling whose MPI label is already taken is
    relabelled "mpi(dirname)" so its bars stay distinct."""
    own = dedup(load_files(directory, True, warn))
    every, taken = list(own), {r.mpi for r in own}
    parent = os.path.dirname(os.path.abspath(directory))
    for d in sorted(glob.glob(os.path.join(parent, "*", ""))):
        if os.path.samefile(d, directory):
            continue
        rs = dedup(load_files(d, False, warn))
        clash = {r.mpi for r in rs} & taken
        for r in rs:
            if r.mpi in clash:
                r.mpi = "%s(%s)" % (r.mpi, os.path.basename(os.path.normpath(d)))
        taken |= {r.mpi for r in rs}
        every += rs
    return own, every


def load_many(directories, warn):
    """--compare: the results of every directory (one MPI each), all of them "own"."""
    every, taken = [], set()
    for d in directories:
        rs = dedup(load_files(d, False, warn))
        clash = {r.mpi for r in rs} & taken
        for r in rs:
            if r.mpi in clash:
                r.mpi = "%s(%s)" % (r.mpi, os.path.basename(os.path.normpath(d)))
        taken |= {r.mpi for r in rs}
        every += rs
    return every, every


# ---- tables ----------------------------------------------------------------------------------

def series_key(s):
    return (SERIES_ORDER.index(s) if s in SERIES_ORDER else len(SERIES_ORDER), s or "")


def pick(results, benches):
    return [r for r in results if r.bench in benches]


def groups(results, with_mpi):
    """The (mpi, series) pairs present, MPIs alphabetical, series in SERIES_ORDER."""
    keys = {(r.mpi, r.series or "-") for r in results}
    return sorted(keys, key=lambda k: (k[0], series_key(k[1])) if with_mpi else series_key(k[1]))


def glabel(g, with_mpi):
    return "%s %s" % g if with_mpi else g[1]


def wide(results, row, col, value, cols):
    """Table {row key: {col key: number}} of the results; rows that end up empty are dropped."""
    t = {}
    for r in results:
        v, rk = value(r), row(r)
        if v is not None and rk is not None and col(r) in cols:
            t.setdefault(rk, {})[col(r)] = v
    return t


def counter(name):
    return lambda r: r.counters.get(name)


def table(comment, head, t, cols, rowlabel=None):
    """(text, number of columns) of a data file: '#' comment lines, a header row (gnuplot
    columnheader), one row per key of t in sorted order; NaN marks a missing value (gnuplot
    leaves no bar and breaks the line there)."""
    q = lambda s: '"%s"' % str(s).replace('"', "'")
    lines = ["# " + c for c in comment]
    empty = {i for i, c in enumerate(cols, 1) if not any(c in row for row in t.values())}
    lines.append(" ".join(q(h + (" (no data)" if i in empty else "")) for i, h in enumerate(head)))
    for rk in sorted(t):
        first = q(rowlabel(rk)) if rowlabel else str(rk)
        lines.append(" ".join([first] + ["%.6g" % t[rk][c] if c in t[rk] else "NaN" for c in cols]))
    return "\n".join(lines) + "\n", len(head)


def param_label(params, names):
    return " ".join("%s=%s" % (k, params[k]) for k in names if k in params)


# ---- figures: each returns {data file: (text, columns)} or None -----------------------------

def lines(rs, ops, x, value, with_mpi):
    """Line table: column 1 = parameter x, then one column per (MPI x) series x op, op varying
    fastest so that the .gp scripts pair colour (series) with dash and point shape (op)."""
    cols = [g + (b,) for g in groups(rs, with_mpi) for b in ops]
    t = wide(rs, lambda r: r.params.get(x), lambda r: (r.mpi, r.series or "-", r.bench),
             value, cols)
    return [x] + ["%s %s" % (glabel(c[:2], with_mpi), ops[c[2]]) for c in cols], t, cols


def fig_d1(own, every):
    rs = pick(own, {"D1_put_latency", "D1_get_latency"})
    head, t, cols = lines(rs, {"D1_put_latency": "put", "D1_get_latency": "get"}, "size",
                          counter("latency_us"), len({r.mpi for r in rs}) > 1)
    comment = ["median latency_us (µs) of D1_put_latency, D1_get_latency",
               "column 1: size (bytes); then a put and a get column per series"]
    return t and {"d1_latency.dat": table(comment, head, t, cols)}


def fig_d2(own, every):
    rs = pick(own, {"D2_put_overlap", "D2_get_overlap"})
    head, t, cols = lines(rs, {"D2_put_overlap": "put", "D2_get_overlap": "get"}, "size",
                          counter("overlap_ratio"), len({r.mpi for r in rs}) > 1)
    comment = ["median overlap_ratio (0..1) of D2_put_overlap, D2_get_overlap",
               "column 1: size (bytes); then a put and a get column per series"]
    return t and {"d2_overlap.dat": table(comment, head, t, cols)}


def per_mpi_bars(every, benches, row, value, rowname):
    """Rows = bar groups, one column per MPI x series; also the header."""
    rs = pick(every, benches)
    cols = groups(rs, True)
    t = wide(rs, row, lambda r: (r.mpi, r.series or "-"), value, cols)
    return [rowname] + [glabel(c, True) for c in cols], t, cols


def fig_d3(own, every):
    if not pick(own, {"D3_put_rate"}):
        return None
    head, t, cols = per_mpi_bars(
        every, {"D3_put_rate"}, lambda r: (r.params.get("size", 0), r.params.get("batch", 0),
                                           param_label(r.params, ("size", "batch"))),
        counter("per_put_us"), "case")
    comment = ["median per_put_us (µs) of D3_put_rate, per MPI x series",
               "column 1: size and batch; then one column per MPI and series"]
    return {"d3_msgrate.dat": table(comment, head, t, cols, lambda k: k[-1])}


def fig_d4(own, every):
    files = {}
    acc = {"D4_acc_sum": "SUM", "D4_acc_min": "MIN"}
    if pick(own, acc):
        head, t, cols = lines(pick(every, acc), acc, "size", counter("latency_us"), True)
        comment = ["median latency_us (µs) of D4_acc_sum, D4_acc_min, per MPI x series",
                   "column 1: size (bytes); then a SUM and a MIN column per MPI and series"]
        files["d4_atomics.acc.dat"] = table(comment, head, t, cols)
    rmw = {"D4_fetch_and_op": "fetch_and_op", "D4_cas": "compare_and_swap"}
    if pick(own, rmw):
        order = list(rmw)
        head, t, cols = per_mpi_bars(every, rmw, lambda r: order.index(r.bench),
                                     counter("latency_us"), "op")
        comment = ["median latency_us (µs) of D4_fetch_and_op, D4_cas, per MPI x series",
                   "column 1: operation; then one column per MPI and series"]
        files["d4_atomics.rmw.dat"] = table(comment, head, t, cols, lambda k: rmw[order[k]])
    return files


def fig_d5(own, every):
    if not pick(own, {"D5_fence"}):
        return None
    head, t, cols = per_mpi_bars(every, {"D5_fence"}, lambda r: r.params.get("procs"),
                                 counter("fence_us"), "procs")
    comment = ["median fence_us (µs) of D5_fence, per MPI x series",
               "column 1: procs; then one column per MPI and series"]
    return {"d5_fence.dat": table(comment, head, t, cols)}


def fig_d6(own, every):
    rs = pick(own, {"D6_pscw_ring"})
    multi = len({r.mpi for r in rs}) > 1
    parts = ["post", "start", "complete", "wait"]
    t = {}
    for r in rs:
        s = r.series or "-"
        label = "%s %s" % (param_label(r.params, ("procs", "k")), glabel((r.mpi, s), multi))
        key = (r.params.get("procs", 0), r.params.get("k", 0), r.mpi, series_key(s), label)
        vals = {p: r.counters[p + "_us"] for p in parts if p + "_us" in r.counters}
        if vals:
            t[key] = vals
    if not t:
        return None
    comment = ["median post_us, start_us, complete_us, wait_us (µs) of D6_pscw_ring",
               "column 1: procs, k (ring neighbours) and series; then one column per call"]
    return {"d6_pscw.dat": table(comment, ["case"] + parts, t, parts, lambda k: k[-1])}


D7_CASES = [("D7_lock_exclusive", "epoch_us", "lock_exclusive epoch"),
            ("D7_lock_shared", "epoch_us", "lock_shared epoch"),
            ("D7_lock_all", "epoch_us", "lock_all epoch"),
            ("D7_flush", "flush_us", "flush"),
            ("D7_sync", "sync_us", "sync"),
            ("D7_lock_put_unlock", "epoch_us", "lock+put+unlock epoch")]


def fig_d7(own, every):
    benches = [c[0] for c in D7_CASES]
    if not pick(own, benches):
        return None
    head, t, cols = per_mpi_bars(every, benches, lambda r: benches.index(r.bench),
                                 lambda r: r.counters.get(D7_CASES[benches.index(r.bench)][1]),
                                 "case")
    comment = ["median µs per D7 case (epoch_us, flush_us or sync_us), per MPI x series",
               "column 1: case; then one column per MPI and series"]
    return {"d7_passive.dat": table(comment, head, t, cols, lambda k: D7_CASES[k][2])}


# ---- A and B: bars of the measured quantities, one bar per series (A) or flag state (B), as
# paper 000 Figs. 2-11. Rows: quantity (x size, x delay when a run has several).

AB_FIGURES = {
    "a1_late_post": ("A1_late_post", [("epoch_us", "access epoch"),
                                      ("subsequent_us", "subsequent activity"),
                                      ("cumulative_us", "cumulative")]),
    "a2_early_transfer": ("A2_early_transfer", [("put_call_us", "inside MPI_Put"),
                                                ("start_call_us", "inside start"),
                                                ("epoch_us", "access epoch")]),
    "a3_early_wait": ("A3_early_wait", [("idle_us", "target idle in synchronization"),
                                        ("target_epoch_us", "target epoch"),
                                        ("cumulative_us", "target epoch + work")]),
    "a4_late_complete": ("A4_late_complete", [("target_epoch_us", "target epoch")]),
    "a5_early_fence": ("A5_early_fence", [("cumulative_us", "target epoch + work")]),
    "a6_wait_at_fence": ("A6_wait_at_fence", [("target_epoch_us", "target epoch"),
                                              ("origin_epoch_us", "origin epoch")]),
    "a7_late_unlock": ("A7_late_unlock", [("o0_epoch_us", "first lock (O0)"),
                                          ("o1_epoch_us", "second lock (O1)")]),
    "b1_aaar_gats": ("B1_aaar_gats", [("t1_epoch_us", "T1 epoch"),
                                      ("cumulative_us", "O cumulative"),
                                      ("t0_epoch_us", "T0 epoch")]),
    "b2_aaar_lock": ("B2_aaar_lock", [("cumulative_us", "O1 cumulative"),
                                      ("second_epoch_us", "O1 second epoch"),
                                      ("o0_epoch_us", "O0 epoch")]),
    "b3_aaer": ("B3_aaer", [("p1_epoch_us", "P1 epoch"), ("p2_exposure_us", "P2 exposure"),
                            ("p2_access_us", "P2 access"), ("cumulative_us", "P2 cumulative")]),
    "b4_eaer": ("B4_eaer", [("o1_epoch_us", "O1 epoch"), ("o0_epoch_us", "O0 epoch"),
                            ("cumulative_us", "T cumulative")]),
    "b5_eaar": ("B5_eaar", [("p1_epoch_us", "P1 epoch"), ("p2_access_us", "P2 access"),
                            ("p2_exposure_us", "P2 exposure"), ("cumulative_us", "P2 cumulative")]),
}


def human_size(n):
    for unit, f in (("M", 1 << 20), ("K", 1 << 10)):
        if isinstance(n, int) and n >= f and n % f == 0:
            return "%d%s" % (n // f, unit)
    return str(n)


A3_VARIANTS = ("wait", "test", "iwait")


def ab_column(r, multi=False):
    """Bar of a result: its series (and A3's variant), or for §B the reorder flag state; with
    several MPIs (make compare), the MPI first."""
    m = (r.mpi,) if multi else ("",)
    lead = r.mpi + " " if multi else ""
    if "flag" in r.params:
        return m + (1, r.params["flag"], 0, lead + "flag %s" % ("on" if r.params["flag"] else "off"))
    v = r.params.get("variant")
    vk = A3_VARIANTS.index(v) if v in A3_VARIANTS else len(A3_VARIANTS)
    return m + (0, series_key(r.series or "-"), vk, lead + (r.series or "-") + (" " + v if v else ""))


def victim_label(r, quantities):
    """What the injected delay must not reach in this experiment: the quantity whose no-delay
    twin the run measured (<victim>_nodelay_us)."""
    for k in r.counters:
        if k.endswith("_nodelay_us"):
            q = k[:-len("_nodelay_us")] + "_us"
            return dict(quantities).get(q, q[:-3].replace("_", " "))
    return None


MS_FROM_US = 1e5  # values reaching 10^5 µs are drawn in ms


def fig_ab(name):
    bench, quantities = AB_FIGURES[name]

    def build(own, every):
        rs = pick(own, {bench})
        if not rs:
            return None
        multi = len({r.mpi for r in rs}) > 1
        sizes = sorted({r.params.get("size", 0) for r in rs})
        dkey = "delay_us" if any("delay_us" in r.params for r in rs) else "work_us"
        delays = sorted({r.params.get(dkey, 0) for r in rs})
        cols = sorted({ab_column(r, multi) for r in rs})
        victim = next((v for v in (victim_label(r, quantities) for r in rs) if v), None)
        rows = list(quantities)
        if victim:  # how much of D reached the victim (paper 000's question), beside the times
            rows.append(("propagated_delay_us", "propagated delay (to %s)" % victim))
        t = {}
        for r in rs:
            for qi, (counter, label) in enumerate(rows):
                if counter not in r.counters:
                    continue
                size, delay = r.params.get("size", 0), r.params.get(dkey, 0)
                text = label
                if len(sizes) > 1:
                    text += " %s" % human_size(size)
                if len(delays) > 1:
                    text += " D=%g" % delay
                t.setdefault((qi, size, delay, text), {})[ab_column(r, multi)] = r.counters[counter]
        if not t:
            return None
        top = max(abs(v) for row in t.values() for v in row.values())
        unit, f = ("ms", 1e-3) if top >= MS_FROM_US else ("µs", 1.0)
        if f != 1.0:
            t = {k: {c: v * f for c, v in row.items()} for k, row in t.items()}
        comment = ["median %s of %s (%s): %s" % (unit, bench, dkey.replace("_us", " µs") + " " +
                   ",".join("%g" % d for d in delays),
                   ", ".join(c for c, _ in rows)),
                   "column 1: quantity (and size); then one column per %s" %
                   ("reorder flag state" if cols[0][1] else "series")]
        if victim:
            comment.append("propagated delay = the victim's time with the delay D minus the same "
                           "without it, in the same run (negative: noise)")
        out = {name + ".dat": table(comment, ["quantity"] + [c[-1] for c in cols], t, cols,
                                    lambda k: k[-1]),
               "_vars": {"unit": unit}}
        if len(delays) == 1 and dkey == "delay_us" and delays[0]:
            out["_vars"]["delay"] = delays[0] * f
        low = min(v for row in t.values() for v in row.values())
        if low < 0:
            out["_vars"]["ymin"] = 1.15 * low
        return out
    return build


# ---- R: costs of the reference itself (docs/experiments-r.md) -------------------------------

def fig_r1(own, every):
    rs = pick(own, {"R1_deferred_epochs"})
    if not rs:
        return None
    parts = [("queue_us", "queue"), ("drain_us", "drain"), ("total_us", "total")]
    multi = len({r.mpi for r in rs}) > 1
    cols = [(r_mpi, c) for r_mpi in sorted({r.mpi for r in rs}) for c, _ in parts]
    t = {}
    for r in rs:
        for c, _ in parts:
            if c in r.counters and "epochs" in r.params:
                t.setdefault(r.params["epochs"], {})[(r.mpi, c)] = r.counters[c]
    head = ["epochs"] + ["%s%s" % (m + " " if multi else "", dict(parts)[c]) for m, c in cols]
    comment = ["median µs per deferred epoch of R1_deferred_epochs (queue, drain, total)",
               "column 1: epochs queued (K); then queue, drain and total per MPI"]
    return {"r1_deferred.dat": table(comment, head, t, cols)}


R2_SHAPES = ["create", "allocate", "allocate_unequal", "allocate_shared", "dynamic"]


def fig_r2(own, every):
    benches = ["R2_window_" + s for s in R2_SHAPES]
    if not pick(own, benches):
        return None
    head, t, cols = per_mpi_bars(
        every, benches, lambda r: (benches.index(r.bench), r.params.get("procs", 0)),
        counter("window_us"), "shape")
    comment = ["median window_us (µs: create + free) of R2_window_*, per MPI x series",
               "column 1: shape and process count; then one column per MPI and series"]
    return {"r2_windows.dat": table(comment, head, t, cols,
                                    lambda k: "%s p=%s" % (R2_SHAPES[k[0]], k[1]))}


R3_BENCHES = ["R3_transpose_get", "R3_transpose_put", "R3_vector1_get", "R3_vector1_put"]


def fig_r3(own, every):
    if not pick(own, R3_BENCHES):
        return None
    head, t, cols = per_mpi_bars(
        every, R3_BENCHES,
        lambda r: (R3_BENCHES.index(r.bench), r.params.get("peer", "?"), r.params.get("n", 0)),
        counter("xfer_us"), "transfer")
    comment = ["median xfer_us (µs per lock + transfer + unlock) of R3_*, per MPI x series",
               "column 1: pattern, direction, peer (same node / other node) and N; then one "
               "column per MPI and series"]
    return {"r3_noncontig.dat": table(
        comment, head, t, cols,
        lambda k: "%s %s n=%s" % (R3_BENCHES[k[0]][3:].replace("_", " "),
                                  str(k[1]).replace("_node", ""), k[2]))}


# ---- G: application kernels (docs/apps.md) -------------------------------------------------

def app_bars(benches, value, rowparams, comment):
    """Bars per MPI x series (ref-nb+A_A_A_R and other series names after ref-nb), one bar group
    per combination of the row parameters (e.g. procs): the common shape of the G figures."""
    def build(own, every):
        if not pick(own, benches):
            return None
        head, t, cols = per_mpi_bars(
            every, benches,
            lambda r: tuple(r.params.get(k, 0) for k in rowparams) + (
                (r.bench if len(benches) > 1 else ""), param_label(r.params, rowparams)),
            counter(value), "case")
        return table(comment, head, t, cols,
                     lambda k: ("%s %s" % (k[-2].split("_", 1)[-1], k[-1])).strip())
    return build


def fig_g1(own, every):
    got = app_bars({"G1_transactions"}, "transactions_per_s", ("procs",),
                   ["median transactions_per_s of G1_transactions, per MPI x series",
                    "column 1: process count; then one column per MPI and series"])(own, every)
    return {"g1_transactions.dat": got} if got else None


def fig_g2(own, every):
    files = {}
    for ctr, stem, what in (("lu_us", "time", "median lu_us (µs per factorization)"),
                            ("mpi_share", "share", "median mpi_us / lu_us (share of time in MPI)")):
        got = app_bars({"G2_lu"}, ctr, ("sync", "procs", "m"),
                       ["%s of G2_lu, per MPI x series" % what,
                        "column 1: synchronization, process count, matrix order; then one column "
                        "per MPI and series"])(own, every)
        if got:
            files["g2_lu.%s.dat" % stem] = got
    return files or None


def fig_g3(own, every):
    got = app_bars({"G3_radix"}, "keys_per_s", ("procs", "keys", "bits"),
                   ["median keys_per_s of G3_radix (sorted keys per second, all ranks), per MPI "
                    "x series", "column 1: process count, keys per rank, bits per digit; then "
                    "one column per MPI and series"])(own, every)
    return {"g3_radix.dat": got} if got else None


def fig_g4(own, every):
    got = app_bars({"G4_hashtable"}, "inserts_per_s", ("impl", "procs", "inserts"),
                   ["median inserts_per_s of G4_hashtable (all ranks), per MPI x series",
                    "column 1: implementation (rma, am = point-to-point active messages), "
                    "process count, inserts per rank; then one column per MPI and series"])(own, every)
    return {"g4_hashtable.dat": got} if got else None


def fig_g5(own, every):
    got = app_bars({"G5_dsde"}, "exchange_us", ("proto", "procs", "k"),
                   ["median exchange_us (µs per exchange) of G5_dsde, per MPI x series",
                    "column 1: protocol, process count, k; then one column per MPI and series"
                    " (point-to-point protocols: vendor only)"])(own, every)
    return {"g5_dsde.dat": got} if got else None


def fig_e_ghost(own, every):
    """E: ratio one-sided / p2p vs size, one file per rank count (e_ghost.pN.dat); a column per
    (MPI x) series x version, version varying fastest (colour = series, dash = version)."""
    rs = pick(own, {"E1_ghost"})
    versions = ("fence", "pscw", "lock")
    with_mpi = len({r.mpi for r in rs}) > 1
    out = {}
    for p in sorted({r.params.get("procs") for r in rs if r.params.get("procs")}):
        prs = [r for r in rs if r.params.get("procs") == p]
        cols = [g + (v,) for g in groups(prs, with_mpi) for v in versions]
        t = wide(prs, lambda r: r.params.get("size"),
                 lambda r: (r.mpi, r.series or "-", r.params.get("version")),
                 counter("ratio"), cols)
        head = ["size"] + ["%s %s" % (glabel(c[:2], with_mpi), c[2]) for c in cols]
        comment = ["E1_ghost on %d ranks: ratio = onesided_us / p2p_us (medians) vs size" % p,
                   "column 1: size (bytes) per neighbour; then fence, pscw, lock per series"]
        out["e_ghost.p%d.dat" % p] = table(comment, head, t, cols)
    return out or None


C_SCENARIOS = ["C1_intra", "C2_inter", "C3_inter_work", "C4_mix", "C5_mix_work"]
C_SERIES = ["vendor", "ref", "ref-sched", "ref-nb-sched"]
C_NAMES = ["Intra", "Inter", "Inter+work", "Mix", "Mix+work"]  # paper 002 §5


def fig_c(own, every):
    """C1-C5 (paper 002): per mode, one row per scenario x series, origin epoch measured beside
    002's predictions L0 (with scheduling, eq. 1) and L1 (without, eq. 2) computed from the
    terms the same run measured. Put, no RMA to self, the smallest size present."""
    rs = [r for r in pick(own, set(C_SCENARIOS)) if r.params.get("op") == "put"
          and r.params.get("self") == 0 and r.error is None]
    if not rs:
        return None
    out = {}
    for mode in ("gats", "fence", "lock_all"):
        m = [r for r in rs if r.params.get("mode") == mode]
        if not m:
            continue
        size = min(r.params.get("size", 0) for r in m)
        cols = ["epoch_us", "model_L0_us", "model_L1_us"]
        multi = len({r.mpi for r in m}) > 1
        t = {}
        for r in m:
            if r.params.get("size") != size or r.series not in C_SERIES:
                continue
            key = (C_SCENARIOS.index(r.bench), C_SERIES.index(r.series), r.mpi if multi else "")
            t[key] = {c: r.counters[c] for c in cols if c in r.counters}
        label = lambda k: "%s %s %s%s" % (C_SCENARIOS[k[0]].split("_", 1)[0], C_NAMES[k[0]],
                                          k[2] + " " if k[2] else "", C_SERIES[k[1]])
        comment = ["C1-C5 origin epoch (median µs), %s, put, %d bytes per target, no RMA to self"
                   % (mode, size),
                   "columns: measured; 002 eq. 1 L0 (with scheduling); eq. 2 L1 (without), from "
                   "alpha_us, inter_us, zeta_us, work_us of the same run"]
        out["c_sched.%s.dat" % mode] = table(comment, ["case", "measured", "L0 (002 eq. 1)",
                                                       "L1 (002 eq. 2)"], t, cols, label)
    return out or None


# ---- F: paper 004's implementation strategies (docs/experiments-f.md) ----------------------

def fig_f6(own, every):
    """F6: per strategy (issue:eager/delayed), the epoch time and the operation-object bytes held
    at once, vs puts per target (this MPI's ref series; procs as run)."""
    rs = pick(own, {"F6_issue"})
    if not rs:
        return None
    key = lambda r: (r.params.get("nodes", 1), r.params.get("procs"), r.params.get("issue"))
    keys = sorted({key(r) for r in rs}, key=lambda k: (k[0] or 0, k[1] or 0, str(k[2])))
    out = {}
    for name, cnt, what in (("time", "epoch_us", "median µs per fence epoch"),
                            ("mem", "ops_hwm_bytes", "operation-object bytes held at once")):
        cols = keys
        t = {}
        for r in rs:
            if cnt in r.counters and "ops" in r.params:
                t.setdefault(r.params["ops"], {})[key(r)] = r.counters[cnt]
        head = ["ops"] + ["%s p=%s%s" % (k[2], k[1], " (%s nodes)" % k[0] if k[0] != 1 else "")
                          for k in cols]
        comment = ["F6_issue: %s (%s), max across ranks" % (what, cnt),
                   "column 1: puts per target per epoch; then one column per strategy, p and "
                   "(virtual) nodes"]
        out["f6_issue.%s.dat" % name] = table(comment, head, t, cols)
    return out


def epoch_us_by_strategy(own, bench, param, stem, comment):
    """F4, F5: a table of the median µs per epoch (epoch_us) vs the ops parameter, one column
    per value of `param` (the strategy) x procs x node layout, from this MPI's runs of `bench`."""
    rs = pick(own, {bench})
    if not rs:
        return None
    key = lambda r: (r.params.get("nodes", 1), r.params.get("procs"), r.params.get(param))
    cols = sorted({key(r) for r in rs}, key=lambda k: (k[0] or 0, k[1] or 0, str(k[2])))
    t = {}
    for r in rs:
        if "epoch_us" in r.counters and "ops" in r.params:
            t.setdefault(r.params["ops"], {})[key(r)] = r.counters["epoch_us"]
    head = ["ops"] + ["%s p=%s%s" % (k[2], k[1], " (%s nodes)" % k[0] if k[0] != 1 else "")
                      for k in cols]
    return {"%s.time.dat" % stem: table(comment, head, t, cols)}


def fig_f4(own, every):
    """F4: per algorithm (fence:barrier/reduce_scatter), the epoch time vs puts per neighbour
    (this MPI's ref series; procs and node layout as run)."""
    return epoch_us_by_strategy(
        own, "F4_fence", "fence", "f4_fence",
        ["F4_fence: median µs per fence epoch (epoch_us), max across ranks",
         "column 1: puts per neighbour per epoch; then one column per algorithm, p and "
         "(virtual) nodes"])


def fig_f5(own, every):
    """F5: per lock strategy (lock:vendor/polling/queued), the time per exclusive lock epoch while
    every rank locks one target vs puts per epoch (this MPI's vendor and ref series; procs and
    node layout as run)."""
    return epoch_us_by_strategy(
        own, "F5_lock", "lock", "f5_lock",
        ["F5_lock: median µs per exclusive lock epoch (epoch_us), max across ranks, while every",
         "rank locks rank 0 back to back. column 1: 1-byte puts per epoch; then one column per",
         "lock strategy, p and (virtual) nodes"])


F1_NETS = ["vendor", "shm", "ucx", "auto", "am"]


def fig_f1(own, every):
    """F1: put + flush latency vs payload, one panel per layout (contig, noncontig); a line per
    series and strategy (vendor; ref's blocks/packed/default, labelled auto in the noncontiguous
    panel) and what carried the pair (net: vendor's own,
    shm on one node, ucx or am across virtual nodes)."""
    rs = [r for r in pick(own, {"F1_put"}) if "put_us" in r.counters and "size" in r.params]
    if not rs:
        return None
    net = lambda r: str(r.params.get("net", "-"))
    key = lambda r: (F1_NETS.index(net(r)) if net(r) in F1_NETS else len(F1_NETS), net(r),
                     series_key(r.series), str(r.params.get("strategy")))
    out = {}
    for layout in ("contig", "noncontig"):
        lr = [r for r in rs if r.params.get("layout") == layout]
        if not lr:
            continue
        cols = sorted({key(r) for r in lr})
        t = {}
        for r in lr:
            t.setdefault(r.params["size"], {})[key(r)] = r.counters["put_us"]
        head = ["size"] + [("vendor" if k[1] == "vendor" else
                            "ref %s (%s)" % (k[3] if k[3] != "default" else
                                             "" if layout == "contig" else "auto", k[1]))
                           .replace("ref  (", "ref (") for k in cols]
        comment = ["F1_put, layout %s: median µs of one put + MPI_Win_flush (put_us), max "
                   "across ranks" % layout,
                   "column 1: payload bytes; then one column per series/strategy and pair "
                   "transport (vendor: the MPI library's own; shm: one node; ucx, am: two "
                   "virtual nodes)"]
        out["f1_noncontig.%s.dat" % layout] = table(comment, head, t, cols)
    return out or None


F2_OPS = ["F2_acc_sum_int", "F2_acc_sum_double", "F2_acc_min_int", "F2_fetch_and_op_sum_int64"]


def fig_f2(own, every):
    """F2: accumulate + flush_local message rate, one bar group per operation and element count,
    one bar per series/strategy and pair transport."""
    rs = [r for r in pick(own, set(F2_OPS)) if "rate_Mmsgs" in r.counters]
    if not rs:
        return None
    net = lambda r: str(r.params.get("net", "-"))
    key = lambda r: (F1_NETS.index(net(r)) if net(r) in F1_NETS else len(F1_NETS), net(r),
                     series_key(r.series), str(r.params.get("acc")))
    row = lambda r: (F2_OPS.index(r.bench), r.params.get("elems", 1))
    cols = sorted({key(r) for r in rs})
    t = {}
    for r in rs:
        t.setdefault(row(r), {})[key(r)] = r.counters["rate_Mmsgs"]
    head = ["op"] + ["vendor" if k[1] == "vendor" else "ref %s (%s)" % (k[3], k[1]) for k in cols]
    comment = ["F2: accumulate + MPI_Win_flush_local message rate, millions per second "
               "(rate_Mmsgs: batch / median batch time, max across ranks)",
               "column 1: operation x elements; then one column per series/strategy and pair "
               "transport"]
    label = lambda k: "%s x%s" % (F2_OPS[k[0]][3:].replace("fetch_and_op_sum_int64", "fop_sum"),
                                  k[1])
    return {"f2_acc.dat": table(comment, head, t, cols, label)}


F3_SHAPES = ["create_same", "create_diff", "allocate_same", "allocate_diff", "allocate_lazy",
             "allocate_diff_lazy", "create_lazy", "create_lazy_rest"]
F3_SCALES = [2048, 100000]


def fig_f3(own, every):
    """F3: window metadata bytes per process vs P, measured, with a least-squares fit
    a + b*P per shape extrapolated to 004's scales (the fit and its residual are printed)."""
    rs = [r for r in pick(own, {"F3_metadata"}) if r.params.get("nodes", 1) == 1]
    if not rs:
        return None
    t = {}
    for r in rs:
        if "meta_bytes" in r.counters:
            t.setdefault(r.params.get("procs"), {})[r.params.get("shape")] = r.counters["meta_bytes"]
        # create_lazy's directory is rank 0's: the other processes' bytes too
        if r.params.get("shape") == "create_lazy" and "meta_bytes_rest" in r.counters:
            t.setdefault(r.params.get("procs"), {})["create_lazy_rest"] = \
                r.counters["meta_bytes_rest"]
    cols = [s for s in F3_SHAPES if any(s in row for row in t.values())]
    fits, comment = {}, ["F3_metadata: meta_bytes (window metadata in one process, max across "
                         "ranks) vs P; column 1 P, then one column per shape (create_lazy_rest: "
                         "create_lazy without rank 0, which holds its directory)"]
    for s in cols:
        pts = sorted((p, row[s]) for p, row in t.items() if s in row)
        if len(pts) < 2:
            continue
        n = len(pts)
        mx = sum(p for p, _ in pts) / n
        my = sum(v for _, v in pts) / n
        sxx = sum((p - mx) ** 2 for p, _ in pts)
        b = sum((p - mx) * (v - my) for p, v in pts) / sxx if sxx else 0.0
        a = my - b * mx
        res = max(abs(v - (a + b * p)) for p, v in pts)
        fits[s] = (a, b)
        line = "fit %s: meta_bytes = %.6g + %.6g * P (points P=%s, max residual %.3g B); " \
               "P=2048: %.4g B, P=100000: %.4g B" % (
                   s, a, b, ",".join(str(p) for p, _ in pts), res, a + b * 2048, a + b * 100000)
        comment.append(line)
        print("plot: f3_metadata: " + line, file=sys.stderr)
    out = {"f3_metadata.dat": table(comment, ["P"] + cols, t, cols)}
    if fits:
        fcols = [s for s in cols if s in fits]
        ft = {p: {s: fits[s][0] + fits[s][1] * p for s in fcols}
              for p in sorted(set(t) | set(F3_SCALES))}
        out["f3_metadata.fit.dat"] = table(
            ["the fits of f3_metadata.dat, at the measured P and at 004's scales"],
            ["P"] + ["%s fit" % s for s in fcols], ft, fcols)
    return out


# ---- I1: IMB-RMA's shape (issue 24): bars per operation x mode at one size, one per MPI x series x
# window memory, log scale (ref on mapped memory is ~50x below the rest).

I1_OPS = ("put", "get", "accumulate", "fetch_and_op", "compare_and_swap")


def fig_i1(own, every):
    benches = {"I1_" + op for op in I1_OPS}
    rs = [r for r in pick(every, benches) if r.params.get("size") == 8]
    if not [r for r in pick(own, benches) if r.params.get("size") == 8]:
        return None
    mems = ("allocmem", "allocate", "malloc")
    cols = sorted({(r.mpi, r.series or "-", r.params.get("mem")) for r in rs},
                  key=lambda k: (k[0], series_key(k[1]),
                                 mems.index(k[2]) if k[2] in mems else len(mems)))
    rows = [(op, mode) for op in I1_OPS for mode in ("nonagg", "agg")]
    t = wide(rs, lambda r: rows.index((r.bench[3:], r.params.get("mode")))
             if (r.bench[3:], r.params.get("mode")) in rows else None,
             lambda r: (r.mpi, r.series or "-", r.params.get("mem")), counter("per_op_us"), cols)
    head = ["operation"] + ["%s %s %s" % c for c in cols]
    comment = ["median per_op_us of I1 at 8 bytes (IMB-RMA's shape), per MPI x series x window "
               "memory (allocmem: MPI_Win_create over MPI_Alloc_mem)",
               "column 1: operation and mode; then one column per MPI, series and memory"]
    return {"i1_imb.dat": table(comment, head, t, cols, lambda k: "%s %s" % rows[k])}


def fig_rc_scaling(own, every):
    """rmacheck's scaling benchmark (suites/conformance/rmacheck/bench-scaling.py)."""
    rs = pick(own, {"RC_scaling"})
    if not rs:
        return None
    cols = ["native_s", "rmacheck_s", "program_s", "analysis_s", "log_bytes"]
    t = {r.params.get("accesses", r.counters.get("accesses")): {c: r.counters[c] for c in cols
                                                                 if c in r.counters}
         for r in rs}
    comment = ["rmacheck scaling, 2 ranks, median seconds of: the native run, the whole rmacheck",
               "run, the program under rmacheck, the analysis; bytes of the logs"]
    return {"rmacheck_scaling.dat": table(comment, ["accesses"] + cols, t, cols)}


FIGURES = {"f3_metadata": fig_f3, "f6_issue": fig_f6, "f4_fence": fig_f4, "f5_lock": fig_f5,
           "f1_noncontig": fig_f1, "f2_acc": fig_f2,
           "d1_latency": fig_d1, "d2_overlap": fig_d2, "d3_msgrate": fig_d3,
           "d4_atomics": fig_d4, "d5_fence": fig_d5, "d6_pscw": fig_d6, "d7_passive": fig_d7,
           "r1_deferred": fig_r1, "r2_windows": fig_r2, "r3_noncontig": fig_r3,
           "g1_transactions": fig_g1, "g2_lu": fig_g2, "g3_radix": fig_g3, "g4_hashtable": fig_g4,
           "g5_dsde": fig_g5,
           "e_ghost": fig_e_ghost, "c_sched": fig_c, "i1_imb": fig_i1,
           "rmacheck_scaling": fig_rc_scaling}
FIGURES.update({name: fig_ab(name) for name in AB_FIGURES})


# ---- conditions: every figure says under which conditions its numbers were measured --------

# Figures that draw the sibling directories' MPIs too (docs/plots.md, "Comparing MPIs").
SIBLING_FIGURES = {"d3_msgrate", "d4_atomics", "d5_fence", "d7_passive", "r2_windows"}


def figure_exps(name):
    """Experiment ids a figure draws: d1_latency -> D1; c_sched -> C*; e_ghost -> E*."""
    m = re.match(r"([a-z])(\d*)", name)
    return m.group(1).upper() + m.group(2)


def conditions(rs, runs):
    """One line: MPI library, QUICK, oversubscribed, start skew above D, load average."""
    parts = []
    libs = {}
    for r in rs:
        libs.setdefault(r.mpi, r.context.get("mpi_library", "?"))
    parts.append("; ".join("%s: %s" % (m, libs[m]) if len(libs) > 1 else libs[m]
                           for m in sorted(libs)))
    if any(str(r.context.get("quick")) in ("1", "true") for r in rs):
        parts.append("QUICK (few samples)")
    over = sorted({"%s ranks on %s cores" % (r.context.get("nranks"), r.context.get("cores_per_node"))
                   for r in rs if str(r.context.get("oversubscribed")) == "1"})
    if over:
        parts.append("oversubscribed: " + ", ".join(over))
    skew = [r for r in rs if r.counters.get("skew_exceeds_delay")]
    if skew:
        parts.append("start skew > D in %d of %d results (delay propagation not meaningful there)"
                     % (len(skew), len(rs)))
    loads = []
    for mpi, run in sorted(runs.items()):
        if mpi in libs and run.get("load_start") is not None:
            loads.append("%s%.1f → %.1f" % (mpi + " " if len(libs) > 1 else "",
                                            run["load_start"], run.get("load_end") or 0))
    if loads:
        parts.append("load average at the run's start → end: " + ", ".join(loads))
    # lines of at most ~80 characters: the title is centred over the plot area, which a legend
    # outside on the right narrows, and must not run off the figure
    lines, cur = [], ""
    for p in (p for p in parts if p):
        if cur and len(cur) + 3 + len(p) > 80:
            lines.append(cur)
            cur = p
        else:
            cur = cur + " · " + p if cur else p
    return "\n".join(lines + [cur] if cur else lines)


def run_conditions(dirs):
    """{MPI name: the last make bench run's conditions} of the results directories."""
    out = {}
    for d in dirs:
        try:
            import json
            with open(os.path.join(d, "conditions.json")) as f:
                run = json.load(f).get("run", {})
        except (OSError, ValueError):
            continue
        out[run.get("mpi") or os.path.basename(os.path.normpath(d))] = run
    return out


# ---- drawing ---------------------------------------------------------------------------------

def gp_str(s):
    if "\n" in str(s):  # a double-quoted gnuplot string keeps "\n" as a line break
        return '"%s"' % str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return "'%s'" % str(s).replace("'", "''")


def draw(gnuplot, script, variables):
    setup = "; ".join("%s=%s" % (k, v if isinstance(v, int) else "%.6g" % v
                                 if isinstance(v, float) else gp_str(v))
                      for k, v in variables.items())
    p = subprocess.run([gnuplot, "-e", setup, script], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, encoding="utf-8", errors="replace")
    if p.returncode != 0:
        raise Failure("gnuplot failed on %s (exit %d):\n%s" % (script, p.returncode,
                                                               p.stderr.strip()))
    return p.stderr.strip()


def main():
    ap = argparse.ArgumentParser(description="Draw the nbrma figures from benchmark JSON.")
    ap.add_argument("--results", required=True, help="results directory (results/<mpi>)")
    ap.add_argument("--only", default="", help="draw only figures whose name matches REGEX")
    ap.add_argument("--format", default="png,pdf", help="comma-separated: png, pdf")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--compare", nargs="+", metavar="DIR",
                    help="draw every figure from these results directories together (one MPI "
                    "each; make compare) into --results DIR/plots")
    a = ap.parse_args()
    say = (lambda m: None) if a.quiet else (lambda m: print("plot: " + m, file=sys.stderr))
    warn = lambda m: print("plot: " + m, file=sys.stderr)
    formats = [f for f in a.format.split(",") if f]
    if not formats or set(formats) - {"png", "pdf"}:
        raise Failure("--format takes png and/or pdf, not %r" % a.format)
    if a.compare:
        for d in a.compare:
            if not os.path.isdir(d):
                raise Failure("no results directory %s" % d)
        os.makedirs(a.results, exist_ok=True)
    elif not os.path.isdir(a.results):
        raise Failure("no results directory %s" % a.results)
    try:
        only = re.compile(a.only)
    except re.error as e:
        raise Failure("bad --only regex %r: %s" % (a.only, e))

    own, every = load_many(a.compare, warn) if a.compare else load_all(a.results, warn)
    dirs = a.compare or [a.results] + [d for d in glob.glob(os.path.join(
        os.path.dirname(os.path.abspath(a.results)), "*", "")) if os.path.isdir(d)]
    runs = run_conditions(dirs)
    mpi = ",".join(sorted({r.mpi for r in own}))
    outdir = os.path.join(a.results, "plots")
    datadir = os.path.join(outdir, "data")
    todo = []
    for script in sorted(glob.glob(os.path.join(HERE, "*.gp"))):
        name = os.path.basename(script)[:-3]
        if not only.search(name):
            continue
        build = FIGURES.get(name)
        if not build:
            warn("%s.gp: no builder for it in plot.py, skipped" % name)
            continue
        got = build(own, every)
        # Never leave data or a figure drawn from results that are gone.
        stale = glob.glob(os.path.join(datadir, name + ".*dat"))
        if not got:
            stale += [os.path.join(outdir, name + ext) for ext in (".png", ".pdf")]
        for path in stale:
            if os.path.exists(path):
                os.remove(path)
        if not got:
            say("%s: no data in %s, skipped" % (name, a.results))
            continue
        # gnuplot gets the column count of each file: ncol for NAME.dat, ncol_X for NAME.X.dat
        os.makedirs(datadir, exist_ok=True)
        ncols = dict(got.pop("_vars", {}))
        exp = figure_exps(name)
        pool = every if name in SIBLING_FIGURES or name.startswith("g") else own
        used = [r for r in pool if r.exp.startswith(exp) and (r.exp == exp or exp in "CE")]
        ncols["cond"] = conditions(used or own, runs)
        for fname, (text, n) in got.items():
            with open(os.path.join(datadir, fname), "w", encoding="utf-8") as f:
                f.write(text)
            suffix = fname[len(name):-len(".dat")].replace(".", "_")
            ncols["ncol" + suffix] = n
            # rows after the comments and the header: bar charts size their x range to them
            ncols["nrow" + suffix] = max(0, sum(1 for l in text.splitlines()
                                                if l and not l.startswith("#")) - 1)
        todo.append((name, script, ncols))

    gnuplot = os.environ.get("GNUPLOT", "gnuplot")
    if todo and not shutil.which(gnuplot):
        raise Failure("gnuplot not found (%s); install gnuplot (gnuplot-nox) or set GNUPLOT. "
                      "The data files are in %s" % (gnuplot, datadir))
    for name, script, extra in todo:
        stem = os.path.join(os.path.abspath(outdir), name)
        for f in formats:
            v = dict(datadir=os.path.abspath(datadir), out=stem, term=f, mpi=mpi, **extra)
            try:
                msg = draw(gnuplot, script, v)
            except Failure:
                if os.path.exists(stem + "." + f):
                    os.remove(stem + "." + f)  # no half-drawn figure
                raise
            if msg:
                warn("gnuplot on %s.gp said: %s" % (name, msg))
        say("wrote %s.{%s}" % (os.path.join(outdir, name), ",".join(formats)))
    print("plot: %s" % ("figures: " + " ".join(t[0] for t in todo) if todo
                        else "no figures (no data)"))


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("plot: error: %s" % e, file=sys.stderr)
        sys.exit(1)

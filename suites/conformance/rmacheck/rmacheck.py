#!/usr/bin/env python3
"""rmacheck — run an MPI program and report the memory-consistency hazards of its one-sided
communication (docs/rmacheck.md).

    rmacheck [--json FILE] [--keep] [--preload LIB]... [--dir DIR] [--ranks-per-node K] [--stats]
             -- <launcher> -n N ./prog args

The program runs with librmacheck.so preloaded (MPI wrappers; load/store hooks when it was built
with rmacheck-cc). Every rank logs its RMA calls, synchronization, and accesses to window memory
into a file under a fresh directory in /dev/shm (or in DIR: ranks on several hosts need a DIR
every host can reach, a shared file system); after the launcher exits (normally or not) the
logs are analyzed here: vector clocks are computed from the edges the runtime logged (every
thread of a program built with rmacheck-cc, and every OpenMP task, section or dynamic chunk, is
an actor of its own), epochs are replayed per rank (kind epoch-misuse), pairs of accesses to
overlapping target bytes are checked for an ordering by those clocks in one sweep per window
(kinds conflicting-rma, rma-vs-local, and origin-buffer for local buffers in window memory), the
origin-buffer hazards the runtime detected online are reported (origin-buffer), and nonblocking
epochs and reorder flags refine both (nonblocking-epoch).

--preload LIB puts LIB before the runtime in the program's LD_PRELOAD (and only the program's):
a sanitizer runtime must be the first library of a process whose libraries are sanitized, e.g.
a program linked with an AddressSanitizer build of libnbrma (--preload "$(gcc
-print-file-name=libasan.so)").

--stats prints, on stderr, the time the program ran and the time of the analysis, the size of the
logs, how many lines, events, load/store intervals and RMA operations they hold, and rmacheck's
own CPU time (driver and analysis, not the program).

--ranks-per-node K treats every K ranks of a host as one node (RMACHECK_RANKS_PER_NODE): the
runtime then keeps the clocks of atomic operations as it does across real nodes (a window of its
own instead of node-shared memory), so one machine runs that path.

Exit status: 0 no hazard (and the program exited with 0); 1 hazards reported; 2 rmacheck's own
error (bad option, no log, a rank without a log: the run was not checked); 3 no hazard in what
the program recorded, but the program failed (non-zero exit, a signal, MPI_Abort); 4 rmacheck
was interrupted (SIGTERM, SIGINT): it stopped the program and found no hazard in what was
recorded until then (a partial run).
"""
import os
import signal
import sys
import time
# json, subprocess (addr2line; nm when the ELF reader cannot tell) are imported where used: the
# driver's start-up is part of every checked run (docs/rmacheck.md "Scaling").

MPI_NAME = "@MPI@"
KINDS = ("conflicting-rma", "rma-vs-local", "origin-buffer", "epoch-misuse", "nonblocking-epoch")
# MPI_MODE_* as the runtime normalizes them (their values differ between MPICH and Open MPI)
MODE_NOCHECK, MODE_NOSTORE, MODE_NOPUT, MODE_NOPRECEDE, MODE_NOSUCCEED = 1, 2, 4, 8, 16
# Bytes of one element of the basic types accumulates name (MPI_Type_get_name); elements of one
# size only (pair types are left out: their alignment is not checked).
ELEM_SIZE = {}
for _n, _s in (("CHAR SIGNED_CHAR UNSIGNED_CHAR BYTE INT8_T UINT8_T C_BOOL CXX_BOOL", 1),
               ("SHORT UNSIGNED_SHORT INT16_T UINT16_T", 2),
               ("INT UNSIGNED FLOAT INT32_T UINT32_T WCHAR", 4),
               ("LONG UNSIGNED_LONG LONG_LONG LONG_LONG_INT UNSIGNED_LONG_LONG DOUBLE INT64_T "
                "UINT64_T AINT OFFSET COUNT C_FLOAT_COMPLEX C_COMPLEX", 8),
               ("LONG_DOUBLE C_DOUBLE_COMPLEX", 16)):
    for _t in _n.split():
        ELEM_SIZE["MPI_" + _t] = _s
WRITES = {"MPI_Put", "MPI_Rput", "MPI_Accumulate", "MPI_Raccumulate", "MPI_Compare_and_swap"}
ACC = {"MPI_Accumulate", "MPI_Raccumulate", "MPI_Get_accumulate", "MPI_Rget_accumulate",
       "MPI_Fetch_and_op", "MPI_Compare_and_swap"}
FLAG_AAAR, FLAG_AAER, FLAG_EAER, FLAG_EAAR = 1, 2, 4, 8


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def die(msg):
    print("rmacheck: " + msg, file=sys.stderr)
    sys.exit(2)


def find_runtime():
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.join(here, "..", "lib"), os.path.join(here, "..", "..", "..", "lib",
                                                            "nbrma-" + MPI_NAME)):
        p = os.path.normpath(os.path.join(d, "librmacheck.so"))
        if os.path.isfile(p):
            return p
    env = os.environ.get("RMACHECK_RUNTIME")
    if env and os.path.isfile(env):
        return env
    return None


# ---- log parsing ---------------------------------------------------------------------------

class Ev:
    """One recorded event: rank, global actor index (gid), its seq on that actor, its vector
    clock (a tuple over all actors of all ranks), its line in the rank's log (pos), and where in
    a linear extension of happens-before it was computed (topo)."""
    __slots__ = ("rank", "gid", "seq", "vc", "pos", "kind", "f", "pc", "topo")

    def __init__(self, rank, gid, seq, vc, pos, kind, f, pc=None, topo=0):
        self.rank, self.gid, self.seq, self.vc, self.pos = rank, gid, seq, vc, pos
        self.kind, self.f, self.pc, self.topo = kind, f, pc, topo


class Point:
    """A load/store record: it happened after the event whose clock vc is (its actor's event of
    the interval it was made in), and before any event e with e.vc[gid] > hi."""
    __slots__ = ("rank", "gid", "hi", "vc", "pos", "pc", "topo", "kind", "f")

    def __init__(self, rank, gid, hi, vc, pos, pc, topo):
        self.rank, self.gid, self.hi, self.vc, self.pos, self.pc = rank, gid, hi, vc, pos, pc
        self.topo, self.kind, self.f = topo, "ls", None


def hb(a, b):
    """Event a happens before event (or load/store record) b."""
    if a is None or b is None or a is b:
        return False
    return b.vc[a.gid] >= a.seq


def hb_ls(l, b):
    """A load/store l happens before event b: an event after l on l's actor reached b."""
    return b.vc[l.gid] > l.hi


EVENT_KINDS = frozenset(("win", "attach", "detach", "sync", "op", "rq", "coll", "p2p", "fin", "j",
                         "rel", "acq"))


ACTOR_KINDS = EVENT_KINDS | {"ls", "hz", "ol"}  # lines whose second field is "actor.seq"


def _join(a, b):
    return tuple(map(max, a, b))


class Clocks:
    """The vector clocks of every event, from the edges the runtime logged (rt.h: each event line
    names what it joins: another event, an atomic slot's release chain, a synchronization object
    of its process). Events are processed rank by rank in log order; an event whose join is not
    computed yet makes its rank wait for the others. The run's real order is a valid processing
    order (an event is logged before anything that joins it is), so every event gets its clock;
    the processing order is a linear extension of happens-before (Ev.topo).

    A rank whose log says a thread or construct could not be followed ("th ... unknown") is taken
    as one actor whose events are in log order (the model of a process without thread
    information): more order than the program has, never less. Its load/store records then lie
    between their actor's event and the next event logged after the record."""

    def __init__(self, logs):
        self.logs = logs
        self.ranks = sorted(logs)
        self.parsed = {r: [l.split() for l in logs[r]] for r in self.ranks}
        self.unknown = {r: [" ".join(p[3:]) for p in self.parsed[r] if p and p[0] == "th"]
                        for r in self.ranks}
        self.collapsed = {r: bool(self.unknown[r]) for r in self.ranks}
        # actors per rank, global indices
        self.base, G = {}, 0
        for r in self.ranks:
            n = 1
            if not self.collapsed[r]:
                kinds = ACTOR_KINDS
                for a in {p[1].partition(".")[0] for p in self.parsed[r]
                          if len(p) > 1 and p[0] in kinds}:
                    if a.isdigit() and int(a) + 1 > n:
                        n = int(a) + 1
            self.base[r] = (G, n)
            G += n
        self.G = G
        self.dropped = 0  # joins of events no log holds (a rank cut short)
        self.nevents = 0

    def gid(self, r, a):
        b, n = self.base[r]
        return b if self.collapsed[r] else b + a

    def build(self):
        """Returns {rank: [Ev | Point | None per line]}."""
        G = self.G
        zero = (0,) * G
        cl = [[zero] for _ in range(G)]       # cl[gid][seq]: clock after event seq
        renum = {r: {} for r in self.ranks}    # collapsed ranks: (actor, seq) -> seq
        chain = {}                             # (rank, release n) -> (rank, actor, seq, prev)
        late = {}                              # (rank, "actor.seq") -> joins logged later (jl)
        for r in self.ranks:
            for p in self.parsed[r]:
                if p and p[0] == "jl" and len(p) >= 3:
                    late[(r, p[1])] = p[2]
                if p and p[0] == "al" and len(p) >= 4:
                    a, s_ = p[2].split(".")
                    prev = None
                    if p[3] != "-":
                        pr, pn = p[3][1:].split(".")
                        prev = (int(pr), int(pn))
                    chain[(r, int(p[1]))] = (r, int(a), int(s_), prev)
        if any(self.collapsed.values()):
            for r in self.ranks:
                if not self.collapsed[r]:
                    continue
                k = 0
                for p in self.parsed[r]:
                    if p and p[0] in EVENT_KINDS:
                        k += 1
                        a, s_ = p[1].split(".")
                        renum[r][(int(a), int(s_))] = k
        acc = {}
        objs = {r: {} for r in self.ranks}
        out = {r: [None] * len(self.parsed[r]) for r in self.ranks}
        cur = {r: 0 for r in self.ranks}
        nev = {r: 0 for r in self.ranks}       # collapsed ranks: events so far
        topo = [0]

        def loc(r, a, s_):
            """(gid, seq) of rank r's event (a, s_), None when no log holds it."""
            if r not in self.base:
                return None
            if self.collapsed[r]:
                k = renum[r].get((a, s_))
                return None if k is None else (self.base[r][0], k)
            if a >= self.base[r][1]:
                return None
            return (self.base[r][0] + a, s_)

        def ready(g, s_):
            return len(cl[g]) > s_

        def slot_clock(key):
            """the clock of slot release key (rank, n): its event's, joined with the chain before
            it; None while an event of the chain is not computed yet"""
            if key in acc:
                return acc[key]
            seq_ = []
            k = key
            while k is not None and k not in acc:
                c = chain.get(k)
                if c is None:
                    break
                seq_.append((k, c))
                k = c[3]
            base_ = acc.get(k, zero) if k is not None else zero
            need = []
            for k2, c in seq_:
                l_ = loc(c[0], c[1], c[2])
                need.append(l_)
                if l_ is not None and not ready(*l_):
                    return None
            v = base_
            for (k2, c), l_ in zip(reversed(seq_), reversed(need)):
                if l_ is not None:
                    v = _join(v, cl[l_[0]][l_[1]])
                acc[k2] = v
            return acc.get(key, zero)

        def resolve(r, tok):
            """the clock a join token brings, 'wait' when not computed yet, None when nothing"""
            t = tok[0]
            if t == "o":
                return objs[r].get(tok[1:])
            if t == "e":
                rr, a, s_ = (int(x) for x in tok[1:].split("."))
                l_ = loc(rr, a, s_)
                if l_ is None:
                    self.dropped += 1
                    return None
                return cl[l_[0]][l_[1]] if ready(*l_) else "wait"
            if t == "s":
                rr, n = (int(x) for x in tok[1:].split("."))
                v = slot_clock((rr, n))
                return "wait" if v is None else v
            return None

        base, collapsed, event_kinds = self.base, self.collapsed, EVENT_KINDS

        def step(r):
            """processes rank r's lines until one waits; returns whether any was processed"""
            lines = self.parsed[r]
            i = cur[r]
            moved = False
            coll = self.collapsed[r]
            base0 = self.base[r][0]
            out_r = out[r]
            n_lines = len(lines)
            while i < n_lines:
                p = lines[i]
                if not p:
                    i += 1
                    continue
                k = p[0]
                if k in event_kinds:
                    a, _, s_ = p[1].partition(".")
                    a, s_ = int(a), int(s_)
                    if coll:
                        g, sq = base0, nev[r] + 1
                    else:
                        g, sq = base0 + a, s_
                    prev = cl[g][-1]
                    vc = None
                    if p[2] == "L":  # a fence's joins, logged at the next fence (rt_mpi.c)
                        p[2] = late.get((r, p[1]), "-")
                        if p[2] == "-":
                            self.dropped += 1
                    if p[2] != "-" and not (coll and k == "acq"):
                        js = []
                        for tok in p[2].split(","):
                            v = None
                            if tok[0] == "e":
                                # inline of resolve() for an event of a rank without collapse
                                rr, a2, s2 = tok[1:].split(".")
                                rr, a2, s2 = int(rr), int(a2), int(s2)
                                bn = base.get(rr)
                                if bn is not None and not collapsed[rr] and a2 < bn[1]:
                                    c = cl[bn[0] + a2]
                                    if len(c) <= s2:
                                        cur[r] = i
                                        return moved
                                    v = c[s2]
                                else:
                                    v = resolve(r, tok)
                            else:
                                v = resolve(r, tok)
                            if v == "wait":
                                cur[r] = i
                                return moved
                            if v is not None:
                                js.append(v)
                        for v in js:
                            vc = _join(vc or prev, v)
                    v = list(vc or prev)
                    v[g] = sq
                    vc = tuple(v)
                    if len(cl[g]) != sq:  # a gap (a line lost in a crash): keep seq indexable
                        while len(cl[g]) < sq:
                            cl[g].append(cl[g][-1])
                        cl[g] = cl[g][:sq]
                    cl[g].append(vc)
                    if coll:
                        nev[r] += 1
                    if k == "rel" and not coll:
                        o = objs[r]
                        for key in p[3].split(","):
                            o[key] = _join(o[key], vc) if key in o else vc
                    topo[0] += 1
                    pc = None
                    if k == "op":
                        pc = p[12] if len(p) > 12 else None
                    elif k == "sync":
                        pc = p[10] if len(p) > 10 else None
                    elif k == "win":
                        pc = p[11] if len(p) > 11 else None
                    out_r[i] = Ev(r, g, sq, vc, i, k, p, pc, topo[0])
                elif k == "ls" or k == "hz":
                    a, _, s_ = p[1].partition(".")
                    a, s_ = int(a), int(s_)
                    if coll:
                        g = base0
                        lo = renum[r].get((a, s_), 0) if s_ else 0
                        hi = nev[r]
                    else:
                        g, lo, hi = base0 + a, s_, s_
                    cg = cl[g]
                    if lo >= len(cg):
                        lo = len(cg) - 1
                    out_r[i] = Point(r, g, hi, cg[lo], i, p[5] if len(p) > 5 else None,
                                     topo[0] + 0.5)
                i += 1
                moved = True
            cur[r] = i
            return moved

        while True:
            progress = False
            for r in self.ranks:
                if cur[r] < len(self.parsed[r]):
                    progress |= step(r)
            if all(cur[r] >= len(self.parsed[r]) for r in self.ranks):
                break
            if not progress:
                # a join nothing can satisfy (the logs of a run cut short): drop the first one
                # waiting and go on (order lost, so a report near it may be wrong)
                r = next(r for r in self.ranks if cur[r] < len(self.parsed[r]))
                p = self.parsed[r][cur[r]]
                keep = [t for t in p[2].split(",") if resolve(r, t) != "wait"]
                self.dropped += p[2].count(",") + 1 - len(keep)
                p[2] = ",".join(keep) if keep else "-"
        self.nevents = topo[0]
        return out


def read_logs(d):
    ranks = {}
    for name in os.listdir(d):
        if not name.startswith("rank."):
            continue
        r = int(name.split(".")[1])
        with open(os.path.join(d, name), "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            f.seek(64)
            data = f.read(n)
        lines = data.decode("utf-8", "replace").split("\n")
        lines = lines[:-1]  # the last piece is empty or a line cut by a crash
        ranks[r] = lines
    return ranks


# ---- symbolization -------------------------------------------------------------------------

class Symbolizer:
    def __init__(self):
        self.cache = {}

    def resolve_all(self, pcs):
        bymod = {}
        for pc in pcs:
            if pc and pc not in self.cache and "+" in pc:
                mod, off = pc.rsplit("+", 1)
                bymod.setdefault(mod, []).append((pc, int(off, 16)))
        for mod, lst in bymod.items():
            base = 0
            try:
                with open(mod, "rb") as f:
                    hdr = f.read(18)
                if hdr[:4] == b"\x7fELF" and int.from_bytes(hdr[16:18], "little") == 2:
                    base = 0x400000  # ET_EXEC: dladdr gave pc - load address
            except OSError:
                for pc, _ in lst:
                    self.cache[pc] = pc
                continue
            addrs = ["%x" % (base + off - 1 if off > 0 else off) for _, off in lst]
            import subprocess
            try:
                out = subprocess.run(["addr2line", "-e", mod, "-f", "-C"] + addrs,
                                     capture_output=True, text=True, timeout=60).stdout.split("\n")
            except (OSError, subprocess.SubprocessError):
                out = []
            for i, (pc, _) in enumerate(lst):
                fn = out[2 * i] if 2 * i < len(out) else "??"
                loc = out[2 * i + 1] if 2 * i + 1 < len(out) else "??:0"
                if loc.startswith("??"):
                    self.cache[pc] = "%s (%s)" % (os.path.basename(mod), pc.rsplit("+", 1)[1])
                else:
                    loc = loc.split(" (discriminator")[0]
                    self.cache[pc] = "%s:%s (%s)" % (os.path.basename(loc.split(":")[0]),
                                                     loc.split(":")[-1], fn)

    def __call__(self, pc):
        return self.cache.get(pc, pc or "?")


# ---- the analysis --------------------------------------------------------------------------

REPLAY_KINDS = frozenset(("init", "node", "actors", "win", "ls", "ol", "hz", "rq", "op", "sync"))


class Win:
    def __init__(self, gid, flavor, members):
        self.gid, self.flavor, self.members = gid, flavor, members
        self.base, self.size, self.unit, self.flags = {}, {}, {}, {}


class Op:
    __slots__ = ("ev", "win", "call", "target", "ranges", "write", "read", "acc", "atype",
                 "comp", "lcomp", "epoch", "epoch_no", "approx", "req", "nbclose", "start_ev",
                 "post_ev", "after", "comp2")

    def is_write(self):
        return self.write


class Access:
    """Bytes [lo, hi) of window win owned by rank owner, loaded or stored (write) by the program
    at load/store record ev (a Point; ev.f: lock state, nonblocking close in flight, fence
    epoch)."""
    __slots__ = ("ev", "win", "owner", "lo", "hi", "write", "epochs")


class LocalSide:
    """An operation's local buffer that is window memory (bytes [lo, hi) of window win owned by
    owner): MPI reads it (origin) or writes it (result, write) between the call and the
    operation's local completion."""
    __slots__ = ("op", "win", "owner", "lo", "hi", "write")


class Analysis:
    def __init__(self, logs):
        self.logs = logs
        self.wins = {}
        self.ops = []
        self.ls = []
        self.hz = []
        self.hazards = []
        self.seen = set()
        self.nranks = 0
        self.exes = {}
        self.nodes = {}  # rank -> (node, nodes, atomics store, host)
        self.ops_by_ref = {}  # (rank, "actor.seq") -> the operation of that event
        self.lsides = []
        self.stores_by_fence = {}  # (window, rank, fence epoch) -> stores to its own window
        self.threaded = {}  # rank -> each thread its own actor (built with rmacheck-cc)
        self.fence_asserts, self.starts, self.posts = {}, {}, {}
        self.partial = False  # the run was cut short: counts that need the whole run are off
        self.fence_ops = {}
        # (rank, window) -> lock grants: {"ev": the event after which the lock is held, "after":
        # the closing epochs the lock epoch was deferred behind} (libnbrma activates in order)
        self.grants = {}
        self._grants_after = {}

    def report(self, kind, win, target, lo, hi, a, b, msg):
        w = self.wins.get(win)
        base = w.base.get(target, 0) if w and w.flavor != "dynamic" else 0
        key = (kind, a and a.get("pc"), b and b.get("pc"), msg if not (a and b) else "")
        if key in self.seen:
            return
        self.seen.add(key)
        self.hazards.append({"kind": kind, "window": win, "target": target,
                             "bytes": [lo - base, hi - base] if lo is not None else None,
                             "first": a, "second": b, "what": msg})

    # -- replay of each rank's log
    def run(self):
        self.clocks = ck = Clocks(self.logs)
        evs = ck.build()
        # windows first: an operation needs its target's base and displacement unit
        for r in ck.ranks:
            for p in ck.parsed[r]:
                if p and p[0] == "win":
                    w = self.wins.setdefault(p[4], Win(p[4], p[5], [int(x) for x in p[9].split(",")]))
                    w.base[r], w.size[r], w.unit[r], w.flags[r] = (int(p[6], 16), int(p[7]),
                                                                   int(p[8]), int(p[10]))
        for r in ck.ranks:
            self.replay(r, ck.parsed[r], evs[r])
        self.match_pscw()
        self.check_fence_asserts()
        self.check_pairs()
        self.check_hz()

    def desc_op(self, op):
        return {"rank": op.ev.rank, "access": op.call, "pc": op.ev.pc, "epoch": op.epoch}

    def desc_ls(self, l):
        return {"rank": l.ev.rank, "access": "store" if l.write else "load", "pc": l.ev.pc,
                "epoch": l.epochs or "none (outside any epoch on this window)"}

    def misuse(self, ev, win, what):
        self.report("epoch-misuse", win, ev.rank, None, None,
                    {"rank": ev.rank, "access": ev.kind, "pc": ev.pc, "epoch": "-"}, None, what)

    def replay(self, r, lines, evs):
        idx2gid = {}
        # per window state on this rank
        st = {}
        reqs = {}  # request handle -> (kind, data)
        nclose = {}  # window -> nonblocking closing requests not completed yet

        def state(g):
            if g not in st:
                st[g] = {"fence": False, "nosucceed": False, "fence_no": 0, "locks": {},
                         "lock_all": None, "start": None, "post": None, "pending": {},
                         "epoch_no": 0, "fence_ops": 0, "last_close": None,
                         "closing": [], "after": [], "unclocked": []}
            return st[g]

        self._nclose = nclose
        ep_cache = {}
        handled = REPLAY_KINDS
        for pos, p in enumerate(lines):
            if not p:
                continue
            k = p[0]
            if k not in handled:  # joins ("j", "jl"), threads, atomics: the clocks' business
                continue
            if k == "init":
                self.nranks = int(p[2])
                self.exes[r] = p[4] if len(p) > 4 else "?"
                continue
            if k == "node":
                self.nodes[r] = (int(p[1]), int(p[2]), p[3], p[4] if len(p) > 4 else "?")
                continue
            if k == "actors":
                self.threaded[r] = p[1] == "threads"
                continue
            if k == "win":
                idx, gid, flavor = int(p[3]), p[4], p[5]
                members = [int(x) for x in p[9].split(",")]
                w = self.wins.setdefault(gid, Win(gid, flavor, members))
                w.base[r], w.size[r], w.unit[r], w.flags[r] = (int(p[6], 16), int(p[7]),
                                                               int(p[8]), int(p[10]))
                idx2gid[idx] = gid
                state(gid)
                continue
            if k == "ls":
                pt = evs[pos]
                gid = idx2gid.get(int(p[3]))
                owner = int(p[4])
                write = p[2] == "W"
                s = state(gid)
                closing = nclose.get(gid, 0) > 0
                lk = s["locks"].get(owner)
                # the epoch text depends only on this state: built once per state, not per record
                key = (lk and lk[0], s["lock_all"] is not None, s["start"] and s["start"][2],
                       s["post"] is not None, s["fence"], s["fence_no"], closing, s["nosucceed"])
                hit = ep_cache.get(key)
                if hit is not None:
                    epochs, pt.f = hit
                    for rg in p[6].split(","):
                        lo, ln = rg.split(":")
                        acc = Access()
                        acc.ev, acc.win, acc.owner, acc.write, acc.epochs = (pt, gid, owner, write,
                                                                             epochs)
                        acc.lo = int(lo, 16)
                        acc.hi = acc.lo + int(ln)
                        self.ls.append(acc)
                        if write and owner == r and pt.f[2] >= 0:
                            self.stores_by_fence.setdefault((gid, r, pt.f[2]), []).append(acc)
                    continue
                ep = []
                if owner in s["locks"]:
                    ep.append("lock-%s" % ("exclusive" if s["locks"][owner][0] else "shared"))
                if s["lock_all"] is not None:
                    ep.append("lock_all")
                if s["start"] is not None:
                    ep.append("start #%d" % s["start"][2])
                if s["post"] is not None:
                    ep.append("exposure (between MPI_Win_post and MPI_Win_wait)")
                if s["fence"]:
                    ep.append("fence #%d (between this rank's MPI_Win_fence calls %d and %d)"
                              % (s["fence_no"], s["fence_no"], s["fence_no"] + 1))
                if not ep and closing:
                    ep.append("none (a nonblocking closing call was made, its request not yet"
                              " completed)")
                elif not ep and s["nosucceed"]:
                    ep.append("none (after MPI_Win_fence call %d, whose MPI_MODE_NOSUCCEED ended"
                              " the fence epochs)" % s["fence_no"])
                epochs = ", ".join(ep)
                pt.f = (s["locks"].get(owner, (None,))[0] if owner in s["locks"] else
                        (False if s["lock_all"] is not None else None),
                        closing, s["fence_no"] if s["fence"] else -1)
                ep_cache[key] = (epochs, pt.f)
                for rg in p[6].split(","):
                    lo, ln = rg.split(":")
                    acc = Access()
                    acc.ev, acc.win, acc.owner, acc.write, acc.epochs = pt, gid, owner, write, epochs
                    acc.lo = int(lo, 16)
                    acc.hi = acc.lo + int(ln)
                    self.ls.append(acc)
                    if write and owner == r and pt.f[2] >= 0:
                        self.stores_by_fence.setdefault((gid, r, pt.f[2]), []).append(acc)
                continue
            if k == "ol":
                op = self.ops_by_ref.get((r, p[1]))
                if op is None:
                    continue
                ls_ = LocalSide()
                ls_.op, ls_.win, ls_.owner = op, idx2gid.get(int(p[3])), int(p[4])
                ls_.write = p[2] == "W"
                ls_.lo = int(p[5], 16)
                ls_.hi = ls_.lo + int(p[6])
                self.lsides.append(ls_)
                continue
            if k == "hz":
                h = evs[pos]
                h.kind, h.f = "hz", p
                self.hz.append(h)
                continue
            if k == "rq":
                ev = evs[pos]
                ev.kind = p[4]
                h = p[5]
                if h in reqs:
                    data = reqs.pop(h)
                    if data[0] == "close" and len(data) > 4:
                        nclose[data[1]] = nclose.get(data[1], 0) - 1
                        data[4]["ev"] = ev
                        cl = state(data[1])["closing"]
                        if data[4] in cl:
                            cl.remove(data[4])
                    if data[0] == "other" and len(data) > 4 and data[4] is not None:
                        data[4]["ev"] = ev  # the ilock/ilock_all request: the lock is granted
                    if data[0] == "op":
                        op = data[1]
                        op.lcomp = ev
                        if op.call in ("MPI_Rget", "MPI_Rget_accumulate") and op.comp is None:
                            op.comp = ev
                    else:
                        for op in data[2]:
                            if op.comp is None and data[3]:
                                op.comp = ev
                            if op.lcomp is None:
                                op.lcomp = ev
                continue
            if k == "op":
                self.do_op(r, pos, evs[pos], p, idx2gid, state, reqs)
                continue
            if k == "sync":
                ev = evs[pos]
                ev.kind = p[4]
                self.do_sync(r, pos, ev, p, idx2gid, state, reqs)
                continue

    def do_op(self, r, pos, ev, p, idx2gid, state, reqs):
        gid = idx2gid.get(int(p[3]))
        ev.kind = p[4]
        s = state(gid)
        w = self.wins[gid]
        op = Op()
        op.ev, op.win, op.call, op.target = ev, gid, p[4], int(p[5])
        disp = int(p[6])
        unit = w.unit.get(op.target, 1) if w.flavor != "dynamic" else 1
        base = w.base.get(op.target, 0) if w.flavor != "dynamic" else 0
        op.ranges = []
        if p[7] != "-":
            for b in p[7].split(","):
                o, l = b.split(":")
                lo = base + disp * unit + int(o)
                op.ranges.append((lo, lo + int(l)))
        op.approx = p[8] == "1"
        op.acc = p[9] if p[9] != "-" else None
        op.atype = p[10]
        if op.call in ("MPI_Put", "MPI_Rput"):
            op.write, op.read = True, False
        elif op.call in ("MPI_Get", "MPI_Rget"):
            op.write, op.read = False, True
        else:
            op.write = op.acc != "no_op"
            op.read = op.call not in ("MPI_Accumulate", "MPI_Raccumulate")
        op.comp = op.lcomp = op.comp2 = None
        op.req = p[11] if p[11] != "-" else None
        op.nbclose = None
        op.after = s["after"]
        op.start_ev = s["start"][1] if s["start"] is not None else None
        op.post_ev = None
        # the epoch this operation belongs to
        t = op.target
        if t in s["locks"]:
            op.epoch = "lock-%s #%d toward %d" % ("exclusive" if s["locks"][t][0] else "shared",
                                                  s["locks"][t][2], t)
            op.epoch_no = ("lock", s["locks"][t][2], s["locks"][t][0])
        elif s["lock_all"] is not None:
            op.epoch = "lock_all #%d" % s["lock_all"][1]
            op.epoch_no = ("lock_all", s["lock_all"][1], False)
        elif s["start"] is not None:
            grp, sev, no = s["start"]
            op.epoch = "start #%d" % no
            op.epoch_no = ("start", no, None)
            if t not in grp:
                self.misuse(ev, gid, "%s toward rank %d, which is not in the start group %s" %
                            (op.call, t, sorted(grp)))
        elif s["fence"]:
            op.epoch = "fence #%d" % s["fence_no"]
            op.epoch_no = ("fence", s["fence_no"], None)
            s["fence_ops"] += 1
            self.fence_ops.setdefault((gid, s["fence_no"]), []).append(op)
        else:
            op.epoch = "none"
            op.epoch_no = ("none", 0, None)
            if s["nosucceed"]:
                self.misuse(ev, gid, "%s toward rank %d after MPI_Win_fence(MPI_MODE_NOSUCCEED)"
                            " and before the next synchronization" % (op.call, t))
            else:
                self.misuse(ev, gid, "%s toward rank %d outside any access epoch" % (op.call, t))
        s["pending"].setdefault(t, []).append(op)
        if op.req:
            reqs[op.req] = ("op", op)
        self.ops.append(op)
        self.ops_by_ref[(r, p[1])] = op

    @staticmethod
    def complete(s, ev, target, remote=True):
        """Operations pending toward target (None: all) complete at ev (locally only: remote
        False). s["pending"]: target -> operations not completed remotely yet."""
        pend = s["pending"]
        for t in ([target] if target is not None else list(pend)):
            ops = pend.get(t)
            if not ops:
                continue
            for op in ops:
                if remote and op.comp is None:
                    op.comp = ev
                if op.lcomp is None:
                    op.lcomp = ev
            if remote:
                del pend[t]

    def do_sync(self, r, pos, ev, p, idx2gid, state, reqs):
        gid = idx2gid.get(int(p[3]))
        call = p[4]
        s = state(gid)
        t = int(p[5])
        a1, a2 = int(p[6]), int(p[7])
        grp = set() if p[8] == "-" else set(int(x) for x in p[8].split(","))
        req = p[9] if p[9] != "-" else None
        nb = call.startswith("MPIX_Win_i")
        base = call.replace("MPIX_Win_i", "MPI_Win_")
        w = self.wins[gid]
        # epochs of this origin may run out of order (MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER)
        aaar = bool(w.flags.get(r, 0) & FLAG_AAAR)
        aaer = bool(w.flags.get(r, 0) & FLAG_AAER)
        eaar = bool(w.flags.get(r, 0) & FLAG_EAAR)

        def close(target, remote=True):
            if nb and req:
                pend = s["pending"]
                covered = [op for t_ in ([target] if target is not None else list(pend))
                           for op in pend.get(t_, ())]
                token = {"ev": None, "kind": ("serial" if base in ("MPI_Win_fence",
                                                                   "MPI_Win_unlock_all")
                                              else "access")}
                if base not in ("MPI_Win_flush", "MPI_Win_flush_all"):
                    s["closing"].append(token)
                for op in covered:
                    op.nbclose = ev
                    # MPIX_Win_icomplete sends the origin's clock to the targets at the call
                    # (their wait joins it), as MPI_Win_complete does on return: the call is
                    # the remote completion point, the request's completion the local one.
                    # MPIX_Win_ifence likewise starts its clock exchange at the call.
                    if remote and base in ("MPI_Win_complete", "MPI_Win_fence") and op.comp is None:
                        op.comp = ev
                reqs[req] = ("close", gid, covered, remote, token)
                self._nclose[gid] = self._nclose.get(gid, 0) + 1
                if remote and base not in ("MPI_Win_complete", "MPI_Win_fence"):
                    s["unclocked"].extend(covered)
                if remote:
                    for t_ in ([target] if target is not None else list(pend)):
                        pend.pop(t_, None)
            else:
                self.complete(s, ev, target, remote)

        def opened(kind):
            # A deferred access epoch activates after the epochs still closing when it was
            # opened have completed (000 §VII), unless a reorder flag lets it pass them
            # (MPIX_A_A_A_R an access epoch, MPIX_A_A_E_R an exposure epoch; no flag applies when
            # either is a fence or lock_all epoch): their completion events order it. Each entry
            # is (token, passable): whether a flag lets this epoch pass it.
            s["after"] = [(tk, kind == "access" and (aaar if tk["kind"] == "access" else
                                                     aaer if tk["kind"] == "exposure" else False))
                          for tk in s["closing"]]

        grant = None
        if base in ("MPI_Win_lock", "MPI_Win_lock_all"):
            # loads/stores after the lock is held follow what the lock epoch was deferred behind
            # (a blocking MPI_Win_lock returns once held only on memory the caller can access;
            # MPI_Win_lock_all always)
            held = base == "MPI_Win_lock_all" or t == r or w.flavor in ("allocate", "shared")
            grant = {"ev": ev if not nb and held else None, "after": None}
            self.grants.setdefault((r, gid), []).append(grant)
        if nb and req and base == "MPI_Win_wait":
            token = {"ev": None, "kind": "exposure"}
            s["closing"].append(token)
            reqs[req] = ("close", gid, [], False, token)
            self._nclose[gid] = self._nclose.get(gid, 0) + 1
        elif nb and req and base not in ("MPI_Win_unlock", "MPI_Win_unlock_all", "MPI_Win_flush",
                                       "MPI_Win_flush_all", "MPI_Win_flush_local",
                                       "MPI_Win_flush_local_all", "MPI_Win_fence",
                                       "MPI_Win_complete"):
            reqs[req] = ("other", gid, [], False, grant)
        if base in ("MPI_Win_fence", "MPI_Win_complete", "MPI_Win_post") and s["unclocked"]:
            # Operations an earlier nonblocking unlock closed complete before this epoch
            # activates (without the reorder flag: MPIX_A_A_A_R for complete, MPIX_E_A_A_R for
            # post, none for fence), hence before this call's clock, shipped to the other ranks,
            # is joined by their fence, wait or start completion.
            if base == "MPI_Win_fence" or not (eaar if base == "MPI_Win_post" else aaar):
                for op in s["unclocked"]:
                    if op.comp2 is None:
                        op.comp2 = ev
                s["unclocked"] = []
        if base == "MPI_Win_fence":
            if a1 & MODE_NOPRECEDE and s["fence_ops"] > 0:
                self.misuse(ev, gid, "MPI_Win_fence(MPI_MODE_NOPRECEDE) after %s issued in"
                            " the epoch it closes" % plural(s["fence_ops"], "RMA operation"))
            close(None)
            s["fence_no"] += 1
            s["fence_ops"] = 0
            opened("serial")
            self.fence_asserts.setdefault((gid, s["fence_no"]), {})[r] = a1
            s["fence"] = not (a1 & MODE_NOSUCCEED)
            s["nosucceed"] = bool(a1 & MODE_NOSUCCEED)
        elif base == "MPI_Win_lock":
            if t in s["locks"] or s["lock_all"] is not None:
                self.misuse(ev, gid, "%s toward rank %d while an epoch toward it is already open"
                            " (nested lock)" % (call, t))
            s["epoch_no"] += 1
            s["locks"][t] = (a2 == 1, ev, s["epoch_no"])
            opened("access")
            grant["after"] = s["after"]
            s["nosucceed"] = False
        elif base == "MPI_Win_lock_all":
            if s["locks"] or s["lock_all"] is not None:
                self.misuse(ev, gid, "%s while a lock epoch is already open (nested lock)" % call)
            s["epoch_no"] += 1
            s["lock_all"] = (ev, s["epoch_no"])
            opened("serial")
            grant["after"] = s["after"]
            s["nosucceed"] = False
        elif base == "MPI_Win_unlock":
            if t not in s["locks"]:
                self.misuse(ev, gid, "%s toward rank %d without a matching lock" % (call, t))
            else:
                del s["locks"][t]
            close(t)
        elif base == "MPI_Win_unlock_all":
            if s["lock_all"] is None:
                self.misuse(ev, gid, "%s without MPI_Win_lock_all" % call)
            s["lock_all"] = None
            close(None)
        elif base in ("MPI_Win_flush", "MPI_Win_flush_local"):
            if t not in s["locks"] and s["lock_all"] is None:
                self.misuse(ev, gid, "%s toward rank %d outside a passive-target epoch toward it"
                            % (call, t))
            close(t, remote=base == "MPI_Win_flush")
        elif base in ("MPI_Win_flush_all", "MPI_Win_flush_local_all"):
            if not s["locks"] and s["lock_all"] is None:
                self.misuse(ev, gid, "%s outside a passive-target epoch" % call)
            close(None, remote=base == "MPI_Win_flush_all")
        elif base == "MPI_Win_start":
            if s["start"] is not None:
                self.misuse(ev, gid, "%s while an access epoch from MPI_Win_start is open" % call)
            s["epoch_no"] += 1
            s["start"] = (grp, ev, s["epoch_no"])
            opened("access")
            for tt in grp:
                self.starts.setdefault((gid, r, tt), []).append(ev)
            s["nosucceed"] = False
        elif base == "MPI_Win_complete":
            if s["start"] is None:
                self.misuse(ev, gid, "%s without MPI_Win_start" % call)
            s["start"] = None
            close(None)
        elif base == "MPI_Win_post":
            if s["post"] is not None:
                self.misuse(ev, gid, "%s while an exposure epoch is open" % call)
            s["post"] = (grp, ev)
            for oo in grp:
                self.posts.setdefault((gid, oo, r), []).append(ev)
        elif base == "MPI_Win_wait":
            if s["post"] is None:
                self.misuse(ev, gid, "%s without MPI_Win_post" % call)
            s["post"] = None
        elif call == "free":
            open_ = []
            if s["locks"]:
                open_.append("lock toward %s" % sorted(s["locks"]))
            if s["lock_all"] is not None:
                open_.append("lock_all")
            if s["start"] is not None:
                open_.append("start")
            if s["post"] is not None:
                open_.append("post")
            npend = sum(len(v) for v in s["pending"].values())
            if npend:
                open_.append("%s not completed by a synchronization" %
                             plural(npend, "RMA operation"))
            if open_:
                ev.kind = "MPI_Win_free"
                self.misuse(ev, gid, "MPI_Win_free with an open epoch (%s)" % ", ".join(open_))
            self.complete(s, ev, None)
        # MPI_Win_sync: no epoch effect

    def match_pscw(self):
        post_of = {}
        for (gid, o, t), sts in self.starts.items():
            posts = self.posts.get((gid, o, t), [])
            for s_ev, p_ev in zip(sts, posts):
                post_of[(id(s_ev), t)] = p_ev
            if len(posts) != len(sts) and not self.partial:
                self.misuse(sts[0], gid, "rank %d started %s toward rank %d, which posted %s"
                            " to it (start/post group mismatch)"
                            % (o, plural(len(sts), "access epoch"), t,
                               plural(len(posts), "exposure epoch")))
        for op in self.ops:
            if op.start_ev is not None:
                op.post_ev = post_of.get((id(op.start_ev), op.target))
        for (gid, o, t), posts in self.posts.items():
            if (gid, o, t) not in self.starts and not self.partial:
                self.misuse(posts[0], gid, "rank %d posted an exposure epoch to rank %d, which"
                            " never started one toward it (start/post group mismatch)" % (t, o))

    def check_fence_asserts(self):
        for (gid, k), asserts in self.fence_asserts.items():
            for r, a in asserts.items():
                if a & MODE_NOPUT:
                    for op in self.fence_ops.get((gid, k), []):
                        if op.target == r and op.write:
                            self.report("epoch-misuse", gid, r, op.ranges[0][0] if op.ranges else None,
                                        op.ranges[-1][1] if op.ranges else None,
                                        self.desc_op(op), None,
                                        "rank %d gave MPI_MODE_NOPUT at fence %d but %s from rank"
                                        " %d updates its window in the epoch that follows"
                                        % (r, k, op.call, op.ev.rank))
                if a & MODE_NOSTORE:
                    for l in self.stores_by_fence.get((gid, r, k - 1), ()):
                        if l.ev.rank == r:
                            self.report("epoch-misuse", gid, r, l.lo, l.hi, self.desc_ls(l), None,
                                        "rank %d gave MPI_MODE_NOSTORE at fence %d but stored"
                                        " to its window in the epoch it closes" % (r, k))

    # -- pairs
    @staticmethod
    def done_before(x, e):
        """x completed at its target before event e. A nonblocking fence or complete ships the
        origin's clock at the call, so the call orders events of other ranks after the matching
        completion there; on the origin's own rank only the request's completion does."""
        if e is None:
            return False
        if x.comp2 is not None and e.rank != x.comp2.rank and hb(x.comp2, e):
            return True
        c = x.comp
        if c is None:
            return False
        if c is x.nbclose and e.rank == c.rank:
            c = x.lcomp
            if c is None:
                return False
        return hb(c, e)

    def ordered(self, x, y, flags=True):
        """x and y are ordered; flags=False: as if the window had no reorder flag (a pair that is
        ordered only then is a nonblocking-epoch hazard)."""
        if self.done_before(x, y.ev):
            return True
        if self.done_before(y, x.ev):
            return True
        ex, ey = x.epoch_no, y.epoch_no
        # exclusive locks (or a lock_all against an exclusive lock) exclude each other
        if x.ev.rank != y.ev.rank and ex[0] in ("lock", "lock_all") and ey[0] in ("lock", "lock_all"):
            if (ex[0] == "lock" and ex[2]) or (ey[0] == "lock" and ey[2]):
                return True
        # post -> start: what happened before the target's post precedes the epoch it opened
        if y.post_ev is not None and self.done_before(x, y.post_ev):
            return True
        if x.post_ev is not None and self.done_before(y, x.post_ev):
            return True
        # an epoch deferred behind closing ones starts after they completed
        for a, b in ((x, y), (y, x)):
            if any(self.done_before(b, tk["ev"]) for tk, passable in a.after
                   if not (passable and flags)):
                return True
        # exposure epochs of one target run in order unless E_A_E_R lets them overlap
        if (x.post_ev is not None and y.post_ev is not None and x.post_ev is not y.post_ev and
                not (flags and self.wins[x.win].flags.get(x.target, 0) & FLAG_EAER)):
            return True
        if x.ev.rank == y.ev.rank and ex[:2] != ey[:2]:
            first, second = (x, y) if x.ev.pos < y.ev.pos else (y, x)
            wf = self.wins[x.win].flags.get(x.ev.rank, 0) if flags else 0
            # deferred epochs activate in order without the reorder flag, and always when either
            # is a fence or lock_all epoch
            if first.nbclose is not None and (not wf & FLAG_AAAR or
                                              "fence" in (ex[0], ey[0]) or
                                              "lock_all" in (ex[0], ey[0])):
                return True
        return False

    def compatible(self, x, y, lo=None, lo2=None):
        """x and y may touch the same bytes concurrently; lo, lo2: the starts of the two
        overlapping blocks (element boundaries of each)."""
        if not (x.write or y.write):
            return True
        # accumulates of one origin to one target are ordered (accumulate_ordering default)
        if x.acc and y.acc and x.ev.rank == y.ev.rank and x.atype == y.atype:
            return True
        if x.acc and y.acc and x.atype == y.atype and x.atype != "?":
            # atomic per element (MPI-3.1 §11.7.1): elements that only partly overlap (a
            # displacement off by less than the element) are not one location
            es = ELEM_SIZE.get(x.atype, 0)
            if es > 1 and lo is not None and (lo - lo2) % es:
                return False
            # CAS with MPI_REPLACE is the lock idiom (acquire by CAS, release by replace):
            # both only swap values, all implementations keep them atomic together.
            return (x.acc == y.acc or "no_op" in (x.acc, y.acc) or
                    {x.acc, y.acc} <= {"cas", "replace"})
        return False

    def pair_rma(self, x, lo, hi, y, lo2, hi2):
        """Two RMA operations touching [lo, hi) and [lo2, hi2), which overlap."""
        if y is x or self.compatible(x, y, lo, lo2) or self.ordered(x, y):
            return
        a, b = (x, y) if (x.ev.rank, x.ev.pos) < (y.ev.rank, y.ev.pos) else (y, x)
        kind = "conflicting-rma"
        what = "%s and %s touch overlapping bytes without an ordering point" % (a.call, b.call)
        if self.ordered(x, y, flags=False):
            kind = "nonblocking-epoch"
            what += " (epochs reordered by a reorder flag of the window)"
        elif a.ev.rank == b.ev.rank and a.epoch_no[:2] != b.epoch_no[:2]:
            kind = "nonblocking-epoch"
        self.report(kind, x.win, x.target, max(lo, lo2), min(hi, hi2), self.desc_op(a),
                    self.desc_op(b), what)

    def pair_local(self, x, lo, hi, l):
        """RMA operation x touching [lo, hi) and load/store l, which overlap."""
        if not (l.write or x.write):
            return
        if self.done_before(x, l.ev):
            return
        if hb_ls(l.ev, x.ev):
            return
        if x.post_ev is not None and hb_ls(l.ev, x.post_ev):
            return  # before the post that exposed the window to x's epoch
        if any(tk["ev"] is not None and hb_ls(l.ev, tk["ev"])
               for tk, passable in x.after if not passable):
            return  # before the completion x's deferred epoch waited for
        if self.after_grant(l, x):
            return
        lx = l.ev.f[0]
        ex = x.epoch_no
        if x.ev.rank != l.ev.rank and lx is not None and ex[0] in ("lock", "lock_all") and (
                lx or (ex[0] == "lock" and ex[2])):
            return  # the local access is inside a lock epoch that excludes x's
        kind = "nonblocking-epoch" if (l.ev.f[1] or x.nbclose is not None) else "rma-vs-local"
        self.report(kind, l.win, l.owner, max(lo, l.lo), min(hi, l.hi), self.desc_op(x),
                    self.desc_ls(l), "%s of window memory while %s to it may be in flight"
                    % ("store" if l.write else "load", x.call))

    def pair_side(self, sd, l):
        """An operation's local buffer in window memory and a load/store of it, by any thread of
        any rank that maps it: the access must precede the call or follow the local completion
        (what the runtime's online check decides for accesses that overlap the operation in
        time, here by happens-before)."""
        if not (sd.write or l.write):
            return
        op = sd.op
        if hb_ls(l.ev, op.ev):
            return
        if op.lcomp is not None and hb(op.lcomp, l.ev):
            return
        kind = ("nonblocking-epoch" if op.nbclose is not None and hb(op.nbclose, l.ev)
                else "origin-buffer")
        a = self.desc_op(op)
        b = {"rank": l.ev.rank, "access": "store" if l.write else "load", "pc": l.ev.pc,
             "epoch": a["epoch"]}
        self.report(kind, op.win, op.target, None, None, a, b,
                    "%s %s the %s buffer of %s before the operation completed locally%s"
                    % (b["access"], "writes" if l.write else "reads",
                       "result" if sd.write else "origin", a["access"],
                       " (its closing request had not completed)" if kind ==
                       "nonblocking-epoch" else ""))

    SWEEP_K = 4         # the live set is pruned at multiples of it (once it doubled)
    BUCKET_SHIFT = 12   # the live set is indexed by 4 KiB of the memory
    WIDE = 64           # an access over more buckets is compared with every new one

    def check_pairs(self):
        """Every pair of accesses to overlapping bytes of one window and owner that could
        conflict: RMA/RMA, RMA/load-store, local buffer/load-store. One sweep per (window, owner)
        in a linear extension of happens-before (Ev.topo): each access is compared with the
        accesses still live when it comes, then joins them; every SWEEP_K accesses, an access
        dies when it is ordered before every access that comes after it (tested against the
        elementwise minimum of their clocks, computed backwards once). A program whose epochs
        close keeps few accesses live, so the sweep is linear in the accesses, not quadratic."""
        spaces = {}
        for op in self.ops:
            for lo, hi in op.ranges:
                spaces.setdefault((op.win, op.target), []).append((op.ev.topo, 0, lo, hi, op))
        for a in self.ls:
            spaces.setdefault((a.win, a.owner), []).append((a.ev.topo, 1, a.lo, a.hi, a))
        for sd in self.lsides:
            spaces.setdefault((sd.win, sd.owner), []).append((sd.op.ev.topo, 2, sd.lo, sd.hi, sd))
        for items in spaces.values():
            items.sort(key=lambda t: t[0])
            self.sweep(items)

    @staticmethod
    def _clock(t):
        return t[4].op.ev.vc if t[1] == 2 else t[4].ev.vc

    def _dead(self, t, m):
        """access t is ordered before anything whose clock is at least m"""
        k, x = t[1], t[4]
        if k == 1:
            return m[x.ev.gid] > x.ev.hi
        if k == 2:
            c = x.op.lcomp
            return c is not None and m[c.gid] >= c.seq
        c = x.comp
        if c is None or m[c.gid] < c.seq:
            return False
        if c is x.nbclose:
            c = x.lcomp
            return c is not None and m[c.gid] >= c.seq
        return True

    def _index(self, t, buckets, wide):
        b0, b1 = t[2] >> self.BUCKET_SHIFT, (t[3] - 1) >> self.BUCKET_SHIFT
        if b1 - b0 >= self.WIDE:
            wide.append(t)
            return
        for b in range(b0, b1 + 1):
            buckets.setdefault(b, []).append(t)

    def sweep(self, items):
        n, K = len(items), self.SWEEP_K
        sm = {}
        run = None
        for i in range(n - 1, -1, -1):
            t = items[i]
            vc = t[4].op.ev.vc if t[1] == 2 else t[4].ev.vc
            if run is None:
                run = vc
            elif run != vc:
                run = tuple(map(min, run, vc))
            if i % K == 0:
                sm[i] = run
        live, buckets, wide = [], {}, []
        shift, wmax = self.BUCKET_SHIFT, self.WIDE
        pair_rma, pair_local, pair_side = self.pair_rma, self.pair_local, self.pair_side
        floor = K  # prune when the live set doubled since the last pruning
        for i, t in enumerate(items):
            if i % K == 0 and len(live) >= floor:
                m = sm[i]
                live = [x for x in live if not self._dead(x, m)]
                buckets, wide = {}, []
                for x in live:
                    self._index(x, buckets, wide)
                floor = max(K, 2 * len(live))
            kind, lo, hi = t[1], t[2], t[3]
            b0, b1 = lo >> shift, (hi - 1) >> shift
            if b1 - b0 < wmax:
                cands = [buckets[b] for b in range(b0, b1 + 1) if b in buckets]
                if wide:
                    cands.append(wide)
            else:
                cands = [live]
            seen = set() if len(cands) > 1 else None
            for lst in cands:
                for x in lst:
                    if x[2] >= hi or lo >= x[3]:
                        continue
                    kx = x[1]
                    if kx == 1 and kind == 1:
                        continue  # two loads/stores: never a pair
                    if seen is not None:
                        if id(x) in seen:
                            continue
                        seen.add(id(x))
                    if kx == 0:
                        if kind == 0:
                            pair_rma(x[4], x[2], x[3], t[4], lo, hi)
                        elif kind == 1:
                            pair_local(x[4], x[2], x[3], t[4])
                    elif kx == 1:
                        if kind == 0:
                            pair_local(t[4], lo, hi, x[4])
                        elif kind == 2:
                            pair_side(t[4], x[4])
                    elif kind == 1:
                        pair_side(x[4], t[4])
            live.append(t)
            if b1 - b0 >= wmax:  # inline of _index
                wide.append(t)
            else:
                for b in range(b0, b1 + 1):
                    lst = buckets.get(b)
                    if lst is None:
                        buckets[b] = [t]
                    else:
                        lst.append(t)

    def after_grant(self, l, x):
        """l follows, on its rank, the grant of a lock whose epoch was deferred behind a closing
        epoch that completed after x did (libnbrma activates epochs in order, and grants a lock
        only once its epoch is active)."""
        key = (l.ev.rank, l.win)
        gs = self._grants_after.get(key)
        if gs is None:  # only grants of deferred epochs matter (the list is final by now)
            gs = self._grants_after[key] = [g for g in self.grants.get(key, []) if g["after"]]
        for g in gs:
            if g["ev"] is None or not hb(g["ev"], l.ev):
                continue
            if any(tk["ev"] is not None and self.done_before(x, tk["ev"])
                   for tk, passable in g["after"] if not passable):
                return True
        return False

    def check_hz(self):
        for h in self.hz:
            op = self.ops_by_ref.get((h.rank, h.f[6]))
            kind = "nonblocking-epoch" if h.f[7] == "1" else "origin-buffer"
            a = self.desc_op(op) if op else {"rank": h.rank, "access": "RMA", "pc": None, "epoch": "?"}
            access = "store" if h.f[2] == "W" else "load"
            if len(h.f) > 8:  # another RMA call's local buffer: written (result) or read (origin)
                access = "%s (its %s buffer)" % (h.f[8], "result" if h.f[2] == "W" else "origin")
            b = {"rank": h.rank, "access": access, "pc": h.pc, "epoch": a["epoch"]}
            buf = "origin" if h.f[2] == "W" and (op is None or op.call in WRITES or op.acc) else "result"
            self.report(kind, op.win if op else "?", op.target if op else -1, None, None, a, b,
                        "%s %s the %s buffer of %s before the operation completed locally%s"
                        % (b["access"], "writes" if h.f[2] == "W" else "reads", buf,
                           a["access"], " (its closing request had not completed)" if kind ==
                           "nonblocking-epoch" else ""))


# ---- the report ----------------------------------------------------------------------------

def fix_hint(h, reorder=False):
    """One line telling a user how hazards of this kind are usually fixed (for students first:
    labs/), chosen from the kind and what the report says; reorder: the window has a reorder
    flag set on some rank."""
    kind, what = h["kind"], h["what"]
    a, b = h["first"] or {}, h["second"] or {}
    acc = {a.get("access"), b.get("access")}
    eps = " ".join(str(x.get("epoch", "")) for x in (a, b))
    if kind == "conflicting-rma":
        if a.get("rank") == b.get("rank"):
            return ("complete the first access before issuing the second (MPI_Win_flush in a"
                    " passive epoch, or a new epoch), or make them touch different bytes")
        if acc & {"MPI_Get", "MPI_Rget"} and ("lock-shared" in eps or "lock_all" in eps):
            return ("a read-modify-write under a shared lock races with the other origins: use"
                    " MPI_Fetch_and_op or MPI_Compare_and_swap, or MPI_LOCK_EXCLUSIVE")
        if acc & ACC or acc <= {"MPI_Put", "MPI_Rput"}:
            return ("to add up values use MPI_Accumulate (same op and type on both sides);"
                    " else synchronize between the accesses or give each origin its own bytes")
        return ("separate the two accesses by a synchronization (fence, complete/wait,"
                " unlock/lock, flush) or make them touch different bytes")
    if kind == "rma-vs-local":
        ep = str(b.get("epoch", ""))
        if ep.startswith("fence"):
            return ("move the load/store after the MPI_Win_fence that ends this epoch (or before"
                    " the one that opened it): only then are the epoch's puts and gets complete")
        if "exposure" in ep:
            return ("move the load/store after MPI_Win_wait (or before MPI_Win_post): the"
                    " origins' accesses are complete only when MPI_Win_wait returns")
        return ("touch window memory only after the RMA access is complete and you know it (the"
                " origin's unlock/flush, then a message or barrier), or lock your own window"
                " exclusively around the load/store")
    if kind == "origin-buffer":
        if "result buffer" in what:
            return ("use a get's result only after it completed: MPI_Win_flush_local (or flush,"
                    " unlock, complete, fence) first, or MPI_Wait on the MPI_Rget request")
        return ("reuse a put/accumulate's origin buffer only after it completed locally:"
                " MPI_Win_flush_local (or flush, unlock, complete, fence) first, or use another"
                " buffer")
    if kind == "epoch-misuse":
        for key, hint in (
                ("MPI_MODE_NOPRECEDE", "drop MPI_MODE_NOPRECEDE: it promises that no RMA call of"
                 " this rank precedes the fence in the epoch it closes"),
                ("MPI_MODE_NOSUCCEED", "drop MPI_MODE_NOSUCCEED from that fence, or open a new"
                 " epoch before the RMA call"),
                ("MPI_MODE_NOPUT", "drop MPI_MODE_NOPUT from that fence: another rank puts or"
                 " accumulates into this window in the next epoch"),
                ("MPI_MODE_NOSTORE", "drop MPI_MODE_NOSTORE from that fence: this rank stored"
                 " into its window since the previous fence"),
                ("start group", "put every target of the access epoch in the group given to"
                 " MPI_Win_start"),
                ("outside any access epoch", "open an epoch toward that rank first"
                 " (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all)"),
                ("nested lock", "close the open epoch (MPI_Win_unlock/unlock_all) before locking"
                 " again: one passive epoch per target at a time, and lock_all covers all"),
                ("passive-target epoch", "flush only between MPI_Win_lock/lock_all and the"
                 " matching unlock; active-target epochs complete at fence, complete or wait"),
                ("group mismatch", "make the groups match epoch by epoch: each MPI_Win_start"
                 " names the ranks that post to it, each MPI_Win_post those that start to it"),
                ("MPI_Win_free", "close every epoch (unlock, complete, wait, a last fence)"
                 " before MPI_Win_free"),
                ("without", "pair every closing call with the opening call of its epoch")):
            if key in what:
                return hint
        return "open and close epochs in matching pairs, with assertions that are true"
    if kind == "nonblocking-epoch":
        if "reorder flag" in what:
            return ("wait for the first epoch's request before opening the second, make them"
                    " touch different bytes, or create the window without that reorder flag")
        if reorder and "buffer" not in what:
            return ("a reorder flag of this window lets the epochs overlap: complete the earlier"
                    " epoch's request before touching that memory, or drop the flag")
        return ("complete the nonblocking call's request (MPI_Wait/MPI_Test) before touching"
                " that buffer or window memory")
    return ""


def hazard_where(h):
    """Where a hazard is, for its first line: the target's bytes; the origin's own buffer; the
    rank whose calls misuse the window (never "target rank" for a rank's own misuse)."""
    first = h["first"] or {}
    if h["bytes"]:
        return "target rank %d, bytes [%d, %d)" % (h["target"], h["bytes"][0], h["bytes"][1])
    if h["kind"] == "epoch-misuse":
        return "rank %d" % first.get("rank", h["target"])
    if "rank" in first and h["target"] >= 0:
        return "rank %d's %s toward rank %d" % (first["rank"], first.get("access", "RMA call"),
                                                 h["target"])
    return "target rank %d" % h["target"]


def main(argv):
    json_out = None
    keep = False
    stats = False
    first = []
    logdir = None
    rpn = os.environ.get("RMACHECK_RANKS_PER_NODE")
    if rpn is not None and (not rpn.isdigit() or int(rpn) < 1):
        die("RMACHECK_RANKS_PER_NODE='%s' is not a positive integer" % rpn)
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a == "--json":
            if i + 1 >= len(argv):
                die("--json needs a file name")
            json_out = argv[i + 1]
            i += 2
        elif a.startswith("--json="):
            json_out = a.split("=", 1)[1]
            i += 1
        elif a == "--keep":
            keep = True
            i += 1
        elif a == "--stats":
            stats = True
            i += 1
        elif a == "--preload" or a.startswith("--preload="):
            if "=" in a:
                lib = a.split("=", 1)[1]
                i += 1
            elif i + 1 >= len(argv):
                die("--preload needs a library")
            else:
                lib = argv[i + 1]
                i += 2
            if not os.path.isfile(lib):
                die("--preload: no library '%s'" % lib)
            first.append(os.path.abspath(lib))
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a in ("--dir", "--ranks-per-node") or a.startswith(("--dir=", "--ranks-per-node=")):
            name = a.split("=", 1)[0]
            if "=" in a:
                val = a.split("=", 1)[1]
                i += 1
            elif i + 1 >= len(argv):
                die("%s needs a value" % name)
            else:
                val = argv[i + 1]
                i += 2
            if name == "--dir":
                if not os.path.isdir(val) or not os.access(val, os.W_OK | os.X_OK):
                    die("--dir: '%s' is not a directory this user can write" % val)
                logdir = os.path.abspath(val)
            else:
                if not val.isdigit() or int(val) < 1:
                    die("--ranks-per-node: '%s' is not a positive integer" % val)
                rpn = str(int(val))
        else:
            die("unknown option '%s' (usage: rmacheck [--json FILE] -- <launcher> -n N ./prog)" % a)
    if i >= len(argv) or i + 1 >= len(argv):
        die("no program given (usage: rmacheck [--json FILE] -- <launcher> -n N ./prog)")
    cmd = argv[i + 1:]
    rt = find_runtime()
    if not rt:
        die("runtime librmacheck.so not found next to %s" % sys.argv[0])
    if logdir is None:
        logdir = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    d = make_logdir(logdir)
    env = dict(os.environ)
    env["RMACHECK_DIR"] = d
    if rpn:
        env["RMACHECK_RANKS_PER_NODE"] = rpn
    env["LD_PRELOAD"] = " ".join(first + [rt] + env.get("LD_PRELOAD", "").split())
    # SIGTERM/SIGINT (a job's time limit, ^C): passed on to the launcher, which stops the ranks;
    # what they logged until then is analyzed and reported as partial. A launcher still running
    # GRACE seconds after the signal, or after a second one, is killed.
    interrupted = []
    child = []  # the launcher's pid while it runs (not yet reaped)

    def kill_child(signum):
        for pid in child:
            try:
                os.kill(pid, signum)
            except OSError:
                pass

    def on_signal(signum, frame):
        interrupted.append((signum, time.monotonic()))
        if len(interrupted) == 1:
            kill_child(signum)
            signal.setitimer(signal.ITIMER_REAL, GRACE)  # then SIGALRM: kill
        else:
            kill_child(signal.SIGKILL)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    signal.signal(signal.SIGALRM, lambda signum, frame: kill_child(signal.SIGKILL))
    t_start = time.monotonic()
    try:
        # posix_spawn and a blocking waitpid: no subprocess module to import, and the driver
        # learns of the launcher's exit at once (Popen.wait with a timeout polls with sleeps of
        # up to 50 ms). Signals still reach on_signal: waitpid resumes after the handler.
        try:
            child.append(os.posix_spawnp(cmd[0], cmd, env,
                                         setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)))
        except OSError as e:
            die("cannot run %s: %s" % (cmd[0], e))
        status = wait_launcher(child)
        t_ran = time.monotonic()
        logs = read_logs(d)
        log_bytes = sum(len(v) + sum(map(len, v)) for v in logs.values()) if stats else 0
        if not logs:
            die("the program produced no rmacheck log (was it an MPI program? status %d)"
                % status)
        an = Analysis(logs)
        an.partial = bool(interrupted)
        an.run()
        # a rank that left no log (its runtime could not create one, or it died before MPI_Init)
        # was not checked: never call such a run clean
        missing = sorted(set(range(an.nranks)) - set(logs)) if an.nranks else []
    finally:
        if keep:
            print("rmacheck: logs kept in %s" % d, file=sys.stderr)
        else:
            remove_tree(d)
    sym = Symbolizer()
    pcs = []
    for h in an.hazards:
        for s in (h["first"], h["second"]):
            if s:
                pcs.append(s["pc"])
    sym.resolve_all(pcs)
    instrumented = {}
    for r, exe in an.exes.items():
        if exe not in instrumented:
            instrumented[exe] = imports_tsan(exe)
    loadstore = all(instrumented.values()) if instrumented else False
    for h in an.hazards:
        for s in (h["first"], h["second"]):
            if s:
                s["where"] = sym(s["pc"])
    out = sys.stdout
    if not loadstore:
        print("rmacheck: load/store checking was off (the program was not built with rmacheck-cc):"
              " kinds rma-vs-local and origin-buffer are not checked", file=out)
    if interrupted:
        print("rmacheck: partial: rmacheck was interrupted (%s) and stopped the program;"
              " analyzed what it recorded until then" % signal.Signals(interrupted[0][0]).name,
              file=out)
    if status < 0:
        print("rmacheck: note: the program was killed by signal %d (%s); analyzed what it"
              " recorded" % (-status, signal.Signals(-status).name
                             if -status in signal.valid_signals() else "?"), file=out)
    elif status != 0:
        print("rmacheck: note: the program exited with status %d; analyzed what it recorded"
              % status, file=out)
    for r in an.clocks.ranks:
        if an.clocks.collapsed[r]:
            print("rmacheck: note: rank %d: %s not followed, so its threads were checked in the"
                  " order they logged (races between them may be missed)"
                  % (r, ", ".join(sorted(set(an.clocks.unknown[r])))), file=out)
    if an.clocks.dropped:
        print("rmacheck: note: %d orderings named in the logs were not found (a log cut short):"
              " reports may miss or add a pair near them" % an.clocks.dropped, file=out)
    for h in an.hazards:
        w = an.wins.get(h["window"])
        h["hint"] = fix_hint(h, reorder=bool(w and any(w.flags.values())))
        print("rmacheck: hazard %s: window %s, %s: %s" % (h["kind"], h["window"],
                                                         hazard_where(h), h["what"]), file=out)
        for tag, s in (("first", h["first"]), ("second", h["second"])):
            if s:
                print("  %-6s rank %d %s at %s%s" % (tag, s["rank"], s["access"], s["where"],
                                                    "" if s["epoch"] in ("-", "?") else
                                                    ", epoch " + s["epoch"]), file=out)
        if h["hint"]:
            print("  how to fix: %s" % h["hint"], file=out)
    nodes = {n[0] for n in an.nodes.values()}
    stores = {n[2] for n in an.nodes.values()}
    if json_out:
        import json
        with open(json_out, "w") as f:
            json.dump({"hazards": an.hazards, "loadstore_checked": loadstore,
                       "program_status": status, "partial": bool(interrupted),
                       "interrupted": (signal.Signals(interrupted[0][0]).name
                                       if interrupted else None),
                       "exit": verdict(an.hazards, missing, interrupted, status),
                       "threads": {str(r): ("log order" if an.clocks.collapsed[r] else
                                            "threads" if an.threaded.get(r) else "process")
                                   for r in an.clocks.ranks},
                       "ranks": an.nranks,
                       "ranks_without_log": missing, "nodes": len(nodes),
                       "hosts": sorted({n[3] for n in an.nodes.values()}),
                       "atomics_store": sorted(stores)}, f, indent=1)
    if missing:
        print("rmacheck: rank%s %s left no log: %s not checked (see the error above)"
              % ("s" if len(missing) > 1 else "", ",".join(map(str, missing)),
                 "they were" if len(missing) > 1 else "it was"), file=out)
    code = verdict(an.hazards, missing, interrupted, status)
    if stats:
        cpu = os.times()
        print("rmacheck: stats: program %.3f s, analysis %.3f s, log %d bytes, %d lines, %d events,"
              " %d load/store intervals, %d RMA operations, %d actors; rmacheck's own CPU"
              " %.3f s (user+sys of the driver and analysis, not the program)"
              % (t_ran - t_start, time.monotonic() - t_ran, log_bytes,
                 sum(len(v) for v in logs.values()),
                 an.clocks.nevents, len(an.ls), len(an.ops), an.clocks.G,
                 cpu.user + cpu.system), file=sys.stderr)
    if an.hazards:
        print("rmacheck: %d hazard%s%s" % (len(an.hazards), "s" if len(an.hazards) > 1 else "",
                                           " (partial run)" if interrupted else ""), file=out)
    elif code == 4:
        print("rmacheck: no hazard in what the program recorded before rmacheck was interrupted"
              " (partial)", file=out)
    elif code == 3:
        print("rmacheck: no hazard in what the program recorded, but the program failed"
              " (status %d)" % status, file=out)
    elif code == 0:
        print("rmacheck: no hazard", file=out)
    return code


def verdict(hazards, missing, interrupted, status):
    """The exit status (docs/rmacheck.md): 1 hazards; 2 not checked (rmacheck's own error, or a
    rank that left no log); 4 interrupted (partial, no hazard in it); 3 the program failed (no
    hazard in what it recorded); 0 no hazard and the program exited with 0."""
    if hazards:
        return 1
    if missing:
        return 2
    if interrupted:
        return 4
    if status != 0:
        return 3
    return 0


GRACE = 20.0  # seconds a launcher has to stop after SIGTERM/SIGINT before it is killed


def wait_launcher(child):
    """The launcher's exit status (negative: killed by that signal); child: [its pid], emptied
    once it is reaped (no signal goes to a pid the system may reuse)."""
    while True:
        try:
            pid, st = os.waitpid(child[0], 0)
        except ChildProcessError:
            child.clear()
            return -signal.SIGKILL  # reaped elsewhere: not expected; never a clean verdict
        if pid == child[0] and (os.WIFEXITED(st) or os.WIFSIGNALED(st)):
            child.clear()
            signal.setitimer(signal.ITIMER_REAL, 0)
            return -os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)


def make_logdir(parent):
    """A fresh directory (mode 0700) for the ranks' logs under parent (None: the system's
    temporary directory), as tempfile.mkdtemp makes it, without importing tempfile."""
    if parent is None:
        parent = next((os.environ[v] for v in ("TMPDIR", "TEMP", "TMP") if os.environ.get(v)),
                      "/tmp")
    for _ in range(100):
        d = os.path.join(os.path.abspath(parent), "rmacheck." + os.urandom(6).hex())
        try:
            os.mkdir(d, 0o700)
            return d
        except FileExistsError:
            continue
        except OSError as e:
            die("cannot create a log directory in %s: %s" % (parent, e))
    die("cannot create a log directory in %s" % parent)


def remove_tree(d):
    """shutil.rmtree(d, ignore_errors=True) for the log directory, without importing shutil."""
    try:
        with os.scandir(d) as it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        remove_tree(e.path)
                    else:
                        os.unlink(e.path)
                except OSError:
                    pass
        os.rmdir(d)
    except OSError:
        pass


def imports_tsan(exe):
    """The executable imports ThreadSanitizer's hooks (__tsan_*: built with rmacheck-cc): its
    undefined dynamic symbols, read from the ELF file (what nm -D --undefined-only lists); nm
    itself only when the file is not an ELF file this reader understands."""
    import mmap
    import struct
    try:
        with open(exe, "rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        data = b""
    try:
        if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
            raise ValueError("not ELF")
        is64, en = data[4] == 2, "<" if data[5] == 1 else ">"
        if is64:
            shoff, = struct.unpack_from(en + "Q", data, 0x28)
            shentsize, shnum = struct.unpack_from(en + "HH", data, 0x3A)
            shfmt, symsz = en + "IIQQQQIIQQ", 24
        else:
            shoff, = struct.unpack_from(en + "I", data, 0x20)
            shentsize, shnum = struct.unpack_from(en + "HH", data, 0x2E)
            shfmt, symsz = en + "IIIIIIIIII", 16
        secs = [struct.unpack_from(shfmt, data, shoff + i * shentsize) for i in range(shnum)]
        found = False
        for sec in secs:
            if sec[1] != 11:  # SHT_DYNSYM
                continue
            off, size, link = sec[4], sec[5], sec[6]
            stroff = secs[link][4]
            for i in range(1, size // symsz):  # entry 0 is the null symbol
                b = off + i * symsz
                if is64:
                    name, shndx = struct.unpack_from(en + "I", data, b)[0], \
                        struct.unpack_from(en + "H", data, b + 6)[0]
                else:
                    name, shndx = struct.unpack_from(en + "I", data, b)[0], \
                        struct.unpack_from(en + "H", data, b + 14)[0]
                if shndx == 0 and data[stroff + name:stroff + name + 7] == b"__tsan_":
                    found = True
                    break
        return found
    except (ValueError, IndexError, struct.error):
        pass
    import subprocess
    try:
        out = subprocess.run(["nm", "-D", "--undefined-only", exe], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    return "__tsan_" in out


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(4)
    except Exception as e:  # an analysis bug is rmacheck's own error, never a verdict
        import traceback
        traceback.print_exc()
        print("rmacheck: internal error: %s" % e, file=sys.stderr)
        sys.exit(2)

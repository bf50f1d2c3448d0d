"""labcheck — what every lab's `check` command shares (labs/README.md, docs/labs.md).

A check builds the student's program, runs it on a few ranks, runs rmacheck and/or measures,
and ends with one verdict line:

    lab 01-fence: SOLVED
    lab 01-fence: NOT SOLVED: <the first reason, in plain words>

Exit status: 0 solved, 1 not solved, 2 the check itself could not run (nbrma not built, a
launcher missing): that is never the student's fault and says so.

    labs/NN-name/check [DIR] [--mpi mpich|openmpi] [--impl vendor|ref] [--keep-going]

DIR holds the lab's source files (default: the lab's own folder, i.e. the starter you edit);
labs/solutions/NN-name is the instructor's solution. --mpi picks the MPI build (default $MPI or
mpich); --impl runs the program on the vendor's RMA or on libnbrma (each lab has a default).
Builds go to build/<mpi>/labs/<lab>/<starter|solution|custom>/.

Environment: MPI, BUILD, MPICC, TEST_RUNNER (as make check sets them: `TEST_RUNNER="srun -n"`
on a cluster; another MPI than mpich or openmpi by name with its MPICC and TEST_RUNNER);
LAB_RMACHECK_DIR, a directory every host reaches, when ranks run on several hosts (rmacheck
--dir); TIMEOUT_SCALE, a factor for every time limit, which also grow with the measured load.
"""
import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _timeout_scale():
    """The factor every time limit here is multiplied by, as make check's watchdogs
    (harness/run-test.sh, docs/harness.md): NBRMA_TIMEOUT_SCALE when make check set it, else
    TIMEOUT_SCALE (default 1) times the load per core (the 1-minute load average or the runnable
    tasks now, whichever is higher; at least 1, at most 8). A shared laptop or login node makes a
    program slower, not wrong. Returns (factor, how it was reached)."""
    def num(name):
        try:
            v = float(os.environ.get(name, ""))
        except ValueError:
            return 0.0
        return v if 0.0 < v < 1e6 else 0.0
    s = num("NBRMA_TIMEOUT_SCALE")
    if s:
        return s, os.environ.get("NBRMA_TIMEOUT_LOAD", "make check's scale")
    user = num("TIMEOUT_SCALE") or 1.0
    cores = os.cpu_count() or 1
    try:
        with open("/proc/loadavg") as f:
            q = f.read().split()
        load = max(float(q[0]), float(q[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return user, "TIMEOUT_SCALE=%g, load unknown" % user
    f = min(max(load / cores, 1.0), 8.0)
    return user * f, "TIMEOUT_SCALE=%g, load %.1f on %d cores" % (user, load, cores)


def _rel(p):
    """A path as the student would type it from the repository's top."""
    try:
        r = os.path.relpath(p, TOP)
    except ValueError:
        return p
    return p if r.startswith("..") else r


class Check:
    def __init__(self, lab, sources, default_impl="vendor", title=""):
        self.lab, self.sources, self.title = lab, sources, title
        self.reasons = []
        self.notes = []
        args = sys.argv[1:]
        self.mpi = os.environ.get("MPI") or "mpich"
        self.impl = default_impl
        self.keep_going = False
        src = None
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-h", "--help"):
                print("usage: labs/%s/check [DIR] [--mpi mpich|openmpi] [--impl vendor|ref]"
                      " [--keep-going]\n  DIR: where %s are (default: labs/%s, the starter you"
                      " edit)\n  default --impl here: %s" % (lab, ", ".join(sources), lab,
                                                             default_impl))
                sys.exit(0)
            if a in ("--mpi", "--impl") and i + 1 < len(args):
                setattr(self, a[2:], args[i + 1])
                i += 2
                continue
            if a.startswith(("--mpi=", "--impl=")):
                k, v = a[2:].split("=", 1)
                setattr(self, k, v)
                i += 1
                continue
            if a == "--keep-going":
                self.keep_going = True
                i += 1
                continue
            if a.startswith("-") or src is not None:
                self.error("unknown argument '%s' (try --help)" % a)
            src = a
            i += 1
        # Another MPI by name (README, "Any MPI"): make check passes its MPICC and TEST_RUNNER.
        same = os.environ.get("MPI") == self.mpi
        if self.mpi not in ("mpich", "openmpi") and not (
                same and os.environ.get("MPICC") and os.environ.get("TEST_RUNNER")):
            self.error("MPI '%s' (from --mpi or the environment's MPI) is not mpich or openmpi:"
                       " for another MPI set MPI=%s, MPICC (its compiler wrapper) and TEST_RUNNER"
                       " (its launcher with the option before the rank count, e.g. 'mpiexec -n')"
                       " in the environment" % (self.mpi, self.mpi))
        if self.impl not in ("vendor", "ref"):
            self.error("--impl: '%s' is not vendor or ref" % self.impl)
        self.labdir = os.path.join(TOP, "labs", lab)
        self.src = os.path.abspath(src) if src else self.labdir
        if os.path.isfile(self.src):
            self.src = os.path.dirname(self.src)
        for f in sources:
            if not os.path.isfile(os.path.join(self.src, f)):
                self.error("no %s in %s" % (f, _rel(self.src)))
        build = os.environ.get("BUILD") or os.path.join("build", self.mpi)
        if os.environ.get("MPI") and self.mpi != os.environ["MPI"]:
            build = os.path.join("build", self.mpi)  # --mpi overrides make's BUILD
        self.build = build if os.path.isabs(build) else os.path.join(TOP, build)
        sol = os.path.join(TOP, "labs", "solutions", lab)
        if os.path.realpath(self.src) == os.path.realpath(self.labdir):
            tag = "starter"
        elif os.path.realpath(self.src) == os.path.realpath(sol):
            tag = "solution"
        else:
            tag = "custom-" + hashlib.sha1(os.path.realpath(self.src).encode()).hexdigest()[:8]
        self.out = os.path.join(self.build, "labs", lab, tag)
        os.makedirs(self.out, exist_ok=True)
        self.mpicc = os.environ.get("MPICC")
        if not self.mpicc or (os.environ.get("MPI") and self.mpi != os.environ["MPI"]):
            self.mpicc = "mpicc.mpich" if self.mpi == "mpich" else "mpicc.openmpi"
        runner = os.environ.get("TEST_RUNNER")
        if not runner or (os.environ.get("MPI") and self.mpi != os.environ["MPI"]):
            if self.mpi == "mpich":
                runner = "mpiexec.mpich -n"
            else:
                runner = "mpirun.openmpi --oversubscribe%s -n" % (
                    " --allow-run-as-root" if os.geteuid() == 0 else "")
        self.runner = shlex.split(runner)
        self.scale, self.scale_why = _timeout_scale()
        for tool in ("bin/rmacheck", "bin/rmacheck-cc", "lib/libnbrma.so"):
            if not os.path.exists(os.path.join(self.build, tool)):
                self.error("%s is not built: run `make labs%s` at the top of the repository"
                           " first" % (_rel(os.path.join(self.build, tool)),
                                       "" if self.mpi == "mpich" else " MPI=" + self.mpi))
        # A sanitized build (make check SAN=1) links libnbrma with ASan, whose runtime must be the
        # first library of a process that loads libnbrma.
        self.asan = None
        try:
            ldd = subprocess.run(["ldd", os.path.join(self.build, "lib", "libnbrma.so")],
                                 capture_output=True, text=True).stdout
            m = re.search(r"libasan\S* => (\S+)", ldd)
            self.asan = m.group(1) if m else None
        except OSError:
            pass
        self.nbrma_linked = set()  # binaries linked with libnbrma
        print("lab %s%s: checking %s (%s, %s)" % (lab, " — " + title if title else "",
                                                   ", ".join(os.path.join(_rel(self.src), f)
                                                             for f in sources),
                                                   self.mpi, "libnbrma" if self.impl == "ref"
                                                   else "the vendor's RMA"), flush=True)

    # -- verdicts
    def error(self, msg):
        print("lab %s: CHECK ERROR (not your program's fault): %s" % (self.lab, msg), flush=True)
        sys.exit(2)

    def step(self, msg):
        print("  - " + msg, flush=True)

    def show(self, text, limit=40):
        lines = text.rstrip("\n").split("\n") if text.strip() else []
        for line in lines[:limit]:
            print("      " + line)
        if len(lines) > limit:
            print("      ... (%d more lines)" % (len(lines) - limit))

    def fail(self, reason, stop=True):
        """Not solved, for this reason (plain words); stop unless --keep-going."""
        self.reasons.append(reason)
        print("  ! " + reason, flush=True)
        if stop and not self.keep_going:
            self.finish()

    def note(self, msg):
        """Said only if the lab ends not solved (an explanation of the verdict)."""
        self.notes.append(msg)

    def finish(self):
        if self.reasons:
            for n in self.notes:
                print("  note: " + n)
            print("lab %s: NOT SOLVED: %s" % (self.lab, self.reasons[0]))
            if len(self.reasons) > 1:
                print("  (and %d more reason%s above)" % (len(self.reasons) - 1,
                                                          "" if len(self.reasons) == 2 else "s"))
            sys.exit(1)
        print("lab %s: SOLVED" % self.lab)
        sys.exit(0)

    # -- building
    def compile(self, source, rmacheck=False, nbrma=False):
        """Build DIR/source (with rmacheck-cc when rmacheck=True), -O0 -g. Returns the binary."""
        src = os.path.join(self.src, source)
        exe = os.path.join(self.out, os.path.splitext(source)[0] + (".rmacheck" if rmacheck
                                                                      else ""))
        cc = [os.path.join(self.build, "bin", "rmacheck-cc")] if rmacheck else [self.mpicc]
        cmd = cc + ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-g", "-O0",
                    "-I" + os.path.join(TOP, "labs", "common"), "-o", exe, src]
        if nbrma:
            lib = os.path.join(self.build, "lib")
            cmd += ["-I" + os.path.join(TOP, "ref", "include"), "-L" + lib,
                    "-Wl,--no-as-needed", "-lnbrma", "-Wl,--as-needed", "-Wl,-rpath," + lib]
        self.step("build: %s" % " ".join(_rel(x) if os.path.isabs(x) else
                                          re.sub(r"(-[IL])(/.*)",
                                                 lambda m: m.group(1) + _rel(m.group(2)), x)
                                          for x in cmd))
        p = subprocess.run(cmd, capture_output=True, text=True)
        if nbrma:
            self.nbrma_linked.add(exe)
        if p.returncode != 0:
            self.show(p.stderr + p.stdout, limit=20)
            self.fail("%s does not compile (the compiler's messages are above)" % source)
        elif p.stderr.strip():
            self.show(p.stderr, limit=10)
        return exe

    # -- running
    def env(self, impl=None, extra=None, exe=None, rmacheck=False):
        impl = impl or self.impl
        e = dict(os.environ)
        e.pop("NBRMA_KNOWN_FAILURE", None)
        pre = []
        if self.asan and not rmacheck and (impl == "ref" or exe in self.nbrma_linked):
            pre.append(self.asan)  # (under rmacheck: its --preload)
        if impl == "ref":
            pre.append(os.path.join(self.build, "lib", "libnbrma.so"))
            e["NBRMA_IMPL"] = "ref"
        if pre:
            e["LD_PRELOAD"] = " ".join(pre + e.get("LD_PRELOAD", "").split())
        if extra:
            e.update(extra)
        return e

    def _run(self, cmd, env, timeout):
        timeout = self.limit(timeout)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            return None, out, err

    def limit(self, seconds):
        """A limit sized for a quiet machine, scaled (see _timeout_scale)."""
        return int(seconds * self.scale + 0.999)

    def run(self, nranks, exe, args=(), impl=None, timeout=120, extra_env=None, what=None):
        """Run exe on nranks; a hang or a crash is the student's (not solved), with the output."""
        cmd = self.runner + [str(nranks), exe] + list(args)
        self.step("run: %s on %d ranks%s" % (" ".join([_rel(exe)] + list(args)), nranks,
                                             " (libnbrma)" if (impl or self.impl) == "ref"
                                             else ""))
        rc, out, err = self._run(cmd, self.env(impl, extra_env, exe=exe), timeout)
        if rc is None:
            self.show(out + err, limit=20)
            self.fail("%s did not finish within %d s (%d s x %.2f: %s): a deadlock? (an epoch"
                      " opened on one rank and never matched on another, a wait for a message"
                      " nobody sends)" % (what or os.path.basename(exe), self.limit(timeout),
                                          timeout, self.scale, self.scale_why))
        if rc != 0:
            self.show(out + err, limit=25)
            self.fail("%s exited with status %d (its output is above)"
                      % (what or os.path.basename(exe), rc))
        return out, err

    def rmacheck(self, nranks, exe, args=(), impl=None, timeout=180):
        """Run exe under rmacheck; returns the list of hazards (dicts of rmacheck's JSON) and
        the report text (the lines starting at 'rmacheck:' and the indented ones under them)."""
        fd, js = tempfile.mkstemp(prefix="labcheck.", suffix=".json")
        os.close(fd)
        rmc = os.path.join(self.build, "bin", "rmacheck")
        # ranks on several hosts (a cluster's launcher) need rmacheck's logs on a shared file
        # system: LAB_RMACHECK_DIR names one (docs/labs.md)
        logdir = os.environ.get("LAB_RMACHECK_DIR")
        asan = self.asan and ((impl or self.impl) == "ref" or exe in self.nbrma_linked)
        cmd = [rmc, "--json", js] + (["--dir", logdir] if logdir else []) + \
            (["--preload", self.asan] if asan else []) + ["--"] + \
            self.runner + [str(nranks), exe] + list(args)
        shown = [rmc, "--"] + self.runner + [str(nranks), exe] + list(args)
        self.step("rmacheck: %s" % " ".join(_rel(x) for x in shown))
        try:
            rc, out, err = self._run(cmd, self.env(impl, rmacheck=True), timeout)
            if rc is None:
                self.show(out + err, limit=20)
                self.fail("under rmacheck, %s did not finish within %d s (%d s x %.2f: %s);"
                          " a deadlock?" % (os.path.basename(exe), self.limit(timeout), timeout,
                                            self.scale, self.scale_why))
            if rc == 2:
                self.show(out + err, limit=20)
                self.error("rmacheck could not check the program (its message is above)")
            try:
                with open(js) as f:
                    data = json.load(f)
            except (OSError, ValueError):
                self.show(out + err, limit=20)
                self.error("rmacheck wrote no report")
        finally:
            os.unlink(js)
        report = [ln for ln in out.split("\n") if ln.startswith(("rmacheck: hazard", "  "))]
        if data.get("program_status"):
            self.show(out + err, limit=25)
            self.fail("under rmacheck, %s exited with status %d" % (os.path.basename(exe),
                                                                   data["program_status"]))
        return data.get("hazards", []), "\n".join(report)

    def no_hazards(self, hazards, report, source, stop=True):
        """Not solved when rmacheck found hazards: show them (at most three) and their fix."""
        if not hazards:
            self.step("rmacheck: no hazard")
            return True
        blocks = re.split(r"\n(?=rmacheck: hazard)", report)
        for b in blocks[:3]:
            self.show(b, limit=8)
        if len(blocks) > 3:
            print("      ... and %d more (run the rmacheck command above to see all)"
                  % (len(blocks) - 3))
        h = hazards[0]
        where = h["second"] or h["first"]
        self.fail("rmacheck found %d hazard%s in %s; the first: %s at %s (%s). How to fix: %s"
                  % (len(hazards), "" if len(hazards) == 1 else "s", source, h["kind"],
                     where.get("where", "?"), h["what"], h.get("hint", "see docs/rmacheck.md")),
                  stop=stop)
        return False

    # -- results the lab programs print: "lab-result: key=value key=value ..."
    @staticmethod
    def results(out):
        res = {}
        for line in out.split("\n"):
            if line.startswith("lab-result:"):
                for kv in line.split()[1:]:
                    k, _, v = kv.partition("=")
                    try:
                        res[k] = float(v)
                    except ValueError:
                        res[k] = v
        return res

    def measure(self, nranks, exe, args, decide, tries=3, impl=None, final=None):
        """Timing on a shared machine: run up to `tries` times; decide(results) returns True
        (good), False (bad) or None (in between). Only a good verdict ends the tries early: every
        lab's timing goal is one a wrong program cannot reach however idle the machine is (ranks
        that wait for each other cannot overlap), while other jobs can make a right program look
        bad in one run. final(results), when given and true, ends them at once (wrong data is not
        a matter of timing). Returns (verdict, results of the run it came from): True if any run
        was good, else the last run's verdict (None counts as not good)."""
        verdict, res = None, {}
        for t in range(tries):
            out, _ = self.run(nranks, exe, args, impl=impl)
            res = self.results(out)
            if not res:
                self.show(out, limit=15)
                self.fail("%s printed no 'lab-result:' line (did you remove it?)"
                          % os.path.basename(exe))
            verdict = decide(res)
            if verdict or (final is not None and final(res)):
                break
            if t + 1 < tries:
                self.step("%s (a loaded machine?): measuring again"
                          % ("in between the two thresholds" if verdict is None
                             else "not there yet"))
        return verdict, res

    def source_text(self, source):
        with open(os.path.join(self.src, source)) as f:
            return f.read()

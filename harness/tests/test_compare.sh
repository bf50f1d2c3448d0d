#!/bin/sh
# test_compare.sh — `make compare` (issue 23 §C8) on stored results of two MPIs
# (harness/tests/data/compare/: real quick runs of D4, A1, B1 and a few conformance tests on
# MPICH 4.0.2 and Open MPI 4.1.4, where Open MPI's 8-byte CAS crashed): the report's tables hold
# the JSON's numbers and the ratios computed from them, the crash is marked CRASHED (known), the
# conformance matrix has pass / known vendor failure per test and MPI, the machine and the
# conditions are there, and every figure it links exists. No browser needed: the HTML is parsed.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/results"
cp -r harness/tests/data/compare/mpich harness/tests/data/compare/openmpi "$tmp/results/"

# Both MPIs have results and check.tsv: make compare runs nothing, it writes the report.
t_make -C "$top" compare MPIS="mpich openmpi" RESULTS_ROOT="$tmp/results" DEPS=0 >"$tmp/out" 2>&1
t_is $? 0 "make compare MPIS=\"mpich openmpi\" on stored results"
t_unlike "$tmp/out" 'make bench|conformance suites on' "reusing them (nothing is run)"
t_like "$tmp/out" "nbrma-compare: mpich openmpi compared: 3 experiments, 9 conformance tests, [0-9]+ figures" \
    "and saying what it compared"
t_ok $([ -s "$tmp/results/compare/index.html" ] && [ -s "$tmp/results/compare/report.txt" ]; echo $?) \
    "results/compare/index.html and report.txt are written"

"$PYTHON" - "$tmp/results" <<'PY' >"$tmp/check" 2>&1
import html.parser, os, sys
sys.path.insert(0, "harness")
import nbrma_results
root = sys.argv[1]


class Tables(html.parser.HTMLParser):
    """Every <table id=...> as a list of rows of cell texts; <img src> and <li> texts."""
    def __init__(self):
        super().__init__()
        self.tables, self.imgs, self.items, self.cur, self.row, self.cell = {}, [], [], None, None, None
        self.li = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.cur = self.tables.setdefault(a.get("id", "?"), [])
        elif tag == "tr" and self.cur is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "img":
            self.imgs.append(a.get("src"))
        elif tag == "li":
            self.li = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.cur.append(self.row)
            self.row = None
        elif tag == "table":
            self.cur = None
        elif tag == "li" and self.li is not None:
            self.items.append(self.li)
            self.li = None

    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d
        if self.li is not None:
            self.li += d


p = Tables()
p.feed(open(os.path.join(root, "compare", "index.html"), encoding="utf-8").read())
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def cell(table, row, col):
    t = p.tables.get(table, [])
    if not t:
        return None
    head = t[0]
    for r in t[1:]:
        if r[0] == row and col in head:
            return r[head.index(col)]
    return None


vals = {}
for m in ("mpich", "openmpi"):
    for r in nbrma_results.load_dir(os.path.join(root, m)):
        vals[(m, r.name)] = r.counters
fmt = lambda v: "%.4g" % v
# the JSON's numbers, side by side
for m in ("mpich", "openmpi"):
    for s in ("vendor", "ref"):
        name = "D4_acc_sum/%s/size:8" % s
        check(cell("exp-D4", "D4_acc_sum/size:8", "%s %s" % (m, s)) == fmt(vals[(m, name)]["latency_us"]),
              "D4_acc_sum/size:8 %s %s holds the JSON's latency_us" % (m, s))
# ratios computed from them
ref_v = vals[("mpich", "D4_fetch_and_op/ref")]["latency_us"] / vals[("mpich", "D4_fetch_and_op/vendor")]["latency_us"]
check(cell("exp-D4", "D4_fetch_and_op", "mpich ref/vendor") == fmt(ref_v), "ref/vendor ratio of mpich")
across = vals[("openmpi", "D4_acc_min/vendor/size:8")]["latency_us"] / vals[("mpich", "D4_acc_min/vendor/size:8")]["latency_us"]
check(cell("exp-D4", "D4_acc_min/size:8", "vendor openmpi/mpich") == fmt(across), "vendor openmpi/mpich ratio")
a1 = "A1_late_post/size:1048576/delay_us:1000"
check(cell("exp-A1", a1, "openmpi ref-nb/vendor") ==
      fmt(vals[("openmpi", "A1_late_post/ref-nb/size:1048576/delay_us:1000")]["subsequent_us"] /
          vals[("openmpi", "A1_late_post/vendor/size:1048576/delay_us:1000")]["subsequent_us"]),
      "A1: ref-nb/vendor of the quantity the delay propagates to (subsequent_us)")
# the crash
check(cell("exp-D4", "D4_cas", "openmpi vendor") == "CRASHED (known)",
      "Open MPI's crashed 8-byte CAS is marked CRASHED (known), not left empty")
check(cell("exp-D4", "D4_cas", "vendor openmpi/mpich") == "", "and has no ratio")
check(any(r[1:4] == ["D4_cas/vendor", "crash"] or r[:3] == ["openmpi", "D4_cas/vendor", "crash"]
          for r in p.tables.get("failure-list", [])), "the failure list names it")
# the conformance matrix
check(cell("conformance-matrix", "atomics_cas np=2 --wide", "mpich") == "pass" and
      cell("conformance-matrix", "atomics_cas np=2 --wide", "openmpi") == "known vendor failure",
      "matrix: atomics_cas --wide passes on MPICH, is a known vendor failure on Open MPI")
check(cell("conformance-matrix", "win_allocate_odd np=3", "mpich") == "known vendor failure",
      "matrix: win_allocate_odd is MPICH's known failure")
check(cell("conformance-matrix", "atomics_cas on-ref np=2 --wide", "openmpi") == "pass",
      "matrix: the same test on libnbrma passes on Open MPI")
check(len(p.tables.get("conformance-matrix", [])) == 10, "matrix: 9 tests and a header")
# machine and conditions
conds = p.tables.get("conditions", [])
check(["mpich", "MPI library", "MPICH Version: 4.0.2"] in conds and
      ["openmpi", "MPI library", "Open MPI v4.1.4"] in conds, "each MPI's library version")
check(any(r[0] == "openmpi" and r[1] == "make bench" and "QUICK" in r[2] and "load average" in r[2]
          for r in conds), "the bench run's conditions: QUICK, load average")
check(any(r[1] == "oversubscribed" and "A1 (3 ranks on 2 cores)" in r[2] for r in conds),
      "oversubscribed experiments")
check(any(r[1] == "make check" and "LOAD=" in r[2] for r in conds), "make check's conditions")
check(any("CPUs" in i for i in p.items), "the machine")
# figures
check(all(os.path.exists(os.path.join(root, "compare", src)) for src in p.imgs),
      "every figure the report shows exists (%d)" % len(p.imgs))
sys.exit(1 if fails else 0)
PY
st=$?
t_ok $st "the report's tables, matrix, conditions and figures (see the lines below)"
sed 's/^/# /' "$tmp/check"
if command -v gnuplot >/dev/null 2>&1; then
    t_like "$tmp/results/compare/index.html" "<img src='plots/d4_atomics.png'" "D4 is drawn with both MPIs"
    t_like "$tmp/results/compare/plots/data/a1_late_post.dat" '"mpich vendor".*"openmpi vendor"' \
        "A1's figure has a bar per MPI and series"
else
    t_ok 0 "figures # SKIP no gnuplot"
    t_ok 0 "figures # SKIP no gnuplot"
fi
t_like "$tmp/results/compare/report.txt" '^  atomics_cas np=2 --wide +pass +known vendor failure' \
    "report.txt has the matrix as text"
t_done

"""nbrma_results — read the Google Benchmark JSON that nbrma binaries write.

The JSON is the contract between the benchmarks and everything downstream (plots/, ci/). This
module is the one place that knows its shape: it strips Google Benchmark's name decorations
(/iterations:N, /manual_time, /repeats:N), keeps the median aggregate when a run had
repetitions, and splits a name into experiment id, benchmark, series and parameters:

    D1_put_latency/vendor/size:8  ->  exp="D1", bench="D1_put_latency", series="vendor",
                                       params={"size": 8}
"""
import glob
import json
import os
import re

_DECOR = re.compile(r"/(iterations:\d+|manual_time|real_time|repeats:\d+|threads:\d+)")
_SERIES = ("vendor", "ref", "ref-nb")
# JSON files that live beside the results but are not benchmark output (harness/nbrma-models,
# harness/nbrma-bench's record of failures and conditions).
NOT_RESULTS = {"models.json", "failures.json", "conditions.json"}


# The counter that stands for a result in tables (summary.txt, make compare): the first of these
# it has, else its first *_us counter. For A and B, the quantity the delay propagates to
# (docs/experiments-ab.md), or the cumulative time.
HEADLINE = ("latency_us", "overlap_ratio", "per_put_us", "fence_us", "subsequent_us",
            "put_call_us", "o1_epoch_us", "t1_epoch_us", "second_epoch_us", "p1_epoch_us",
            "cumulative_us", "target_epoch_us", "epoch_us", "flush_us", "sync_us", "onesided_us")


def headline(counters):
    """Name of the counter that stands for a result, or None."""
    head = next((c for c in HEADLINE if c in counters), None)
    if head is None:
        head = next((c for c in sorted(counters) if c.endswith("_us")), None)
    return head


class ResultsError(Exception):
    """A results file that cannot be read or is not Google Benchmark JSON (names the file)."""


class Result:
    __slots__ = ("name", "exp", "bench", "series", "params", "counters", "time_us", "error",
                 "context", "mpi", "path")

    def __repr__(self):
        return "Result(%s)" % self.name


def _num(v):
    try:
        f = float(v)
    except ValueError:
        return v
    return int(f) if f.is_integer() else f


def strip_decor(name):
    """A benchmark name without Google Benchmark's /iterations:N, /manual_time, ... parts."""
    return _DECOR.sub("", name)


def split_name(name):
    """Return (bench, series, params) of a decorated or plain benchmark name."""
    base = strip_decor(name)
    parts = base.split("/")
    bench, series, params = parts[0], None, {}
    for p in parts[1:]:
        if p in _SERIES and series is None:
            series = p
        elif ":" in p:
            k, v = p.split(":", 1)
            params[k] = _num(v)
        elif series is None:
            # Other series names (e.g. ref-nb+a_a_a_r) are allowed after the benchmark name.
            series = p
    return bench, series, params


def load_file(path):
    """Results of one JSON file (errors included, aggregates reduced to the median).
    Raises ResultsError naming the file when it is unreadable or not benchmark JSON."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ResultsError("cannot read %s: %s" % (path, e)) from e
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise ResultsError("%s is not Google Benchmark JSON (no 'benchmarks' list)" % path)
    ctx = doc.get("context", {})
    mpi = ctx.get("nbrma_mpi") or os.path.basename(os.path.dirname(os.path.abspath(path)))
    have_aggregates = {b.get("run_name") for b in doc.get("benchmarks", [])
                       if b.get("run_type") == "aggregate"}
    out = []
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
        elif b.get("run_name") in have_aggregates:
            continue  # a repetition whose median is reported separately
        r = Result()
        r.name = strip_decor(b.get("run_name", b["name"]))
        r.bench, r.series, r.params = split_name(r.name)
        r.exp = r.bench.split("_", 1)[0]
        r.error = b.get("error_message") if b.get("error_occurred") else None
        skip = {"name", "run_name", "run_type", "family_index", "per_family_instance_index",
                "repetitions", "repetition_index", "threads", "iterations", "real_time",
                "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "error_occurred",
                "error_message"}
        r.counters = {k: v for k, v in b.items() if k not in skip and isinstance(v, (int, float))}
        unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}.get(b.get("time_unit", "us"), 1.0)
        r.time_us = b.get("real_time", 0.0) * unit
        r.context = ctx
        r.mpi = mpi
        r.path = path
        out.append(r)
    return out


def load_dir(directory):
    """All results under one results/<mpi>/ directory, in file order."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        if os.path.basename(path) not in NOT_RESULTS:
            out.extend(load_file(path))
    return out

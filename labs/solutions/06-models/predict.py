#!/usr/bin/env python3
"""predict.py — lab 6: predict the ghost-cell exchange E from the fitted models
(labs/06-models/README.md).

    python3 labs/06-models/predict.py results/mpich/models.json [--series ref] [--procs 2]
                                      [--sizes 16,1024,65536,262144]

models.json is what `make models` writes: for each series (vendor, ref, ref-nb) and each model
of paper 001 §3 (P_put, P_fence, ...), the fitted parameters of every run and their band. This
script reads the median of each parameter's band and predicts the time of one exchange of E's
fence version on p ranks: for each size s (bytes per neighbour), one line "s predicted_us".

Instructor's solution: predict() below; the starter counted one fence instead of two, c*p
instead of c*log2(p), and one put instead of four.
"""
import json
import math
import sys


def param(models, series, model, name):
    """The median over the runs of one fitted parameter, in the unit models.json keeps it in:
    µs for constants (b, c), µs per byte for slopes (a)."""
    try:
        return models["models"][series][model]["band"][name]["median"]
    except KeyError:
        sys.exit("predict.py: no %s %s fit for series %s in models.json (run make models with"
                 " that series)" % (model, name, series))


def predict(models, series, size, procs):
    """Predicted µs of one E exchange, fence version: every rank puts `size` bytes to each of
    its 4 neighbours between two fences. P_put(s) = a*s + b; P_fence(p) = c*log2(p)."""
    a = param(models, series, "P_put", "a")
    b = param(models, series, "P_put", "b")
    c = param(models, series, "P_fence", "c")
    # One exchange: the opening fence, 4 puts of `size` bytes (west, east, south, north), the
    # closing fence. P_fence's form is c*log2(p) (paper 001 §3: a fence is a barrier-like
    # exchange whose rounds grow with log2 p), not c*p.
    return 2 * c * math.log2(procs) + 4 * (a * size + b)


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    with open(argv[0]) as f:
        models = json.load(f)
    series, procs, sizes = "ref", 2, [16, 1024, 65536, 262144]
    i = 1
    while i + 1 < len(argv):
        if argv[i] == "--series":
            series = argv[i + 1]
        elif argv[i] == "--procs":
            procs = int(argv[i + 1])
        elif argv[i] == "--sizes":
            sizes = [int(x) for x in argv[i + 1].split(",")]
        else:
            sys.exit("predict.py: unknown option %s" % argv[i])
        i += 2
    print("# E1 fence exchange predicted from %s, series %s, p = %d" % (argv[0], series, procs))
    print("# size_bytes predicted_us")
    for s in sizes:
        print("%d %.3f" % (s, predict(models, series, s, procs)))


if __name__ == "__main__":
    main(sys.argv[1:])

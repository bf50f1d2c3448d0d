# nbrma — top-level Makefile. Everything builds into build/<mpi>/ (MPI=mpich by default; MPI=openmpi
# side by side). The parts' rules live in their own module.mk files included below.
#
#   make [MPI=mpich|openmpi] [SAN=1]        build
#   make check [MPI=...] [SAN=1] [FULL=1]   install missing packages, build, run all tests via prove
#                                           (FULL=1: also the testlist lines marked `full`)
#        [LOAD=k] [TIMEOUT_SCALE=f]         k CPU hogs per core during the run; watchdogs x f
#   make bench [MPI=...] [BENCH=regex] [SERIES=vendor,ref,ref-nb] [QUICK=1] [NODES=k] [NET=ucx|am]
#   make summary [MPI=...]                  summary.txt + figures again from results/<mpi>/ alone
#   make plots [MPI=...]                    redraw figures from results/<mpi>/*.json
#   make compare [MPIS="mpich openmpi"]     one report: results/compare/index.html
#   make models [MPI=...] [RUNS=N] [QUICK=1]  (N fresh D1-D7 runs, then) fit 001's models
#   make regress BASELINE=models.json [MPI=...] [SLACK=0.10]  fresh fit vs stored one + perfgate
#   make baseline [MPI=...]                 re-measure ci/baselines/<mpi>.json (docs/models.md)
#   make perfgate [MPI=...]                 compare the fast paths with that baseline
#   make labs [MPI=...]                     build the teaching labs (labs/README.md)
#   make install [PREFIX=/usr/local] [DESTDIR=]
#   make config [MPI=...]                   print MPICC, TEST_RUNNER, BUILD, RESULTS
#   MPI=<any name> MPICC=... MPIEXEC=...    another MPI: build/<name>/, results/<name>/
#   make format                             clang-format the C sources
#   make clean-shm [DRY=1]                  remove /dev/shm objects of killed libnbrma processes

.DEFAULT_GOAL := all
include mk/config.mk

# A CC given by the user reaches the compiler behind the MPI wrapper.
ifneq ($(origin CC),default)
  export MPICH_CC := $(CC)
  export OMPI_CC := $(CC)
endif

INCLUDES := -Iharness
$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(MPICC) $(NBR_CFLAGS) $(INCLUDES) -DNBH_MPI_NAME='"$(MPI)"' $(CFLAGS) -c $< -o $@

# ref/ first: the benchmark rules name libnbrma as a prerequisite, expanded as they are read.
include harness/module.mk
include ref/module.mk
include suites/patterns/module.mk
include suites/apps/module.mk
include harness/tests/module.mk
include suites/conformance/module.mk
include ci/perf/module.mk
include suites/conformance/rmacheck/module.mk
include labs/module.mk

.PHONY: all config deps labs lab-programs check bench summary plots compare models regress baseline perfgate perf-check install installcheck uninstall clean distclean format clean-shm
all: $(PATTERN_BINS) $(APP_BINS) $(TEST_BINS) $(CONF_BINS) $(NBRMA_LIB) $(REF_TEST_BINS) $(NBRMA_TOOLS) $(PERF_BIN) \
  $(RMACHECK_LIB) $(RMACHECK_TOOLS)

# Dependencies: installed once per change of the script (stamp). DEPS=0 skips the step
# (clusters with MPI from modules).
DEPS ?= 1
DEPS_STAMP := build/.deps-$(MPI).stamp
$(DEPS_STAMP): ci/install-deps.sh
ifeq ($(DEPS),1)
	sh ci/install-deps.sh $(MPI)
endif
	@mkdir -p $(@D) && touch $@
deps: $(DEPS_STAMP)

# The teaching labs (labs/README.md): what they use, then every lab's programs (labs/module.mk).
labs: $(DEPS_STAMP)
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory lab-programs
	@echo "labs: built $(words $(LAB_DIRS)) labs ($(LAB_DIRS)) for $(MPI); run labs/<lab>/check"
# (A target of its own with a recipe, so that an up-to-date tree prints no "is up to date" line.)
lab-programs: $(LAB_BINS) $(BUILD)/labs/.py-ok
	@:

FULL ?= 0
LOAD ?= 0
TIMEOUT_SCALE ?=
check: $(DEPS_STAMP)
	$(MAKE) --no-print-directory all labs
	MPI=$(MPI) MPICC="$(MPICC)" MPIEXEC="$(MPIEXEC)" BUILD=$(BUILD) TEST_RUNNER="$(TEST_RUNNER)" \
	  PYTHON=$(PYTHON) SAN=$(SAN) \
	  PROVE="$(PROVE)" FULL=$(FULL) LOAD=$(LOAD) RESULTS=$(RESULTS) \
	  $(if $(TIMEOUT_SCALE),TIMEOUT_SCALE=$(TIMEOUT_SCALE)) sh harness/check.sh

BENCH ?= .
SERIES ?= vendor,ref,ref-nb
QUICK ?= 0
BENCHLISTS ?= suites/patterns/benchlist suites/apps/benchlist
# The figures are drawn from whatever results exist, also when a step failed or hung; the exit
# status is then the driver's.
bench: $(DEPS_STAMP)
	$(MAKE) --no-print-directory all
	@rc=0; $(if $(NET),NBRMA_NET=$(NET)) $(PYTHON) harness/nbrma-bench --bin $(BIN) --out $(RESULTS) --mpi $(MPI) \
	  --runner "$(TEST_RUNNER)" --filter '$(BENCH)' --series '$(SERIES)' \
	  $(if $(filter 1,$(QUICK)),--quick) $(if $(NODES),--nodes $(NODES)) \
	  $(BENCHLISTS) || rc=$$?; \
	$(PYTHON) suites/conformance/rmacheck/bench-scaling.py --bin $(BIN) --mpicc "$(MPICC)" \
	  --runner "$(TEST_RUNNER)" --out $(RESULTS) --mpi $(MPI) --work $(BUILD)/rmacheck-bench \
	  --filter '$(BENCH)' $(if $(filter 1,$(QUICK)),--quick) || [ $$rc -ne 0 ] || rc=1; \
	$(PYTHON) plots/plot.py --results $(RESULTS) || [ $$rc -ne 0 ] || rc=1; exit $$rc

# summary.txt and the figures again, from results/<mpi>/ alone (nothing runs).
summary:
	@rc=0; $(PYTHON) harness/nbrma-bench --summary-only --out $(RESULTS) --mpi $(MPI) \
	  $(BENCHLISTS) || rc=$$?; \
	$(PYTHON) plots/plot.py --results $(RESULTS) || [ $$rc -ne 0 ] || rc=1; exit $$rc

plots:
	$(PYTHON) plots/plot.py --results $(RESULTS)

# One report comparing MPIs (results/compare/index.html, report.txt, plots/): each MPI's
# results/<mpi>/ is reused when it holds benchmark results (make bench MPI=<mpi> otherwise, with
# BENCH/SERIES/QUICK as given), and its conformance column comes from results/<mpi>/check.tsv
# (make check; otherwise the conformance suites alone are run for it). Another MPI's name needs
# its results first: make bench MPI=name MPICC=... MPIEXEC=..., make check MPI=name ...
MPIS ?= mpich openmpi
RESULTS_ROOT ?= results
COMPARE ?= $(RESULTS_ROOT)/compare
compare:
	@for m in $(MPIS); do \
	  if ! ls $(RESULTS_ROOT)/$$m/*.np*.json >/dev/null 2>&1; then \
	    echo "make compare: no benchmark results in $(RESULTS_ROOT)/$$m/: make bench MPI=$$m"; \
	    $(MAKE) --no-print-directory bench MPI=$$m BENCH='$(BENCH)' SERIES='$(SERIES)' \
	      QUICK=$(QUICK) RESULTS=$(RESULTS_ROOT)/$$m || echo "make compare: make bench MPI=$$m failed; comparing what exists"; \
	  fi; \
	  if [ ! -f $(RESULTS_ROOT)/$$m/check.tsv ]; then \
	    echo "make compare: no $(RESULTS_ROOT)/$$m/check.tsv: the conformance suites on $$m"; \
	    $(MAKE) --no-print-directory check MPI=$$m TESTLISTS="$$(find suites/conformance -name testlist \
	      -not -path '*/rmacheck/*' | sort | tr '\n' ' ')" CHECK_RESULTS=$(RESULTS_ROOT)/$$m/check.tsv \
	      || echo "make compare: conformance failures on $$m (see the matrix)"; \
	  fi; \
	done
	$(PYTHON) harness/nbrma-compare --out $(COMPARE) $(foreach m,$(MPIS),$(RESULTS_ROOT)/$(m))

# Timing models (docs/models.md): RUNS=N first adds N runs of D1-D7 under $(RESULTS)/runs/; the
# fit uses every run there (and $(RESULTS) itself when it holds D results).
RUNS ?= 0
SLACK ?= 0.10
models: $(DEPS_STAMP)
ifneq ($(RUNS),0)
	$(MAKE) --no-print-directory all
	@mkdir -p $(BUILD)
	grep -E '^d[1-7]_' suites/patterns/benchlist >$(BUILD)/benchlist-d
	stamp=$$(date -u +%Y%m%dT%H%M%S); for i in $$(seq $(RUNS)); do \
	  $(PYTHON) harness/nbrma-bench --bin $(BIN) --out $(RESULTS)/runs/$$stamp-$$i --mpi $(MPI) \
	    --runner "$(TEST_RUNNER)" --filter '^D[1-7]_' --series '$(SERIES)' \
	    $(if $(filter 1,$(QUICK)),--quick) $(BUILD)/benchlist-d || true; done
endif
	$(PYTHON) harness/nbrma-models fit --results $(RESULTS)

# Both gates: the fresh timing fit against BASELINE (a stored models.json), and the fast paths
# against PERF_BASELINE (PERFGATE=0 skips them, e.g. without valgrind). Exit status non-zero
# when either is worse.
PERFGATE ?= 1
PERF_BASELINE ?= ci/baselines/$(MPI).json
regress: $(PERF_BIN)
	@test -n "$(BASELINE)" || { echo "make regress: set BASELINE=path/to/models.json"; exit 2; }
	@rc=0; \
	$(PYTHON) harness/nbrma-models regress --baseline $(BASELINE) --results $(RESULTS) \
	  --slack $(SLACK) || rc=1; \
	if [ "$(PERFGATE)" != 0 ]; then $(PYTHON) ci/perf/perfgate.py check --bin $(PERF_BIN) \
	  --runner "$(TEST_RUNNER)" --baseline $(PERF_BASELINE) || rc=1; fi; \
	exit $$rc

# The deterministic gate (docs/models.md): instructions per call on the reference's fast paths
# and heap bytes per window, against the baseline committed in ci/baselines/.
baseline: $(PERF_BIN)
	$(PYTHON) ci/perf/perfgate.py baseline --bin $(PERF_BIN) --mpi $(MPI) \
	  --runner "$(TEST_RUNNER)" --out ci/baselines/$(MPI).json
perfgate: $(PERF_BIN)
	$(PYTHON) ci/perf/perfgate.py check --bin $(PERF_BIN) --runner "$(TEST_RUNNER)" \
	  --baseline ci/baselines/$(MPI).json
# The name ARCHITECTURE.md's make contract gives the gate.
perf-check: perfgate

INSTDIR := $(DESTDIR)$(PREFIX)
install: all
	install -d $(INSTDIR)/libexec/nbrma/$(MPI) $(INSTDIR)/share/nbrma/plots \
	  $(INSTDIR)/lib/nbrma-$(MPI) $(INSTDIR)/include \
	  $(INSTDIR)/share/nbrma/harness $(INSTDIR)/share/doc/nbrma
	install -m 755 $(PATTERN_BINS) $(APP_BINS) $(NBRMA_TOOLS) $(INSTDIR)/libexec/nbrma/$(MPI)/
	install -m 755 $(NBRMA_LIB) $(RMACHECK_LIB) $(INSTDIR)/lib/nbrma-$(MPI)/
	install -m 755 $(RMACHECK_TOOLS) $(INSTDIR)/libexec/nbrma/$(MPI)/
	install -m 644 ref/include/nbrma.h $(INSTDIR)/include/
	install -m 644 plots/*.gp $(INSTDIR)/share/nbrma/plots/
	install -m 755 plots/plot.py $(INSTDIR)/share/nbrma/plots/
	install -m 755 harness/nbrma-bench harness/nbrma-compare $(INSTDIR)/share/nbrma/harness/
	install -m 644 harness/nbrma_results.py harness/nbrma_models.py $(INSTDIR)/share/nbrma/harness/
	install -m 755 harness/nbrma-models $(INSTDIR)/share/nbrma/harness/
	install -m 755 ref/tools/nbrma-clean-shm.sh $(INSTDIR)/libexec/nbrma/$(MPI)/nbrma-clean-shm
	cat suites/patterns/benchlist suites/apps/benchlist >$(INSTDIR)/share/nbrma/benchlist
	install -m 644 README.md docs/*.md $(INSTDIR)/share/doc/nbrma/

installcheck:
	@for b in $(PATTERN_NAMES) $(APP_NAMES); do \
	  $(TEST_RUNNER) 1 $(INSTDIR)/libexec/nbrma/$(MPI)/$$b --help >/dev/null \
	    || { echo "installcheck: $$b --help failed"; exit 1; }; done
	$(TEST_RUNNER) 2 $(INSTDIR)/libexec/nbrma/$(MPI)/d1_latency --quick --series vendor \
	  --sizes 8 >/dev/null
	@echo "installcheck: OK ($(INSTDIR)/libexec/nbrma/$(MPI))"

uninstall:
	rm -rf $(INSTDIR)/libexec/nbrma/$(MPI) $(INSTDIR)/share/nbrma $(INSTDIR)/share/doc/nbrma \
	  $(INSTDIR)/lib/nbrma-$(MPI) $(INSTDIR)/include/nbrma.h

# What make would build with, and where (BUILD, RESULTS): a check before a long run on a cluster.
config:
	@echo "MPI=$(MPI)"; echo "MPICC=$(MPICC)"; echo "TEST_RUNNER=$(TEST_RUNNER)"
	@echo "BUILD=$(BUILD)"; echo "RESULTS=$(RESULTS)"; echo "SAN=$(SAN)"
	@echo "CFLAGS=$(CFLAGS)"; echo "LDFLAGS=$(LDFLAGS)"

clean:
	rm -rf $(BUILD)
distclean:
	rm -rf build results
# The node-shared memory objects that libnbrma processes killed by a signal left in /dev/shm
# (ref/tools/nbrma-clean-shm.sh; docs/ref.md): those of processes that are gone. DRY=1 lists.
clean-shm:
	sh ref/tools/nbrma-clean-shm.sh $(if $(filter 1,$(DRY)),--dry-run)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
# Objects built with another configuration (mk/config.mk: MPICC, flags, SAN) are rebuilt.
NBR_OLD_OBJS := $(shell find $(OBJ) -name '*.o' ! -newer $(NBR_CONFIG_STAMP) 2>/dev/null)
ifneq ($(NBR_OLD_OBJS),)
$(NBR_OLD_OBJS): $(NBR_CONFIG_STAMP)
endif
$(NBR_CONFIG_STAMP): ;
.SECONDARY:

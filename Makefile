# nbrma — top-level Makefile. Everything builds into build/<mpi>/ (MPI=mpich by default; MPI=openmpi
# side by side). The parts' rules live in their own module.mk files included below.
#
#   make [MPI=mpich|openmpi] [SAN=1]        build
#   make check [MPI=...] [SAN=1]            install missing packages, build, run all tests via prove
#   make bench [MPI=...] [BENCH=regex] [SERIES=vendor,ref,ref-nb] [QUICK=1]
#   make plots [MPI=...]                    redraw figures from results/<mpi>/*.json
#   make install [PREFIX=/usr/local] [DESTDIR=]
#   make format                             clang-format the C sources

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
include harness/tests/module.mk
include suites/conformance/module.mk
include suites/conformance/rmacheck/module.mk

.PHONY: all deps check bench plots install installcheck uninstall clean distclean format
all: $(PATTERN_BINS) $(TEST_BINS) $(CONF_BINS) $(NBRMA_LIB) $(REF_TEST_BINS) $(NBRMA_TOOLS) \
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

check: $(DEPS_STAMP)
	$(MAKE) --no-print-directory all
	MPI=$(MPI) BUILD=$(BUILD) TEST_RUNNER="$(TEST_RUNNER)" PYTHON=$(PYTHON) SAN=$(SAN) \
	  PROVE="$(PROVE)" sh harness/check.sh

BENCH ?= .
SERIES ?= vendor,ref,ref-nb
QUICK ?= 0
bench: $(DEPS_STAMP)
	$(MAKE) --no-print-directory all
	$(PYTHON) harness/nbrma-bench --bin $(BIN) --out $(RESULTS) --mpi $(MPI) \
	  --runner "$(TEST_RUNNER)" --filter '$(BENCH)' --series '$(SERIES)' \
	  $(if $(filter 1,$(QUICK)),--quick) suites/patterns/benchlist
	$(PYTHON) plots/plot.py --results $(RESULTS)

plots:
	$(PYTHON) plots/plot.py --results $(RESULTS)

INSTDIR := $(DESTDIR)$(PREFIX)
install: all
	install -d $(INSTDIR)/libexec/nbrma/$(MPI) $(INSTDIR)/share/nbrma/plots \
	  $(INSTDIR)/lib/nbrma-$(MPI) $(INSTDIR)/include \
	  $(INSTDIR)/share/nbrma/harness $(INSTDIR)/share/doc/nbrma
	install -m 755 $(PATTERN_BINS) $(NBRMA_TOOLS) $(INSTDIR)/libexec/nbrma/$(MPI)/
	install -m 755 $(NBRMA_LIB) $(RMACHECK_LIB) $(INSTDIR)/lib/nbrma-$(MPI)/
	install -m 755 $(RMACHECK_TOOLS) $(INSTDIR)/libexec/nbrma/$(MPI)/
	install -m 644 ref/include/nbrma.h $(INSTDIR)/include/
	install -m 644 plots/*.gp $(INSTDIR)/share/nbrma/plots/
	install -m 755 plots/plot.py $(INSTDIR)/share/nbrma/plots/
	install -m 755 harness/nbrma-bench $(INSTDIR)/share/nbrma/harness/
	install -m 644 harness/nbrma_results.py $(INSTDIR)/share/nbrma/harness/
	install -m 644 suites/patterns/benchlist $(INSTDIR)/share/nbrma/benchlist
	install -m 644 README.md docs/*.md $(INSTDIR)/share/doc/nbrma/

installcheck:
	@for b in $(PATTERN_NAMES); do \
	  $(TEST_RUNNER) 1 $(INSTDIR)/libexec/nbrma/$(MPI)/$$b --help >/dev/null \
	    || { echo "installcheck: $$b --help failed"; exit 1; }; done
	$(TEST_RUNNER) 2 $(INSTDIR)/libexec/nbrma/$(MPI)/d1_latency --quick --series vendor \
	  --sizes 8 >/dev/null
	@echo "installcheck: OK ($(INSTDIR)/libexec/nbrma/$(MPI))"

uninstall:
	rm -rf $(INSTDIR)/libexec/nbrma/$(MPI) $(INSTDIR)/share/nbrma $(INSTDIR)/share/doc/nbrma \
	  $(INSTDIR)/lib/nbrma-$(MPI) $(INSTDIR)/include/nbrma.h

clean:
	rm -rf $(BUILD)
distclean:
	rm -rf build results

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
.SECONDARY:

# labs/: the teaching labs (labs/README.md, docs/labs.md). `make labs` builds what a lab needs
# (rmacheck, libnbrma, the benchmarks: `all`) and every lab's starter and instructor solution
# with the MPI compiler at -O0 -g, warnings as errors, into $(BUILD)/labs/<lab>/{starter,solution}/,
# and parses every lab's Python (checks, predict.py). A lab's `check` builds the student's copy
# itself (and again with rmacheck-cc).
LAB_DIRS := $(patsubst labs/%/,%,$(sort $(dir $(wildcard labs/[0-9]*/*.c labs/[0-9]*/check))))
LAB_C := $(sort $(wildcard labs/[0-9]*/*.c))
LAB_SOL_C := $(sort $(wildcard labs/solutions/[0-9]*/*.c))
LAB_PY := $(sort $(wildcard labs/common/*.py labs/[0-9]*/*.py labs/solutions/[0-9]*/*.py \
  labs/[0-9]*/check))
# Sources that include <nbrma.h> link libnbrma (the MPIX_Win_i* calls).
LAB_NBRMA := $(shell grep -l '^#include <nbrma.h>' $(LAB_C) $(LAB_SOL_C) 2>/dev/null)
LAB_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O0 -g -Ilabs/common -Iref/include
LAB_NBRMA_LDFLAGS = -L$(LIB) -Wl,--no-as-needed -lnbrma -Wl,--as-needed -Wl,-rpath,$(abspath $(LIB))

# lab_bin SOURCE TAG: the binary of labs/<lab>/x.c (starter) or labs/solutions/<lab>/x.c
lab_bin = $(BUILD)/labs/$(notdir $(patsubst %/,%,$(dir $(1))))/$(2)/$(basename $(notdir $(1)))
LAB_BINS := $(foreach s,$(LAB_C),$(call lab_bin,$(s),starter)) \
  $(foreach s,$(LAB_SOL_C),$(call lab_bin,$(s),solution))

define lab_rule
$(call lab_bin,$(1),$(2)): $(1) labs/common/labutil.h harness/relax.h $(NBRMA_LIB)
	@mkdir -p $$(@D)
	$$(MPICC) $$(LAB_CFLAGS) -o $$@ $$< $(if $(filter $(1),$(LAB_NBRMA)),$$(LAB_NBRMA_LDFLAGS))
endef
$(foreach s,$(LAB_C),$(eval $(call lab_rule,$(s),starter)))
$(foreach s,$(LAB_SOL_C),$(eval $(call lab_rule,$(s),solution)))

$(BUILD)/labs/.py-ok: $(LAB_PY)
	@mkdir -p $(@D)
	$(PYTHON) -c 'import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]' $^
	@touch $@

# (the `labs` target itself is in the top-level Makefile: it installs dependencies first)

# suites/conformance/rmacheck/: rmacheck, the memory-consistency hazard checker (docs/rmacheck.md).
# lib/librmacheck.so: the runtime (MPI wrappers + load/store hooks); bin/rmacheck: the driver and
# analysis; bin/rmacheck-cc: the compiler wrapper. The corpus (cases/*.c) is built by
# run-cases.sh with rmacheck-cc at test time.
RMACHECK_SRC := $(sort $(wildcard suites/conformance/rmacheck/rt/*.c))
RMACHECK_OBJ := $(RMACHECK_SRC:%.c=$(OBJ)/pic/%.o)
RMACHECK_LIB := $(LIB)/librmacheck.so
RMACHECK_TOOLS := $(BIN)/rmacheck $(BIN)/rmacheck-cc

# The runtime is never built with sanitizers of its own: it defines the __tsan_* entry points.
$(OBJ)/pic/suites/conformance/rmacheck/rt/%.o: suites/conformance/rmacheck/rt/%.c
	@mkdir -p $(@D)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP -fPIC -fvisibility=default $(CFLAGS) -c $< -o $@

$(RMACHECK_LIB): $(RMACHECK_OBJ)
	@mkdir -p $(@D)
	$(MPICC) -shared $(LDFLAGS) -o $@ $^ -ldl -lpthread

# The interpreter is resolved once here ($(PYTHON)'s sys.executable) and run with -S (no site
# packages: rmacheck uses only the standard library): `#!/usr/bin/env python3` went through a
# version manager's shim and site's .pth files on every run, 0.1-0.3 s of start-up per checked
# run (docs/rmacheck.md "Scaling").
$(BIN)/rmacheck: suites/conformance/rmacheck/rmacheck.py $(RMACHECK_LIB)
	@mkdir -p $(@D)
	py=$$($(PYTHON) -c 'import sys; print(sys.executable)') && [ -n "$$py" ] && \
	sed -e '1s|^#!.*|#!'"$$py"' -S|' -e 's|@MPI@|$(MPI)|g' $< >$@ && chmod 755 $@

$(BIN)/rmacheck-cc: suites/conformance/rmacheck/rmacheck-cc.in $(RMACHECK_LIB)
	@mkdir -p $(@D)
	sed -e 's|@MPICC@|$(MPICC)|g' -e 's|@MPI@|$(MPI)|g' $< >$@ && chmod 755 $@

# ci/perf/: the deterministic performance gate (docs/models.md). nbrma-fastpath drives the
# reference's fast paths a fixed number of times; ci/perf/perfgate.py counts their instructions
# under callgrind and the heap bytes per window, and compares them with ci/baselines/<mpi>.json.
PERF_BIN := $(BIN)/nbrma-fastpath
$(PERF_BIN): $(OBJ)/ci/perf/fastpath.o $(NBRMA_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< -L$(LIB) -Wl,--no-as-needed -lnbrma -Wl,--as-needed \
	  '-Wl,-rpath,$$ORIGIN/../lib'
$(OBJ)/ci/perf/%.o: ci/perf/%.c
	@mkdir -p $(@D)
	$(MPICC) $(NBR_CFLAGS) -Iref/include $(CFLAGS) -c $< -o $@

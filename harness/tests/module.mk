# harness/tests/: unit tests of the harness (C programs emitting TAP) and test helper binaries.
TEST_NAMES := test_opts test_calib test_align test_relax tap_demo crashy mpi_version
TEST_BINS := $(TEST_NAMES:%=$(TESTBIN)/%)

$(TESTBIN)/%: $(OBJ)/harness/tests/%.o $(HARNESS_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS_LIB) $(HARNESS_LIBS)

# mpi_version needs MPI alone (check.sh asks it the library's version; test_build_config.sh builds
# it in scratch trees, so it must be quick to build).
$(TESTBIN)/mpi_version: $(OBJ)/harness/tests/mpi_version.o
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $<

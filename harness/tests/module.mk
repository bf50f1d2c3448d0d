# harness/tests/: unit tests of the harness (C programs emitting TAP) and test helper binaries.
TEST_NAMES := test_opts test_calib test_align tap_demo crashy mpi_version
TEST_BINS := $(TEST_NAMES:%=$(TESTBIN)/%)

$(TESTBIN)/%: $(OBJ)/harness/tests/%.o $(HARNESS_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS_LIB) $(HARNESS_LIBS)

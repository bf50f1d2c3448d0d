# suites/patterns/: one benchmark binary per experiment of EXPERIMENTS.md (D1–D7 so far).
PATTERN_NAMES := d1_latency d2_overlap d3_msgrate d4_atomics d5_fence d6_pscw d7_passive
PATTERN_BINS := $(PATTERN_NAMES:%=$(BIN)/%)

$(BIN)/%: $(OBJ)/suites/patterns/%.o $(HARNESS_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS_LIB) $(HARNESS_LIBS)

# suites/apps/: the application kernels G1–G5 of EXPERIMENTS.md §G (docs/apps.md), one binary
# each, on the same harness as suites/patterns (options, series, JSON).
APP_NAMES := g1_transactions g2_lu g3_radix g4_hashtable g5_dsde
APP_BINS := $(APP_NAMES:%=$(BIN)/%)
APP_COMMON := $(OBJ)/suites/apps/apps.o

$(APP_BINS): $(BIN)/%: $(OBJ)/suites/apps/%.o $(APP_COMMON) $(HARNESS_LIB) $(NBRMA_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< $(APP_COMMON) $(HARNESS_LIB) $(NBRMA_LINK) $(HARNESS_LIBS)

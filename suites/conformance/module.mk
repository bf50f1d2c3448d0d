# suites/conformance/: TAP tests of RMA semantics, one program per file, run on the vendor MPIs
# (and on libnbrma once it serves windows). Built into $(BUILD)/conformance/.
# nb_*.c test libnbrma's own extension (nonblocking synchronization, docs/nonblocking.md): they
# include nbrma.h and link libnbrma, so they run on the reference only; the others link no
# libnbrma and run unchanged on the vendor (or on the reference, preloaded).
CONF_NAMES := $(sort $(basename $(notdir $(wildcard suites/conformance/*.c))))
CONF_NB_NAMES := $(filter nb_%,$(CONF_NAMES))
CONF_BINS := $(CONF_NAMES:%=$(BUILD)/conformance/%)
CONF_NB_BINS := $(CONF_NB_NAMES:%=$(BUILD)/conformance/%)

$(filter-out $(CONF_NB_BINS),$(CONF_BINS)): $(BUILD)/conformance/%: $(OBJ)/suites/conformance/%.o $(HARNESS_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $^ $(HARNESS_LIBS)

# rpath: the build tree (conformance/../lib), as for the pattern benchmarks (NBRMA_LINK).
$(OBJ)/suites/conformance/nb_%.o: INCLUDES += -Iref/include
$(CONF_NB_BINS): $(BUILD)/conformance/%: $(OBJ)/suites/conformance/%.o $(HARNESS_LIB) $(NBRMA_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS_LIB) -L$(LIB) -Wl,--no-as-needed \
	  -lnbrma -Wl,--as-needed '-Wl,-rpath,$$ORIGIN/../lib' $(HARNESS_LIBS)

# suites/conformance/: TAP tests of RMA semantics, one program per file, run on the vendor MPIs
# (and on libnbrma once it serves windows). Built into $(BUILD)/conformance/.
CONF_NAMES := $(sort $(basename $(notdir $(wildcard suites/conformance/*.c))))
CONF_BINS := $(CONF_NAMES:%=$(BUILD)/conformance/%)

$(CONF_BINS): $(BUILD)/conformance/%: $(OBJ)/suites/conformance/%.o $(HARNESS_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $^ $(HARNESS_LIBS)

# harness/: the static library every benchmark and test links (options, timing, Google
# Benchmark shim, reporting, TAP).
HARNESS_CSRC := harness/opts.c harness/timing.c harness/bench.c harness/tap.c
HARNESS_OBJ := $(HARNESS_CSRC:%.c=$(OBJ)/%.o) $(OBJ)/harness/gbench.o
HARNESS_LIB := $(LIB)/libnbh.a
HARNESS_LIBS := -lbenchmark -lstdc++ -lpthread -lm

$(HARNESS_LIB): $(HARNESS_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(OBJ)/harness/gbench.o: harness/gbench.cc
	@mkdir -p $(@D)
	$(CXX) $(NBR_CXXFLAGS) $(CXXFLAGS) -c $< -o $@

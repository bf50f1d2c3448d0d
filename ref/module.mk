# ref/: libnbrma, the reference MPI-3 RMA implementation (a PMPI layer). Sources under ref/src
# (by concept) and ref/src/transport (by backend) build position-independent objects linked
# into lib/libnbrma.so; unit tests in ref/tests link the same objects to reach internals.
REF_SRC := $(sort $(wildcard ref/src/*.c ref/src/transport/*.c))
ifneq ($(UCX),1)
  REF_SRC := $(filter-out ref/src/transport/ucx.c,$(REF_SRC))
endif
REF_OBJ := $(REF_SRC:%.c=$(OBJ)/pic/%.o)
NBRMA_LIB := $(LIB)/libnbrma.so
REF_TEST_NAMES := $(sort $(basename $(notdir $(wildcard ref/tests/*.c))))
REF_TEST_BINS := $(REF_TEST_NAMES:%=$(TESTBIN)/%)
REF_CFLAGS := -fPIC -Iref/include -Iref/src -fvisibility=hidden $(UCX_CFLAGS)

$(OBJ)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(MPICC) $(NBR_CFLAGS) $(REF_CFLAGS) $(CFLAGS) -c $< -o $@

ifneq ($(REF_SRC),)
$(NBRMA_LIB): $(REF_OBJ)
	@mkdir -p $(@D)
	$(MPICC) -shared $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $^ $(UCX_LIBS) -lpthread

# nbrma-settings: the settings table, printed (installed with the benchmarks).
NBRMA_TOOLS := $(BIN)/nbrma-settings
$(BIN)/nbrma-settings: $(OBJ)/ref/tools/nbrma_settings.o $(NBRMA_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< -L$(LIB) -Wl,--no-as-needed -lnbrma -Wl,--as-needed \
	  '-Wl,-rpath,$$ORIGIN/../lib:$$ORIGIN/../../../lib/nbrma-$(MPI)'

$(OBJ)/ref/tools/%.o: ref/tools/%.c
	@mkdir -p $(@D)
	$(MPICC) $(NBR_CFLAGS) -Iref/include $(CFLAGS) -c $< -o $@

$(REF_TEST_BINS): $(TESTBIN)/%: $(OBJ)/ref/tests/%.o $(REF_OBJ) $(HARNESS_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $^ $(HARNESS_LIBS) $(UCX_LIBS)

$(OBJ)/ref/tests/%.o: ref/tests/%.c
	@mkdir -p $(@D)
	$(MPICC) $(NBR_CFLAGS) -Iharness -Iref/include -Iref/src $(UCX_CFLAGS) $(CFLAGS) -c $< -o $@
else
NBRMA_LIB :=
NBRMA_TOOLS :=
endif

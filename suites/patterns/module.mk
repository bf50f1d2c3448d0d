# suites/patterns/: one benchmark binary per experiment of EXPERIMENTS.md (A1–A7, B1–B5, C, D1–D7, E),
# I1 (IMB-RMA's passive-target shape: docs/experiments-i.md)
# and per cost of the reference itself (R1-R3: docs/experiments-r.md).
PATTERN_NAMES := d1_latency d2_overlap d3_msgrate d4_atomics d5_fence d6_pscw d7_passive \
  a1_late_post a2_early_transfer a3_early_wait a4_late_complete a5_early_fence a6_wait_at_fence \
  a7_late_unlock b1_aaar_gats b2_aaar_lock b3_aaer b4_eaer b5_eaar r1_deferred r2_windows \
  r3_noncontig e_ghost \
  c_sched u1_ucp_floor i1_imb f3_metadata f6_issue f4_fence f1_noncontig f2_acc f5_lock
PATTERN_BINS := $(PATTERN_NAMES:%=$(BIN)/%)

# Linked with libnbrma (one binary, every series): the harness picks vendor or ref per case with
# MPIX_Nbrma_set_impl. rpath: the build tree, and the installed layout (see make install).
NBRMA_LINK := -L$(LIB) -Wl,--no-as-needed -lnbrma -Wl,--as-needed '-Wl,-rpath,$$ORIGIN/../lib:$$ORIGIN/../../../lib/nbrma-$(MPI)'
$(BIN)/%: $(OBJ)/suites/patterns/%.o $(HARNESS_LIB) $(NBRMA_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(NBR_LDFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS_LIB) $(NBRMA_LINK) $(HARNESS_LIBS)

# U1, the raw UCP floor: UCP itself (without UCX, a binary that says so).
$(OBJ)/suites/patterns/u1_ucp_floor.o: CFLAGS += $(if $(filter 1,$(UCX)),-DNBH_HAVE_UCX=1 $(UCX_CFLAGS))
$(BIN)/u1_ucp_floor: HARNESS_LIBS += $(UCX_LIBS)

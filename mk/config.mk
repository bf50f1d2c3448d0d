# Build configuration shared by every sub-makefile (included from the top-level Makefile).
# One MPI per build tree: build/<mpi>/ (build/<mpi>-san/ with SAN=1), so MPICH and Open MPI
# builds sit side by side. Every tool is a variable; nothing here assumes the plain `mpicc`
# alternative, which installing Open MPI flips on Debian.
#
# MPI names the MPI: mpich and openmpi are Debian's (their wrappers and launchers are known);
# any other name (mvapich, impi, cray, a build in /opt, ...) needs MPICC and MPIEXEC (or
# TEST_RUNNER) and gets its own build/<name>/ and results/<name>/, its name in every JSON file.

MPI ?= mpich
ifneq ($(words $(MPI)),1)
  $(error MPI='$(MPI)': one name, e.g. MPI=mpich, MPI=openmpi or MPI=mvapich)
endif
ifneq ($(shell echo '$(MPI)' | grep -Eqx '[A-Za-z0-9][A-Za-z0-9_.+-]*' && echo ok),ok)
  $(error MPI=$(MPI): a name of letters, digits and . _ + - (it names build/$(MPI)/ and results/$(MPI)/))
endif

ifeq ($(MPI),mpich)
  MPICC ?= mpicc.mpich
  MPIEXEC ?= mpiexec.mpich
  MPIEXEC_FLAGS ?=
else ifeq ($(MPI),openmpi)
  MPICC ?= mpicc.openmpi
  MPIEXEC ?= mpirun.openmpi
  # Tests and benchmarks may use more ranks than cores; root (CI containers) needs consent.
  MPIEXEC_FLAGS ?= --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
else
  # Another MPI: its wrapper and launcher must be given (never guess the plain mpicc).
  ifeq ($(origin MPICC),undefined)
    $(error MPI=$(MPI) is not mpich or openmpi: give its compiler wrapper and launcher, e.g. make MPI=$(MPI) MPICC=/opt/$(MPI)/bin/mpicc MPIEXEC=/opt/$(MPI)/bin/mpiexec (or TEST_RUNNER="srun -n"))
  endif
  ifeq ($(origin MPIEXEC)$(origin TEST_RUNNER),undefinedundefined)
    $(error MPI=$(MPI): give its launcher, MPIEXEC=/path/to/mpiexec (run as "MPIEXEC [MPIEXEC_FLAGS] -n N prog") or TEST_RUNNER="srun -n")
  endif
  MPIEXEC_FLAGS ?=
endif

# How a test or benchmark with N ranks is launched: "$(TEST_RUNNER) N prog args".
# Clusters: make check TEST_RUNNER="srun -n"
TEST_RUNNER ?= $(strip $(MPIEXEC) $(MPIEXEC_FLAGS)) -n

CXX ?= g++
CFLAGS ?= -O2 -g
CXXFLAGS ?= -O2 -g
PREFIX ?= /usr/local
DESTDIR ?=
PYTHON ?= python3
PROVE ?= prove

WARN := -Wall -Wextra -Werror
NBR_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP
NBR_CXXFLAGS := -std=c++17 $(WARN) -MMD -MP

ifeq ($(SAN),1)
  SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  NBR_CFLAGS += $(SAN_FLAGS)
  NBR_CXXFLAGS += $(SAN_FLAGS)
  NBR_LDFLAGS += $(SAN_FLAGS)
  BUILD ?= build/$(MPI)-san
else ifeq ($(SAN),thread)
  # ThreadSanitizer: make check runs the tests marked `threads` in the testlists.
  # -Wno-tsan: the fences order memory seen by other processes, which TSan does not model.
  SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
  NBR_CFLAGS += $(SAN_FLAGS)
  NBR_CXXFLAGS += $(SAN_FLAGS)
  NBR_LDFLAGS += $(SAN_FLAGS)
  BUILD ?= build/$(MPI)-tsan
else ifneq ($(SAN),)
  $(error SAN=$(SAN) is not supported: use SAN=1 (AddressSanitizer + UBSan) or SAN=thread)
else
  BUILD ?= build/$(MPI)
endif

# UCX (libnbrma's ucx transport, ref/src/transport/ucx.c): built when pkg-config finds libucx
# (Debian: libucx-dev, which ci/install-deps.sh installs); `make UCX=0` builds without it, in a
# build tree of its own (build/<mpi>-noucx).
UCX ?= $(shell pkg-config --exists ucx 2>/dev/null && echo 1 || echo 0)
ifeq ($(UCX),1)
  UCX_CFLAGS := -DNBR_HAVE_UCX=1 $(shell pkg-config --cflags ucx 2>/dev/null)
  UCX_LIBS := $(or $(shell pkg-config --libs-only-L ucx 2>/dev/null),) -lucp -lucs
else ifeq ($(UCX),0)
  UCX_CFLAGS :=
  UCX_LIBS :=
  ifeq ($(origin UCX),command line)
    BUILD := $(BUILD)-noucx
  endif
else
  $(error UCX=$(UCX): use UCX=1 (the default where libucx-dev is installed) or UCX=0)
endif

BIN := $(BUILD)/bin
LIB := $(BUILD)/lib
OBJ := $(BUILD)/obj
TESTBIN := $(BUILD)/tests
# NODES=k: every benchmark on virtual nodes of k ranks (NBRMA_RANKS_PER_NODE; 1: every rank its
# own node, so ref's pairs go over the am transport); results kept apart from the one-node runs.
NODES ?=
# NET=am|ucx|auto: libnbrma's transport across nodes for the run (NBRMA_NET), kept apart too.
NET ?=
RESULTS ?= results/$(MPI)$(if $(NODES),/nodes$(NODES))$(if $(NET),-$(NET))

# The configuration this tree is built with, recorded in $(BUILD)/config.txt: when MPICC (or what
# the wrapper runs: `-show`, so a different module behind the same name counts), a compiler or
# the flags change, harness/build-config.sh says what changed and touches $(BUILD)/config.stamp,
# and every object built before it is rebuilt (Makefile: the objects depend on the stamp).
NBR_CONFIG_STAMP := $(BUILD)/config.stamp
nbr_q = '$(subst ','\'',$(1))'
# BUILD is recorded as spelled: the dependency files name their targets with it, so a tree built
# as build/mpich and then as /abs/.../build/mpich would otherwise miss every header change.
NBR_CONFIG_LINES := $(call nbr_q,MPI=$(MPI)) $(call nbr_q,BUILD=$(BUILD)) $(call nbr_q,MPICC=$(MPICC)) \
  $(call nbr_q,MPICC_PATH=$(shell command -v $(firstword $(MPICC)) 2>/dev/null)) \
  $(call nbr_q,MPICC_SHOW=$(shell $(MPICC) -show 2>/dev/null || $(MPICC) --showme 2>/dev/null)) \
  $(call nbr_q,CC=$(if $(filter default,$(origin CC)),,$(CC))) $(call nbr_q,CXX=$(CXX)) \
  $(call nbr_q,CFLAGS=$(CFLAGS)) $(call nbr_q,CXXFLAGS=$(CXXFLAGS)) \
  $(call nbr_q,LDFLAGS=$(LDFLAGS)) $(call nbr_q,SAN=$(SAN)) $(call nbr_q,UCX=$(UCX))
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
  $(shell printf '%s\n' $(NBR_CONFIG_LINES) | sh harness/build-config.sh $(BUILD) >&2)
endif

# kbatch: a gang batch scheduler for Kubernetes.
#
#   make            release build of every program into bin/
#   make install    the programs, their man pages (help2man, from --help),
#                   the docs, CRDs and examples under PREFIX (/usr/local),
#                   staged under DESTDIR when set; make uninstall
#   make test       AddressSanitizer + UBSan build, unit, scenario and e2e tests;
#                   then the scheduler's e2e tests again on the real bed
#                   (kube-apiserver, etcd, KWOK from test/k8s) when Go is
#                   there: KBATCH_K8S=skip skips that, =require (CI) fails
#                   rather than skip. The tests run TEST_JOBS at a time
#                   (twice make's jobs) by test/run.sh: one line each, a
#                   line per suite, and last "N passed, M failed"; V=1 shows
#                   every test's output. make unit, make e2e, make e2e-k8s:
#                   one suite
#   make -jN        every target uses N jobs; without -j, nproc of them
#   make bench      the session benchmark (docs/PERFORMANCE.md); make
#                   bench-check: its instruction counts against
#                   test/bench/baseline (CI); make
#                   bench-k8s: the daemon at scale on the real bed; make
#                   bench-peers: against Volcano's scheduler and
#                   kube-scheduler on it (PEERS_SIZE=small: a tenth)
#   make fuzz       each fuzz target for FUZZ_SECONDS (default 60) in turn;
#                   FUZZ_TARGETS="http conf" for some; .ci/run fuzzes each
#                   for 30 s after make test
#   make image-test deploy/Dockerfile builds and its image runs (docker, or
#                   debootstrap and chroot as root); .ci/run runs it
#   make format     clang-format over the tree
#   make deps       install missing Debian packages to build (make test-deps:
#                   and to test)
#   make clean
#
# Sources are found by wildcard so that adding a module, an action, a plugin,
# a program or a test needs no edit here:
#   pkg/*/*.c actions/*.c plugins/*.c  -> one static library
#   cmd/NAME/*.c                        -> program NAME
#   test/unit/NAME_test.c               -> unit test NAME (cmocka)
#   test/e2e/*.sh                       -> shell tests, run with BIN set
#   test/fuzz/NAME_fuzz.c               -> libFuzzer target NAME (clang)

# What make needs to build the programs, and what make test, fuzz and bench
# need besides (cmocka for the unit tests, kubectl and curl for the e2e
# tests, clang for the fuzz targets).  kubectl is looked for as a command,
# as it often comes from elsewhere (a cloud SDK); where there is none,
# Debian's kubernetes-client provides it.
BUILD_PKGS := gcc make pkg-config libcurl4-openssl-dev libyajl-dev libuv1-dev \
              libyaml-dev libmicrohttpd-dev uthash-dev libgnutls28-dev \
              protobuf-c-compiler libprotobuf-c-dev
TEST_PKGS  := libcmocka-dev curl clang python3-kubernetes openssl valgrind $(MAN_PKGS) man-db
MAN_PKGS   := help2man
TEST_CMDS  := kubectl=kubernetes-client
CC      ?= cc
MODE    ?= release

WARN    := -std=c11 -Wall -Wextra -Wpedantic -Wstrict-prototypes -Werror \
           -Wno-unused-parameter
DEFS    := -D_GNU_SOURCE -Ipkg -I.
LDLIBS  := -lcurl -lyajl -luv -lyaml -lmicrohttpd -lgnutls -lprotobuf-c -lpthread -lm

ifeq ($(MODE),asan)
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
           -fno-sanitize-recover=undefined -DKB_TESTING
LDOPT   := -fsanitize=address,undefined
else
# Link-time optimisation: the session's hot paths call across files
# (heaps into task and job order, search into the node tree); inlined
# there, the whole Lublin replay runs 6% faster, decisions unchanged.
OPT     := -O2 -g -flto=auto
LDOPT   := -O2 -g -flto=auto
endif

B       := build/$(MODE)
LIB_SRC := $(sort $(wildcard pkg/*/*.c actions/*.c plugins/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
# pkg/MODULE/NAME.proto -> $(B)/gen/MODULE/NAME.pb-c.[ch] (protobuf-c), included
# as "MODULE/NAME.pb-c.h" and linked into the library.
PROTO   := $(wildcard pkg/*/*.proto)
PROTO_C := $(PROTO:pkg/%.proto=$(B)/gen/%.pb-c.c)
PROTO_O := $(PROTO_C:%.c=%.o)
DEFS    += -I$(B)/gen
CMDS    := $(notdir $(wildcard cmd/*))
UNIT    := $(notdir $(basename $(wildcard test/unit/*_test.c)))
E2E     := $(sort $(wildcard test/e2e/*.sh))
# The tests written on test/e2e/lib/scheduler.sh take their server from
# KBATCH_E2E_SERVER: these run on the real bed too.
E2E_K8S := $(sort $(shell grep -l 'lib/scheduler.sh' $(E2E) /dev/null))

ifeq ($(MODE),release)
BINDIR  := bin
else
BINDIR  := $(B)/bin
endif
PROGS   := $(CMDS:%=$(BINDIR)/%)

.SECONDEXPANSION:
.SECONDARY:
.PHONY: all deps test-deps install-deps test unit e2e e2e-k8s image-test bench bench-check bench-baseline bench-k8s bench-peers fuzz format clean install uninstall
all: deps
	@$(MAKE) --no-print-directory $(JOBS) progs

.PHONY: progs
progs: $(PROGS)

# Installs only what is missing; apt-get runs as root on these machines.
deps: PKGS = $(BUILD_PKGS)
test-deps: PKGS = $(BUILD_PKGS) $(TEST_PKGS)
test-deps: CMDS_PKGS = $(TEST_CMDS)
install-deps: PKGS = $(MAN_PKGS)
deps test-deps install-deps:
	@missing=""; for p in $(PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
	    || missing="$$missing $$p"; done; \
	for c in $(CMDS_PKGS); do \
	  command -v $${c%%=*} >/dev/null 2>&1 || missing="$$missing $${c#*=}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(WARN) $(OPT) $(DEFS) -MMD -MP -c $< -o $@

$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: pkg/%.proto
	@mkdir -p $(B)/gen
	@echo "  PROTOC  $<"
	@protoc-c --proto_path=pkg --c_out=$(B)/gen $<

# Generated code: built without -Wpedantic -Werror, which it is not written for.
$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	@echo "  CC      $<"
	@$(CC) -std=c11 $(OPT) $(DEFS) -c $< -o $@

$(LIB_OBJ): | $(PROTO_C:.c=.h)

$(B)/libkbatch.a: $(LIB_OBJ) $(PROTO_O)
	@rm -f $@
	@ar rcs $@ $^

$(BINDIR)/%: $(B)/libkbatch.a $$(addprefix $(B)/obj/,$$(addsuffix .o,$$(basename $$(wildcard cmd/$$*/*.c))))
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(LDOPT) -o $@ $(filter %.o,$^) $(B)/libkbatch.a $(LDLIBS)

$(B)/test/%_test: $(B)/obj/test/unit/%_test.o $(B)/obj/test/unit/testutil.o $(B)/libkbatch.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(LDOPT) -o $@ $(filter %.o,$^) $(B)/libkbatch.a $(LDLIBS) -lcmocka

# make test: everything under the sanitizers, then every test, TEST_JOBS at a
# time (test/run.sh runs one and prints its line; the suites
# share no port nor folder: lib/scheduler.sh's free_port reserves, each test
# gets its own TMPDIR). The summary gives each suite's counts and time, and
# ends with "N passed, M failed". The real bed's suite joins when
# test/k8s/suite.sh --prepare finds Go and the bed (exit 3: skipped, said why).
TRES    := build/asan/results
test: test-deps
	@start=$$(date +%s); rm -rf $(TRES); \
	$(MAKE) --no-print-directory MODE=asan $(JOBS) test-build || exit 1; \
	suites="unit e2e" runs="e2e-run unit-run" rc=0; \
	bash test/k8s/suite.sh --prepare || rc=$$?; \
	case $$rc in 0) suites="$$suites e2e-k8s" runs="$$runs e2e-k8s-run";; 3) ;; \
	*) suites="$$suites e2e-k8s"; mkdir -p $(TRES)/e2e-k8s; echo "fail 0" >$(TRES)/e2e-k8s/bed;; esac; \
	$(OWN_JOBS) --no-print-directory MODE=asan $$runs; \
	bash test/run.sh summary $(TRES) $$start $$suites

unit e2e e2e-k8s: test-deps
	@start=$$(date +%s); rm -rf $(B)/results/$@; \
	$(MAKE) --no-print-directory $(JOBS) test-build || exit 1; \
	if [ $@ = e2e-k8s ]; then rc=0; bash test/k8s/suite.sh --prepare || rc=$$?; \
	  [ $$rc = 3 ] && exit 0; [ $$rc = 0 ] || exit 1; fi; \
	$(OWN_JOBS) --no-print-directory $@-run; \
	bash test/run.sh summary $(B)/results $$start $@

# Without -j, as many jobs as cores (make -j2 keeps its 2). GNU make 4.3 shows
# -j to recipes only, so the targets that recurse pass this on.
NPROC   := $(shell nproc 2>/dev/null || echo 1)
JOBS     = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC))
# The tests run TEST_JOBS at a time: twice make's jobs unless given, as they
# mostly wait on their servers and schedulers (make test's e2e suite took
# 875 s of wall time and 172 s of CPU, test/run.sh's per-suite line).
TEST_JOBS = $(shell echo $$((2 * $(or $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS) $(JOBS))),$(NPROC)))))
# A sub-make with a -j of its own, out of the jobserver (no warning).
OWN_JOBS = MAKEFLAGS='$(filter-out -j% --jobserver%,$(MAKEFLAGS))' $(MAKE) -j$(TEST_JOBS)

.PHONY: test-build unit-run e2e-run e2e-k8s-run FORCE
test-build: $(UNIT:%=$(B)/test/%) $(PROGS)
	@:

# The longest first, so that the jobs end together: scheduler_quiet's two
# minutes, mostly waiting, overlap all the others. Each of these took 25 s
# or more alone on a busy 2-core machine; the rest take less.
E2E_SLOW_NAMES := apiserver_fuzz scheduler_quiet scheduler_topology apiserver_scale apiserver_kubectl \
                  deploy_kustomize scheduler_reservation apiserver_protobuf \
                  scheduler_stale_status apiserver_flood
E2E_SLOW := $(addprefix test/e2e/,$(addsuffix .sh,$(E2E_SLOW_NAMES)))
E2E_RUN := $(filter $(E2E),$(E2E_SLOW)) $(filter-out $(E2E_SLOW),$(E2E))
RES     := $(B)/results
unit-run: $(UNIT:%=$(RES)/unit/%)
e2e-run: $(E2E_RUN:test/e2e/%.sh=$(RES)/e2e/%)
K8S_RUN := $(filter $(E2E_K8S),$(E2E_RUN))
e2e-k8s-run: $(K8S_RUN:test/e2e/%.sh=$(RES)/e2e-k8s/%)

$(RES)/unit/%: $(B)/test/% FORCE
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 bash test/run.sh one $@ $<

# A test exits 77 when it needs the other server (lib/scheduler.sh's
# needs_server): counted as skipped, its reason printed.
$(RES)/e2e/%: test/e2e/%.sh $(PROGS) FORCE
	@BIN=$(abspath $(BINDIR)) bash test/run.sh one $@ bash $<

$(RES)/e2e-k8s/%: test/e2e/%.sh $(PROGS) FORCE
	@KBATCH_E2E_SERVER=k8s BIN=$(abspath $(BINDIR)) bash test/run.sh one $@ bash $<

# deploy/Dockerfile builds and its image runs (test/image/build.py): with
# docker when a daemon answers, else the same stages in Debian roots made by
# debootstrap (installed here when missing; root and Debian's mirror
# needed).  Not part of make test (root, network); .ci/run runs it.
image-test: $(PROGS)
	@if ! (command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1) && \
	    ! command -v debootstrap >/dev/null 2>&1; then \
	  echo "installing: debootstrap"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq debootstrap >/dev/null; \
	fi
	@python3 test/image/build.py $(abspath $(BINDIR))

bench: test-deps
	@$(MAKE) --no-print-directory $(JOBS) progs
	@bash test/bench/run.sh

# Instruction counts of the sessions on small workloads against
# test/bench/baseline (callgrind; fails on growth over 5%); .ci/run runs it.
# make bench-baseline rewrites the baseline: commit it on its own, saying why.
bench-check: test-deps
	@$(MAKE) --no-print-directory $(JOBS) progs
	@bash test/bench/check.sh

bench-baseline: test-deps
	@$(MAKE) --no-print-directory $(JOBS) progs
	@bash test/bench/check.sh --update

# The scheduler at scale on the real bed (test/k8s; needs Go):
# docs/PERFORMANCE.md, "On the real API server".
bench-k8s: test-deps
	@$(MAKE) --no-print-directory $(JOBS) progs
	@bash test/bench/k8s_scale.sh

# kbatch against its peers on the real bed (test/k8s/peers; needs Go):
# docs/PERFORMANCE.md, "Against its peers".
bench-peers: test-deps
	@$(MAKE) --no-print-directory $(JOBS) progs
	@bash test/bench/peers.sh

# FUZZ_SECONDS is per target: the whole run takes about that times the
# number of targets (13 today), plus the first build of the library.
FUZZ    := $(notdir $(basename $(wildcard test/fuzz/*_fuzz.c)))
fuzz: test-deps
	@bash test/fuzz/run.sh $(or $(FUZZ_SECONDS),60) $(FUZZ_TARGETS)

# make install [PREFIX=/usr/local] [DESTDIR=/stage]: the programs in bin/
# (kubectl-kbatch there is what kubectl finds on PATH as "kubectl kbatch"),
# a man page for each in share/man/man1/ (help2man from its --help; Debian's
# help2man installed when missing), README.md and docs/ in share/doc/kbatch/,
# the CRDs and the examples in share/kbatch/. test/e2e/install.sh checks it.
PREFIX  ?= /usr/local
SHARE   := $(DESTDIR)$(PREFIX)/share/kbatch
MAN1    := $(DESTDIR)$(PREFIX)/share/man/man1
DOCDIR  := $(DESTDIR)$(PREFIX)/share/doc/kbatch
DATA    := $(sort $(wildcard crds/*.yaml crds/optional/*.yaml examples/*.yaml examples/*/*.yaml))
DOCS    := README.md $(sort $(wildcard docs/*.md))
VERSION := $(shell sed -n 's/^\#define KB_VERSION "\(.*\)"/\1/p' cmd/kbatch-scheduler/main.c)
MANS    := $(CMDS:%=$(B)/man/%.1)
# The NAME line of each page (help2man's own otherwise).
MANDESC_kbatch-apiserver := local in-memory Kubernetes API server for tests and demos
MANDESC_kbatch-scheduler := gang batch scheduler for Kubernetes
MANDESC_kbatch-sim       := kbatch scheduling sessions over manifests, offline
MANDESC_kubectl-kbatch   := kubectl plugin: why a job waits, queues

# help2man runs the program through man/help.awk (its usage lines in the
# shape help2man makes a SYNOPSIS of), by a wrapper of the program's name.
$(B)/man/%.1: $(BINDIR)/% man/help.awk man/common.h2m
	@mkdir -p $(B)/man/bin
	@echo "  MAN     $@"
	@printf '#!/bin/sh\nASAN_OPTIONS=detect_leaks=0 "%s" "$$@" 2>&1 | awk -f "%s"\n' \
	  $(abspath $<) $(abspath man/help.awk) >$(B)/man/bin/$* && chmod +x $(B)/man/bin/$*
	@help2man --no-info --version-string='$(VERSION)' --include=man/common.h2m \
	  $(if $(MANDESC_$*),--name='$(MANDESC_$*)') --output=$@.tmp $(B)/man/bin/$* && mv $@.tmp $@

.PHONY: man
man: $(MANS)

install: all
	@$(MAKE) --no-print-directory install-deps
	@$(MAKE) --no-print-directory $(JOBS) man
	@install -d $(DESTDIR)$(PREFIX)/bin $(MAN1) $(DOCDIR)
	@for p in $(CMDS); do echo "  INSTALL $(DESTDIR)$(PREFIX)/bin/$$p"; \
	  install -m 0755 $(BINDIR)/$$p $(DESTDIR)$(PREFIX)/bin/$$p || exit 1; done
	@for p in $(CMDS); do install -m 0644 $(B)/man/$$p.1 $(MAN1)/$$p.1 || exit 1; done
	@echo "  INSTALL $(MAN1)/ ($(CMDS:%=%.1))"
	@for f in $(DOCS); do install -D -m 0644 $$f $(DOCDIR)/$$f || exit 1; done
	@echo "  INSTALL $(DOCDIR)/ (README.md, docs/)"
	@for f in $(DATA); do install -D -m 0644 $$f $(SHARE)/$$f || exit 1; done
	@echo "  INSTALL $(SHARE)/ (crds, examples)"

uninstall:
	rm -f $(CMDS:%=$(DESTDIR)$(PREFIX)/bin/%) $(CMDS:%=$(MAN1)/%.1)
	rm -rf $(SHARE) $(DOCDIR)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)

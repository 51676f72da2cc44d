# grademl-tui — build, test, benchmark, install.
#
#   make                 build build/grademl-tui
#   make check           build and run every test (unit, end-to-end, fuzz smoke);
#                        the last line is "N passed, N failed, N skipped"
#   make check SANITIZE=1  the same under AddressSanitizer and UBSan (build/san/)
#   make fuzz            libFuzzer targets (clang) in build/fuzz/
#   make fuzz-long       each target for FUZZ_LONG_SECS (600) s on its corpus kept
#                        in FUZZ_CORPUS (build/fuzz/corpus/NAME); FUZZ_NAMES picks
#                        targets, e.g. make fuzz-long FUZZ_NAMES=chrome FUZZ_LONG_SECS=3600
#   make demo            import the bundled capture and print its report
#   make truth           the truth suite's table: for each workload whose answer is
#                        known by construction, the expected verdict, the tool's,
#                        and whether they agree; then each figure against its
#                        reference (tests/truth/README.md; `make check` runs it too)
#   make bench           benchmarks against their budgets (README.md, Performance)
#   make install PREFIX=/usr/local
#   make deps            install what `make check` needs (as root), else print the line
#
# `make demo`, `make check` and `make bench` first install the Debian packages
# they need that are missing (as root; otherwise they print the apt-get line
# and stop).  git and make come first, by hand.

PREFIX   ?= /usr/local
CC       ?= cc
PKGS     := sqlite3 yajl jansson zlib libzstd ncursesw libpcre2-8 libcurl
# Debian packages: what building needs, what the demo adds (its import
# script), what the tests add (the fuzz smoke run needs clang and its
# runtime, whose version follows Debian's clang; the live Prometheus test
# runs Debian's server and node exporter beside sar), what the benchmarks
# add (the live pull's bench backfills a Prometheus with promtool).
DEBS_BUILD := gcc libc6-dev pkgconf libsqlite3-dev libyajl-dev libjansson-dev zlib1g-dev \
              libzstd-dev libncurses-dev libpcre2-dev libcurl4-openssl-dev
DEBS_DEMO  := $(DEBS_BUILD) python3
DEBS_CHECK  = $(DEBS_DEMO) libcmocka-dev tmux sqlite3 zstd time clang libclang-rt-$(CLANG_MAJOR)-dev \
              prometheus prometheus-node-exporter sysstat
DEBS_BENCH := $(DEBS_DEMO) sqlite3 time prometheus
CLANG_MAJOR = $(or $(shell apt-cache depends clang 2>/dev/null | \
                sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$$/\1/p' | head -n 1),14)

ifeq ($(SANITIZE),1)
B        := build/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT      := -O1 -g
else
B        := build
SANFLAGS :=
OPT      := -O2 -g
endif

VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
WARN     := -std=c11 -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -I. -DGRADEML_VERSION='"$(VERSION)"'
CFLAGS   += -pthread $(OPT) $(WARN) $(SANFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -pthread
LDFLAGS  += $(SANFLAGS)

LIB_SRC  := $(wildcard model/*/*.c importers/*.c query/*.c) $(filter-out tui/main.c,$(wildcard tui/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
BIN      := $(B)/grademl-tui
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(B)/tools/%)

FUZZ_CC   ?= clang
FUZZ_B    := build/fuzz
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJ  := $(LIB_SRC:%.c=$(FUZZ_B)/%.o)
FUZZ_NAMES := chrome theme sysstat nvsmi prometheus spark workflow otlp mlperf rules rulelog hosts query db
FUZZ_BIN  := $(FUZZ_NAMES:%=$(FUZZ_B)/fuzz_%)
FUZZ_SECS ?= 10
FUZZ_LONG_SECS ?= 600
FUZZ_CORPUS ?= $(FUZZ_B)/corpus
FUZZ_MAX_LEN ?= 4096

.PHONY: all check check-run unit e2e fuzz fuzz-smoke demo demo-run truth bench bench-run install \
        clean format deps deps-build deps-demo deps-check deps-bench deps-list pkgcheck cmockacheck
all: $(BIN)

# Without the -dev packages, one line that points at `make deps` rather
# than a compiler error.
pkgcheck:
	@missing=""; for p in $(PKGS); do \
		pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] || { echo "make: missing libraries:$$missing (pkg-config);" \
		"'make deps' installs them as root, or prints the apt-get line" >&2; exit 1; }
cmockacheck:
	@pkg-config --exists cmocka 2>/dev/null || { echo "make: missing library: cmocka" \
		"(pkg-config); 'make deps' installs it as root, or prints the apt-get line" >&2; exit 1; }

$(B)/%.o: %.c | pkgcheck
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# Where `make install` puts the themes, compiled into theme.o; the stamp
# rebuilds it when PREFIX changes.
$(B)/prefix.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' >$@
$(B)/tui/theme.o $(FUZZ_B)/tui/theme.o: $(B)/prefix.stamp
$(B)/tui/theme.o $(FUZZ_B)/tui/theme.o: CPPFLAGS += -DGRADEML_THEME_DIR='"$(PREFIX)/share/grademl-tui/themes"'
FORCE:

$(B)/libgrademl.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(BIN): $(B)/tui/main.o $(B)/libgrademl.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: $(B)/tests/%.o $(B)/libgrademl.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

.SECONDARY: $(TOOL_SRC:%.c=$(B)/%.o)
$(B)/tools/%: $(B)/tests/tools/%.o $(B)/libgrademl.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(TEST_BIN:=.o): | cmockacheck

# The packages first, then a make that sees them (pkg-config's flags).
check: deps-check
	@$(MAKE) --no-print-directory check-run

# Tests find the themes in the tree whatever build directory they run from.
export GRADEML_THEME_DIR := $(CURDIR)/themes
RUN_ALL = GRADEML_BIN=$(BIN) GRADEML_TOOLS=$(B)/tools GRADEML_TESTS="$(TEST_BIN)" \
          MAKE="$(MAKE)" bash tests/run-all.sh

# every part, then one line: N passed, N failed, N skipped
check-run: $(TEST_BIN) $(BIN) $(TOOL_BIN)
	@$(RUN_ALL) unit e2e fuzz

unit: $(TEST_BIN) $(BIN)
	@$(RUN_ALL) unit

e2e: $(BIN) $(TOOL_BIN)
	@$(RUN_ALL) e2e

# libFuzzer targets (clang); every parser gets one.  fuzz-smoke runs each
# for FUZZ_SECS seconds on a copy of its seed corpus; fuzz-long for
# FUZZ_LONG_SECS on a corpus that grows from run to run (tests/fuzz/run.sh).
$(FUZZ_B)/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(WARN) -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
		$(shell pkg-config --cflags $(PKGS) 2>/dev/null) -MMD -MP -c -o $@ $<

# kept, and rebuilt when a header they include changes (the .d files)
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_NAMES:%=$(FUZZ_B)/tests/fuzz/fuzz_%.o)

$(FUZZ_B)/fuzz_%: $(FUZZ_OBJ) $(FUZZ_B)/tests/fuzz/fuzz_%.o
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

.PHONY: fuzz-long
fuzz: $(FUZZ_BIN)

FUZZ_RUN := FUZZ_B=$(FUZZ_B) FUZZ_MAX_LEN=$(FUZZ_MAX_LEN) bash tests/fuzz/run.sh

fuzz-smoke:
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory fuzz && $(FUZZ_RUN) $(FUZZ_SECS) "" $(FUZZ_NAMES); \
	else echo "skip - fuzz smoke ($(FUZZ_CC) is not installed; make deps installs it)"; \
		echo "0 passed, 0 failed, 1 skipped"; fi

fuzz-long: fuzz
	@$(FUZZ_RUN) $(FUZZ_LONG_SECS) $(FUZZ_CORPUS) $(FUZZ_NAMES)

demo: deps-demo
	@$(MAKE) --no-print-directory demo-run

demo-run: $(BIN)
	rm -f demo.db
	bash tests/data/demo/import.sh $(BIN) demo.db
	$(BIN) demo.db

# Exit status 1 when a row that is not marked pending disagrees.
truth: deps-demo $(BIN)
	@GRADEML_BIN=$(BIN) python3 tests/truth/run.py --table

bench: deps-bench
	@$(MAKE) --no-print-directory bench-run

bench-run: $(BIN) $(TOOL_BIN)
	GRADEML_BIN=$(BIN) GRADEML_TOOLS=$(B)/tools bash tests/bench/run.sh
	GRADEML_BIN=$(BIN) bash tests/bench/tui.sh
	GRADEML_BIN=$(BIN) bash tests/bench/analyze.sh
	GRADEML_BIN=$(BIN) bash tests/bench/query.sh
	GRADEML_BIN=$(BIN) bash tests/bench/diff.sh

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/grademl-tui/themes \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/grademl-tui
	for f in themes/*.theme; do [ -f "$$f" ] && install -m 644 "$$f" \
		$(DESTDIR)$(PREFIX)/share/grademl-tui/themes/; done; true
	install -d $(DESTDIR)$(PREFIX)/share/grademl-tui/rules
	for f in rules/*.rules; do [ -f "$$f" ] && install -m 644 "$$f" \
		$(DESTDIR)$(PREFIX)/share/grademl-tui/rules/; done; true
	install -m 644 man/grademl-tui.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	for f in man/*.7; do [ -f "$$f" ] && install -m 644 "$$f" \
		$(DESTDIR)$(PREFIX)/share/man/man7/; done; true

# deps_install(PACKAGES): as root, installs those missing; otherwise prints
# the one line that would, and fails.  Off Debian (no dpkg) it checks nothing.
define deps_install
	@command -v dpkg-query >/dev/null 2>&1 || exit 0; missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || \
		missing="$$missing $$p"; done; \
	line="apt-get update && apt-get install -y --no-install-recommends$$missing"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then echo "make: installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && \
		apt-get install -y -qq --no-install-recommends$$missing >/dev/null; \
	else echo "make $(or $(MAKECMDGOALS),$(2)) needs Debian packages; as root, run: $$line" >&2; exit 1; fi
endef

deps: deps-check
deps-build:
	$(call deps_install,$(DEBS_BUILD),build)
deps-demo:
	$(call deps_install,$(DEBS_DEMO),demo)
deps-check:
	$(call deps_install,$(DEBS_CHECK),check)
deps-bench:
	$(call deps_install,$(DEBS_BENCH),bench)
# make -s deps-list LIST=CHECK: the packages of one list (tests/tree.sh)
deps-list:
	@echo $(DEBS_$(LIST))

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build demo.db

-include $(shell find build -name '*.d' 2>/dev/null)

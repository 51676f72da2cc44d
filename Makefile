# grademl-tui — build, test, benchmark, install.
#
#   make                 build build/grademl-tui
#   make check           build and run every test (unit, end-to-end)
#   make check SANITIZE=1  the same under AddressSanitizer and UBSan (build/san/)
#   make fuzz            libFuzzer targets (clang) in build/fuzz/
#   make demo            import the bundled capture and print its report
#   make bench           benchmarks against the budgets in DESIGN.md
#   make install PREFIX=/usr/local
#   make deps            install missing Debian packages (as root), else print the line

PREFIX   ?= /usr/local
CC       ?= cc
PKGS     := sqlite3 yajl jansson zlib libzstd ncursesw libpcre2-8
DEBS     := build-essential pkg-config libsqlite3-dev libyajl-dev libjansson-dev zlib1g-dev \
            libzstd-dev libncurses-dev libpcre2-dev libcmocka-dev tmux python3 sqlite3 \
            time gzip zstd
# wanted but not required: the fuzz smoke test skips itself without clang
DEBS_OPT := clang libclang-rt-14-dev

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

LIB_SRC  := $(wildcard model/*.c importers/*.c query/*.c) $(filter-out tui/main.c,$(wildcard tui/*.c))
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
FUZZ_NAMES := chrome theme sysstat nvsmi prometheus spark workflow otlp mlperf rules rulelog hosts query
FUZZ_BIN  := $(FUZZ_NAMES:%=$(FUZZ_B)/fuzz_%)
FUZZ_SECS ?= 10

.PHONY: all check unit e2e fuzz fuzz-smoke demo bench install clean deps format
all: $(BIN)

$(B)/%.o: %.c
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

$(B)/tools/%: $(B)/tests/tools/%.o $(B)/libgrademl.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

check: deps
	$(MAKE) unit e2e fuzz-smoke

# Tests find the themes in the tree whatever build directory they run from.
export GRADEML_THEME_DIR := $(CURDIR)/themes

unit: $(TEST_BIN) $(BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; GRADEML_BIN=$(BIN) $$t; done

e2e: $(BIN) $(TOOL_BIN)
	@GRADEML_BIN=$(BIN) GRADEML_TOOLS=$(B)/tools bash tests/e2e/run.sh
	@GRADEML_BIN=$(BIN) bash tests/e2e/tui_headless.sh
	@GRADEML_BIN=$(BIN) bash tests/e2e/tui_tmux.sh
	@GRADEML_BIN=$(BIN) bash tests/e2e/query.sh
	@GRADEML_BIN=$(BIN) bash tests/e2e/sanitize.sh
	@GRADEML_BIN=$(BIN) bash tests/e2e/bounds.sh

# libFuzzer targets (clang); every parser gets one.  fuzz-smoke runs each
# for FUZZ_SECS seconds on a copy of its seed corpus.
$(FUZZ_B)/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(WARN) -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
		$(shell pkg-config --cflags $(PKGS) 2>/dev/null) -MMD -MP -c -o $@ $<

# kept, and rebuilt when a header they include changes (the .d files)
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_NAMES:%=$(FUZZ_B)/tests/fuzz/fuzz_%.o)

$(FUZZ_B)/fuzz_%: $(FUZZ_OBJ) $(FUZZ_B)/tests/fuzz/fuzz_%.o
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

fuzz: $(FUZZ_BIN)

fuzz-smoke:
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory fuzz || exit 1; \
		for t in $(FUZZ_NAMES); do \
		corpus=$$(mktemp -d) && cp tests/fuzz/corpus/$$t/* "$$corpus"/ && \
		if ! $(FUZZ_B)/fuzz_$$t -max_total_time=$(FUZZ_SECS) -max_len=4096 \
			-artifact_prefix="$$corpus/" "$$corpus" >"$$corpus.log" 2>&1; then \
			tail -40 "$$corpus.log"; echo "fuzz-smoke: $$t FAILED, input kept in $$corpus"; exit 1; \
		fi; \
		tail -1 "$$corpus.log"; rm -rf "$$corpus" "$$corpus.log"; \
		echo "fuzz-smoke: the $$t parser survived $(FUZZ_SECS) s"; \
		done; \
	else echo "fuzz-smoke: skipped ($(FUZZ_CC) not installed)"; fi

demo: deps $(BIN)
	rm -f demo.db
	bash tests/data/demo/import.sh $(BIN) demo.db
	$(BIN) demo.db

bench: deps $(BIN) $(TOOL_BIN)
	GRADEML_BIN=$(BIN) GRADEML_TOOLS=$(B)/tools bash tests/bench/run.sh
	GRADEML_BIN=$(BIN) bash tests/bench/tui.sh
	GRADEML_BIN=$(BIN) bash tests/bench/analyze.sh
	GRADEML_BIN=$(BIN) bash tests/bench/query.sh

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

deps:
	@missing=""; for p in $(DEBS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	optional=""; for p in $(DEBS_OPT); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || optional="$$optional $$p"; \
	done; \
	if [ "$$(id -u)" = 0 ] && [ -n "$$missing$$optional" ]; then \
		echo "installing:$$missing$$optional"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing $$optional; \
	elif [ -n "$$missing" ]; then \
		echo "missing packages; run: sudo apt-get install -y$$missing$$optional"; exit 1; \
	elif [ -n "$$optional" ]; then \
		echo "note: without$$optional the fuzz smoke test is skipped"; \
	fi

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build demo.db

-include $(shell find build -name '*.d' 2>/dev/null)

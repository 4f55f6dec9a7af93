# tidepool - see README.md. `make` builds build/tidepool; `make test` installs what is
# missing, then runs the checks of TEST_CHECKS (README "Testing").
#
# Project flags wrap the user's: `make OPT=-O0 CFLAGS=-fsanitize=address,undefined` works.
# V=1 shows the commands.

VERSION = 0.2.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/tidepool
TPDATADIR ?= $(DATADIR)/tidepool
# Blender's system add-ons (Debian's blender reads $(DATADIR)/blender/scripts with PREFIX
# /usr; elsewhere point BLENDER_SYSTEM_SCRIPTS at $(DATADIR)/blender/scripts)
BLENDERADDONDIR ?= $(DATADIR)/blender/scripts/addons
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
DESTDIR ?=
BUILD ?= build
OPT ?= -O3
PKG_CONFIG ?= pkg-config

PKGS = libpng nettle libcjson libxxhash fftw3f libmicrohttpd OpenEXR libdeflate libwebp
# MP4 and libavutil's hashes (libavcodec and what it brings, ~120 libraries; libavutil
# alone 23) live in a plugin loaded when an MP4 or such a hash is touched
# (src/encode/avplugin.h): the program and the library link only PKGS (nettle: the
# fingerprints' SHA-256; libwebp: the compare report's lossless pictures).
AV_PKGS = libavcodec libavformat libavutil libswscale

# Determinism: no FMA contraction, never -ffast-math (DESIGN.md).
TP_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	-Wall -Wextra -Wpedantic -Wshadow -Wno-unknown-pragmas \
	-fPIC -fvisibility=hidden $(OPT) -g -ffp-contract=off -fno-fast-math -fno-math-errno -fno-trapping-math -fopenmp -Isrc/core -Isrc -Iinclude \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) $(AV_PKGS)) -DTP_VERSION='"$(VERSION)"' \
	-MMD -MP $(CFLAGS)
TP_LDFLAGS = -fopenmp $(LDFLAGS)
TP_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS)) -ldl -lpthread -lm $(LDLIBS)
AV_LIBS = $(shell $(PKG_CONFIG) --libs $(AV_PKGS) $(PKGS)) -lpthread -lm $(LDLIBS)

SRC_UTIL = \
	src/core/util/error.c \
	src/core/util/suggest.c \
	src/core/util/image.c \
	src/core/util/cpu.c \
	src/core/util/opts.c \
	src/core/util/rng.c \
	src/core/util/trig.c \
	src/core/util/progress.c \
	src/core/util/fsutil.c \
	src/core/util/wire.c \
	src/core/util/png.c

SRC_SCENE = \
	src/core/scene/load.c \
	src/core/scene/jsonpos.c \
	src/core/scene/ld.c \
	src/core/scene/items.c \
	src/core/scene/path.c \
	src/core/scene/textures.c \
	src/core/scene/sets.c \
	src/core/scene/scale.c \
	src/core/scene/fingerprint.c \
	src/core/scene/diverge.c \
	src/core/scene/where.c \
	src/core/scene/support.c \
	src/core/scene/reach.c \
	src/core/scene/ambient.c

SRC_SOLVERS = \
	src/core/solvers/registry.c \
	src/core/solvers/hooke.c \
	src/core/solvers/intgrid.c \
	src/core/solvers/ripple.c \
	src/core/solvers/shallow/shallow.c \
	src/core/solvers/shallow/shallow_boxes.c \
	src/core/solvers/shallow/cg.c \
	src/core/solvers/sph/sph.c \
	src/core/solvers/sph/sph_setup.c \
	src/core/solvers/sph/sph_ckpt.c \
	src/core/solvers/sph/sph_scene.c \
	src/core/solvers/sph/sph_grid.c \
	src/core/solvers/sph/sph_kern.c \
	src/core/solvers/sph/sph_iisph.c \
	src/core/solvers/sph/sph_body.c \
	src/core/solvers/sph/sph_surf.c \
	src/core/solvers/airy/spec2d.c \
	src/core/solvers/airy/airy.c \
	src/core/solvers/airy/waves.c \
	src/core/solvers/airy/chop.c

SRC_SIM = \
	src/core/sim/stepper.c \
	src/core/sim/loop.c \
	src/core/sim/ckpt.c

SRC_RENDER = \
	src/core/render/render.c \
	src/core/render/modes.c \
	src/core/render/refract.c \
	src/core/render/refract_c.c \
	src/core/render/refract_vec.c \
	src/core/render/refract_avx2.c \
	src/core/render/refract_avx512.c \
	src/core/render/refract_avx512vnni.c \
	src/core/render/refract_aa.c \
	src/core/render/footprint.c \
	src/core/render/highlight.c \
	src/core/render/background.c \
	src/core/render/maps.c \
	src/core/render/fluid.c \
	src/core/render/boxes.c \
	src/core/render/ocean.c

# The program's side (src/encode, src/compare, src/cli, src/preview, src/main.c): the
# tidepool command, a client of libtidepool's public API (include/tidepool.h) that links
# the library and its own copies of the util helpers it shares with the core.
SRC_ENCODE = \
	src/encode/registry.c \
	src/encode/sink.c \
	src/encode/pngseq.c \
	src/encode/null.c \
	src/encode/queue.c \
	src/encode/outfile.c \
	src/encode/avload.c \
	src/encode/hash.c \
	src/encode/flipbook.c \
	src/encode/proof.c \
	src/encode/exr.c \
	src/encode/exr_pack.c \
	src/encode/record.c \
	src/encode/record_exr.c \
	src/encode/record_read.c

# The libav plugin, tidepool-av.so (src/encode/avplugin.h): MP4 writing, reading,
# joining and checksums, with its own copies of the few core helpers they use.
SRC_AV = \
	src/encode/mp4.c \
	src/encode/mp4_read.c \
	src/encode/join.c \
	src/encode/proof_mp4.c \
	src/encode/avplugin.c
AV_HELPERS = src/core/util/error.c src/core/util/cpu.c src/core/util/fsutil.c src/core/util/image.c src/encode/record.c \
	src/encode/hash.c src/encode/proof.c src/encode/outfile.c

SRC_COMPARE = \
	src/compare/metrics.c \
	src/compare/sources.c \
	src/compare/run.c \
	src/compare/report.c \
	src/compare/flip.c \
	src/compare/report_html.c

# The public API (include/tidepool.h): the only symbols libtidepool.so exports.
SRC_API = \
	src/core/api/api.c \
	src/core/api/api_output.c

SRC_CLI = \
	src/cli/common.c \
	src/cli/optrows.c \
	src/cli/sceneopts.c \
	src/cli/render.c \
	src/cli/outputs.c \
	src/cli/sheet.c \
	src/cli/batch.c \
	src/cli/batch_run.c \
	src/cli/variants.c \
	src/cli/validate.c \
	src/cli/solvers.c \
	src/cli/compare.c \
	src/cli/cache.c \
	src/cli/tasks.c \
	src/cli/tasks_args.c \
	src/cli/chunkcheck.c \
	src/cli/shline.c \
	src/cli/join.c \
	src/cli/info.c \
	src/cli/preview.c

# tidepool preview (docs/preview.md): the server, a client of include/tidepool.h, and its
# page, embedded from src/preview/page/ by xxd -i.
SRC_PREVIEW = \
	src/preview/state.c \
	src/preview/watch.c \
	src/preview/json.c \
	src/preview/server.c \
	src/preview/request.c \
	src/preview/page.c \
	src/preview/edit.c \
	src/preview/jsonedit.c \
	src/preview/draft.c
# The editor's writer walks JSON with the loader's own jsonpos.c, linked into the program
# as well (the library keeps its copy hidden).
PREVIEW_CORE_OBJS = $(BUILD)/obj/src/core/scene/jsonpos.o
PAGE_FILES = index.html style.css app.js overlays.js plot.js edit.js
PAGE_H = $(BUILD)/gen/preview_page.h

# libtidepool: the core. PROGRAM_SRCS: the command's own. Tests, benchmarks and fuzzers
# link both as objects (LIB_SRCS), to reach the internals they check.
CORE_SRCS = $(SRC_UTIL) $(SRC_SCENE) $(SRC_SOLVERS) $(SRC_SIM) $(SRC_RENDER) $(SRC_API)
PROGRAM_SRCS = $(SRC_ENCODE) $(SRC_COMPARE) $(SRC_CLI) $(SRC_PREVIEW)
LIB_SRCS = $(CORE_SRCS) $(PROGRAM_SRCS)

TEST_SRCS = \
	tests/test_util.c \
	tests/test_layers.c \
	tests/test_png.c \
	tests/test_render.c \
	tests/test_refract_aa.c \
	tests/test_maps.c \
	tests/test_textures.c \
	tests/test_cli.c \
	tests/test_mp4.c \
	tests/test_scene.c \
	tests/test_solvers_int.c \
	tests/test_round.c \
	tests/test_wake.c \
	tests/test_sph_limits.c \
	tests/test_compare.c \
	tests/test_compare_cli.c \
	tests/test_flip.c \
	tests/test_compare_html.c \
	tests/test_golden.c \
	tests/test_shallow.c \
	tests/test_sph.c \
	tests/test_sph_implicit.c \
	tests/test_scale.c \
	tests/test_farm.c \
	tests/test_farm_proof.c \
	tests/test_ckpt_fields.c \
	tests/test_untruths.c \
	tests/test_docs.c \
	tests/test_where.c \
	tests/test_levels.c \
	tests/test_schema.c \
	tests/test_install.c \
	tests/test_limits.c \
	tests/test_noise.c \
	tests/test_airy.c \
	tests/test_api.c \
	tests/test_api_output.c \
	tests/test_api_abi.c \
	tests/test_reuse.c \
	tests/test_sceneopts.c \
	tests/test_ocean.c \
	tests/test_record.c \
	tests/test_info.c \
	tests/test_waves.c \
	tests/test_exr.c \
	tests/test_jsonedit.c \
	tests/test_modes.c \
	tests/test_optrows.c \
	tests/reference/seed_common.c \
	tests/reference/seed_hooke.c \
	tests/reference/seed_ripple.c \
	tests/reference/seed_shallow.c \
	tests/reference/seed_render.c \
	tests/reference/seed_sph.c

BENCH_SRCS = \
	tests/bench/main.c \
	tests/bench/bench_int.c \
	tests/bench/bench_render.c \
	tests/bench/bench_sph.c \
	tests/bench/bench_shallow.c \
	tests/bench/seed_port.c \
	tests/bench/bench_airy.c \
	tests/bench/bench_png.c

LIB_OBJS = $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
AV_OBJS = $(SRC_AV:%.c=$(BUILD)/obj/%.o) $(AV_HELPERS:%.c=$(BUILD)/obj/%.o)
AV_PLUGIN = $(BUILD)/tidepool-av.so
CORE_OBJS = $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
PROGRAM_OBJS = $(PROGRAM_SRCS:%.c=$(BUILD)/obj/%.o)
UTIL_OBJS = $(SRC_UTIL:%.c=$(BUILD)/obj/%.o)
UTIL_AR = $(BUILD)/libtputil.a
MAIN_OBJ = $(BUILD)/obj/src/main.o
TEST_OBJS = $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
BENCH_OBJS = $(BENCH_SRCS:%.c=$(BUILD)/obj/%.o) \
	$(filter $(BUILD)/obj/tests/reference/%,$(TEST_OBJS))

BIN = $(BUILD)/tidepool
SONAME = libtidepool.so.0
SHLIB = $(BUILD)/$(SONAME)
PCFILE = $(BUILD)/tidepool.pc
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PYTHON ?= /usr/bin/python3
PYVER := $(shell $(PYTHON) -c "import sys; print(\"%d.%d\" % sys.version_info[:2])" 2>/dev/null)
PYTHONDIR ?= $(PREFIX)/lib/python$(PYVER)/dist-packages
MAN = $(BUILD)/tidepool.1
PATHS_H = $(BUILD)/gen/tp_paths.h
TEST_BIN = $(BUILD)/tidepool-tests
BENCH_BIN = $(BUILD)/tidepool-bench

ifeq ($(V),1)
Q =
else
Q = @
endif

.PHONY: all deps deps-build test check check-asan check-farm check-python check-pip check-preview bench demo golden install uninstall clean format lint check-browser-compare \
	FORCE fuzz fuzz-bins fuzz-regress fuzz-smoke fuzz-long

all: $(BIN) $(MAN) $(SHLIB) $(PCFILE) $(AV_PLUGIN)

# The libav plugin: exports only tp_av_plugin_v1 (every object is -fvisibility=hidden).
$(AV_PLUGIN): $(AV_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -shared -Wl,--no-undefined -o $@ $^ $(AV_LIBS)

# libtidepool: the core as a shared library exporting only include/tidepool.h's calls
# (every object is built -fvisibility=hidden; TP_API marks the exported ones).
$(SHLIB): $(CORE_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(TP_LIBS)
	$(Q)ln -sf $(SONAME) $(BUILD)/libtidepool.so

# pkg-config file for the installed library (PREFIX decides where; rewritten when it
# changes). libdir and includedir are spelt from $${prefix} when under it, so that
# `pkg-config --define-prefix` finds a copy installed with DESTDIR.
$(PCFILE): FORCE
	@mkdir -p $(dir $@)
	@printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: tidepool\nDescription: batch renderer for water (libtidepool)\nVersion: %s\nLibs: -L$${libdir} -ltidepool\nCflags: -I$${includedir}\n' \
		'$(PREFIX)' '$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))' \
		'$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))' '$(VERSION)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

# The manual page, from its scdoc source (docs/CONTRIBUTING.md).
$(MAN): docs/tidepool.1.scd
	@mkdir -p $(dir $@)
	@echo "  SCDOC   $@"
	$(Q)SOURCE_DATE_EPOCH=$$(sh scripts/man-date.sh $<) scdoc < $< > $@.tmp && mv $@.tmp $@

# Where `make install` puts the documents, for `tidepool --help`; rewritten only when
# PREFIX (or DOCDIR, ...) changes, so src/main.c is rebuilt only then.
$(PATHS_H): FORCE
	@mkdir -p $(dir $@)
	@printf '#define TP_DOCDIR "%s"\n#define TP_DATADIR "%s"\n#define TP_PLUGINDIR "%s"\n' '$(DOCDIR)' '$(TPDATADIR)' '$(LIBDIR)/tidepool' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(MAIN_OBJ): $(PATHS_H)
$(BUILD)/obj/src/encode/avload.o: $(PATHS_H)
$(BUILD)/obj/src/encode/avload.o: TP_CFLAGS += -I$(BUILD)/gen -DTP_HAVE_PATHS_H
$(BUILD)/obj/src/preview/page.o: $(PAGE_H)
$(BUILD)/obj/src/preview/page.o: TP_CFLAGS += -I$(BUILD)/gen

# The colour pass's ISA variants (src/core/render/refract_dsp.h), a file each, compiled
# for its own instruction set; refract_dsp_init() runs one only on a CPU that has it.
$(BUILD)/obj/src/core/render/refract_c.o: TP_CFLAGS += -fno-tree-vectorize
ifneq ($(findstring x86_64,$(shell $(CC) -dumpmachine)),)
$(BUILD)/obj/src/core/render/refract_avx2.o: TP_CFLAGS += -mavx2
$(BUILD)/obj/src/core/render/refract_avx512.o: TP_CFLAGS += -march=x86-64-v4
$(BUILD)/obj/src/core/render/refract_avx512vnni.o: TP_CFLAGS += -mavx512f -mavx512bw -mavx512vl \
	-mavx512dq -mavx512vnni
endif

# The page's files as C arrays (static const, named after the file: app_js).
$(PAGE_H): $(PAGE_FILES:%=src/preview/page/%)
	@mkdir -p $(dir $@)
	@echo "  XXD     $@"
	$(Q)(cd src/preview/page && for f in $(PAGE_FILES); do xxd -i "$$f"; done) | \
		sed -e 's/^unsigned char /static const unsigned char /' -e '/_len = /d' > $@.tmp && mv $@.tmp $@
$(MAIN_OBJ): TP_CFLAGS += -I$(BUILD)/gen

# The HTML compare report's page, embedded at build time (docs/compare.md).
CMP_REPORT_ASSETS = src/compare/report/report.html src/compare/report/report.css \
	src/compare/report/report.js
$(BUILD)/gen/cmp_report_assets.h: $(CMP_REPORT_ASSETS)
	@mkdir -p $(dir $@)
	@echo "  XXD     $@"
	$(Q)(cd src/compare/report && for f in report.html report.css report.js; do xxd -i $$f; done) > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/src/compare/report_html.o: $(BUILD)/gen/cmp_report_assets.h
$(BUILD)/obj/src/compare/report_html.o: TP_CFLAGS += -I$(BUILD)/gen

# The util helpers the program shares with the core, as an archive: only those it calls
# are linked into it (the library's own copies are hidden inside it).
$(UTIL_AR): $(UTIL_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The program finds the library beside it (the build tree) or in LIBDIR relative to
# BINDIR (installed, also under DESTDIR).
BIN_RPATH = $$ORIGIN/$(shell realpath -m --relative-to=$(BINDIR) $(LIBDIR)):$$ORIGIN
$(BIN): $(MAIN_OBJ) $(PROGRAM_OBJS) $(PREVIEW_CORE_OBJS) $(UTIL_AR) $(SHLIB) | $(AV_PLUGIN)
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -o $@ $(MAIN_OBJ) $(PROGRAM_OBJS) $(PREVIEW_CORE_OBJS) $(UTIL_AR) \
		-L$(BUILD) -ltidepool -Wl,-rpath,'$(BIN_RPATH)' -Wl,--no-undefined $(TP_LIBS)

$(TEST_BIN): $(LIB_OBJS) $(TEST_OBJS) | $(AV_PLUGIN)
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -o $@ $^ $(TP_LIBS) \
		$(shell $(PKG_CONFIG) --libs criterion zlib fftw3 $(AV_PKGS)) # tests decode MP4s themselves

$(BENCH_BIN): $(LIB_OBJS) $(BENCH_OBJS) | $(AV_PLUGIN)
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -o $@ $^ $(TP_LIBS) $(shell $(PKG_CONFIG) --libs spng)

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(TP_CFLAGS) -Itests $(shell $(PKG_CONFIG) --cflags criterion) -c -o $@ $<
$(BUILD)/obj/tests/bench/bench_png.o: TP_CFLAGS += $(shell $(PKG_CONFIG) --cflags spng)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(TP_CFLAGS) -c -o $@ $<

# What is missing of everything (build, test, fuzz, bench: `make test`), or of what building
# and rendering need (`make demo`).
deps:
	@sh scripts/install-deps.sh
deps-build:
	@sh scripts/install-deps.sh build

# The suite runs from the repository root; TP_BIN tells end-to-end tests what to run.
# Idle OpenMP workers sleep, as in the tidepool binary: Criterion runs tests in parallel.
check: $(BIN) $(MAN) $(TEST_BIN) $(SHLIB)
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} TP_BIN=$(BIN) TP_BUILD=$(BUILD) \
		TP_CLIENT_FLAGS="$(CFLAGS) $(LDFLAGS)" $(TEST_BIN) $(TESTFLAGS)

.PHONY: check-sph-grid
# The sph implicit model's Archimedes grid (54 floating boxes; about 10 minutes on one core).
check-sph-grid: $(TEST_BIN)
	TP_SPH_GRID=1 $(TEST_BIN) --filter 'sph_implicit_grid/*' --verbose

ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp
check-asan:
	$(ASAN_ENV) $(MAKE) BUILD=build/asan OPT=-O1 \
		CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined $(CFLAGS)" \
		LDFLAGS="-fsanitize=address,undefined $(LDFLAGS)" check

# The suites ASan and UBSan find most in (parsers, file formats, the API, the command
# line, reports, limits, and the render kernels' and grid solvers' quick suites, where
# the fused kernel's overread was found): `make test` runs them sanitized;
# check-asan-rest, the others (long numerical suites, the docs' examples), is CI's
# (make test-long).
ASAN_SUITES = scene sceneopts schema where png exr mp4 mp4_cli compare compare_cli \
	compare_html flip api api_output cli limits util opts rng textures untruths install \
	render boxes_render maps levels hooke ripple intsolvers
# "a|b|c" of a list, for Criterion's --filter "@(a|b|c)/*" (those) and "!(a|b|c)/*" (all but).
alts = $(subst $(eval) ,|,$(strip $(1)))
.PHONY: check-asan-quick check-asan-rest
check-asan-quick:
	$(MAKE) check-asan TESTFLAGS='--filter "@($(call alts,$(ASAN_SUITES)))/*" $(TESTFLAGS)'
check-asan-rest:
	$(MAKE) check-asan TESTFLAGS='--filter "!($(call alts,$(ASAN_SUITES)))/*" $(TESTFLAGS)'

# `make test`: every check of TEST_CHECKS, as many at once as the cores allow (Criterion
# also runs its tests in parallel), each check's output whole when it ends. Adding a check
# is one line here. TEST_LONG_CHECKS are the long runs CI adds (.ci/run: `make test`, then
# `make test-long`, then fuzz-smoke); either list runs alone, or any one check by its name.
TEST_CHECKS = \
	check \
	check-asan-quick \
	check-python \
	check-pip \
	check-browser-compare \
	check-preview \
	check-blender \
	check-deps
TEST_LONG_CHECKS = \
	check-asan-rest \
	fuzz-regress \
	check-farm
JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$$(nproc))
.PHONY: test-long quick
test: deps
	$(MAKE) $(JOBS) $(BIN) $(MAN) $(TEST_BIN) $(SHLIB) $(PCFILE)
	$(MAKE) $(JOBS) -Otarget $(TEST_CHECKS)
test-long: deps
	$(MAKE) $(JOBS) -Otarget $(TEST_LONG_CHECKS)

# The edit-build-test loop: the build, then the Criterion suite without its long suites
# (QUICK_SKIP; `make check` runs them all). A minute or two.
QUICK_SKIP = docs round reuse airy sph sph_implicit sph_limits ocean waves refract_aa farm scale golden
quick: $(BIN) $(MAN) $(TEST_BIN) $(SHLIB)
	$(MAKE) check TESTFLAGS='--filter "!($(call alts,$(QUICK_SKIP)))/*" $(TESTFLAGS)'

# The build tier of scripts/install-deps.sh (`make demo`'s install) has what the build needs.
.PHONY: check-deps
check-deps:
	sh tests/deps_check.sh $(PKGS) $(AV_PKGS)

# tidepool preview (docs/preview.md): a smoke run of the server, then its HTTP API,
# security and limits (tests/preview) and the page in headless Chromium
# (tests/browser/test_page.py),
# each test against a server of its own on a copy of an example scene.
check-preview: $(BIN)
	@sh tests/preview/smoke.sh $(BIN)
	TP_BIN=$(BIN) $(PYTHON) -m pytest -q -p no:cacheprovider tests/preview \
		tests/browser/test_page.py tests/browser/test_page_edit.py \
		tests/browser/test_page_secret.py tests/browser/test_page_more.py $(PYTESTFLAGS)

# The Python module over libtidepool (python/tidepool), with Debian's pytest and numpy;
# its type hints checked by Debian's mypy (pyproject.toml: strict).
check-python: $(BIN) $(SHLIB) $(PCFILE)
	$(PYTHON) -m mypy --config-file pyproject.toml
	TP_BIN=$(BIN) TP_BUILD=$(CURDIR)/$(BUILD) PYTHONPATH=$(CURDIR)/python \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests/python

# The Python package as pip builds and installs it: a fresh copy of the tree, a fresh venv,
# pip install and pip wheel, then a frame and an MP4 from outside the tree.
check-pip:
	PYTHON=$(PYTHON) sh scripts/check-pip.sh

# The HTML compare report in headless Chromium (tests/browser/test_compare_report.py).
check-browser-compare: $(BIN)
	TP_BIN=$(abspath $(BIN)) $(or $(PYTHON),/usr/bin/python3) -m pytest -q -p no:cacheprovider \
		tests/browser/test_compare_report.py

# docs/textures.md's Blender recipe built in headless Blender (Debian's blender) and
# checked against the ocean example's EXRs (scripts/check-blender.sh, tests/blender/);
# then the add-on (blender/), installed from its zip, in headless Blender.
.PHONY: check-blender blender-zip
BLENDER_ZIP = $(BUILD)/tidepool_blender.zip
check-blender: $(BIN) $(BLENDER_ZIP)
	sh scripts/check-blender.sh $(BIN)
	sh scripts/check-blender-addon.sh $(BIN) $(BLENDER_ZIP)

# The Blender add-on as a zip for Preferences > Add-ons > Install (docs/textures.md): the
# add-on, the ocean example, and the program and library as built (bin/, lib/: the
# program's runpath finds the library beside it).
BLENDER_SRCS = $(wildcard blender/tidepool_ocean/*.py)
blender-zip: $(BLENDER_ZIP)
$(BLENDER_ZIP): $(BIN) $(SHLIB) $(BLENDER_SRCS) scenes/textures/ocean_choppy.json
	rm -rf $(BUILD)/blender $@
	mkdir -p $(BUILD)/blender/tidepool_ocean/bin $(BUILD)/blender/tidepool_ocean/lib
	cp $(BLENDER_SRCS) $(BUILD)/blender/tidepool_ocean/
	cp scenes/textures/ocean_choppy.json $(BUILD)/blender/tidepool_ocean/example_ocean.json
	cp $(BIN) $(BUILD)/blender/tidepool_ocean/bin/tidepool
	cp $(SHLIB) $(BUILD)/blender/tidepool_ocean/lib/$(SONAME)
	cd $(BUILD)/blender && zip -qrX ../$(notdir $@) tidepool_ocean

# Once per `make test-long` (not per build): a chunked render through GNU parallel and as a
# Slurm job array on a single-node Slurm (scripts/slurm-local.sh), against one machine.
check-farm: $(BIN)
	sh scripts/farm-test.sh $(BIN)

# Fuzz targets (tests/fuzz/, docs/limits.md): libFuzzer with ASan+UBSan, built by clang
# into build/fuzz. fuzz-regress runs every target once over each file of its corpus (no
# fuzzing); fuzz-smoke fuzzes each target for FUZZ_TIME seconds, new inputs going to
# build/fuzz/work/TARGET and crashes to build/fuzz/artifacts/.
FUZZ_TARGETS = scene png manifest mp4 frame ckpt segment request jsonedit
FUZZ_BUILD = build/fuzz
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# One input never needs more than the documented budget (docs/limits.md): a single
# allocation over 512 MB, or 5 s on one input, is a finding.
FUZZ_FLAGS = -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=5
FUZZ_ENV = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=1

fuzz: deps
	$(Q)$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 \
		CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN) -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -Wno-missing-field-initializers -Wno-pass-failed $(CFLAGS)" \
		LDFLAGS="$(FUZZ_SAN) $(LDFLAGS)" fuzz-bins

fuzz-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz_%)

# fuzz_mp4 links the plugin's MP4 code itself (instead of the loader), so its coverage
# is instrumented like the rest.
$(BUILD)/fuzz_mp4: $(filter-out %/avload.o,$(LIB_OBJS)) $(SRC_AV:%.c=$(BUILD)/obj/%.o) \
		$(BUILD)/obj/tests/fuzz/fuzz_mp4.o
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(AV_LIBS) -ldl

# FUZZ_PNG_SRC=DIR, a libpng 1.6 source tree: fuzz_png links that libpng built with the
# fuzzer's instrumentation, so that its coverage counts libpng's decoder and grows as
# the fuzzer finds new paths in it. The system libpng is invisible to libFuzzer: without
# it the target sees only src/core/util/png.c's own edges (about 110), which the corpus
# covers at once (docs/limits.md, "Fuzzing").
FUZZ_PNG_SRC ?=
ifneq ($(FUZZ_PNG_SRC),)
FUZZ_PNG_OBJS = $(patsubst %,$(BUILD)/libpng/%.o,png pngerror pngget pngmem pngpread \
	pngread pngrio pngrtran pngrutil pngset pngtrans pngwio pngwrite pngwtran pngwutil)
$(BUILD)/libpng/pnglibconf.h: $(FUZZ_PNG_SRC)/scripts/pnglibconf.h.prebuilt
	@mkdir -p $(@D)
	$(Q)cp $< $@
$(BUILD)/libpng/%.o: $(FUZZ_PNG_SRC)/%.c $(BUILD)/libpng/pnglibconf.h
	@echo "  CC      libpng/$*.c (instrumented)"
	$(Q)$(CC) $(OPT) $(CFLAGS) -w -I$(BUILD)/libpng -I$(FUZZ_PNG_SRC) -c $< -o $@
$(BUILD)/fuzz_png: $(LIB_OBJS) $(BUILD)/obj/tests/fuzz/fuzz_png.o $(FUZZ_PNG_OBJS)
	@echo "  LD      $@ (with the instrumented libpng of $(FUZZ_PNG_SRC))"
	$(Q)$(CC) $(TP_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(filter-out -lpng16,$(TP_LIBS)) -lz
endif

$(BUILD)/fuzz_segment: $(filter-out %/avload.o,$(LIB_OBJS)) $(SRC_AV:%.c=$(BUILD)/obj/%.o) \
		$(BUILD)/obj/tests/fuzz/fuzz_segment.o
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(AV_LIBS) -ldl

$(BUILD)/fuzz_%: $(LIB_OBJS) $(BUILD)/obj/tests/fuzz/fuzz_%.o
	@echo "  LD      $@"
	$(Q)$(CC) $(TP_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(TP_LIBS)

fuzz-regress: fuzz
	@for t in $(FUZZ_TARGETS); do \
		n=$$(ls tests/fuzz/corpus/$$t | wc -l); \
		echo "  FUZZ    $$t: $$n corpus inputs, once each"; \
		$(FUZZ_ENV) $(FUZZ_BUILD)/fuzz_$$t $(FUZZ_FLAGS) -dict=tests/fuzz/$$t.dict \
			tests/fuzz/corpus/$$t/* >$(FUZZ_BUILD)/regress-$$t.log 2>&1 || \
			{ tail -40 $(FUZZ_BUILD)/regress-$$t.log; echo "fuzz-regress: $$t failed (log: $(FUZZ_BUILD)/regress-$$t.log)"; exit 1; }; \
	done
	@n=$$(TP_FUZZ_VERBOSE=1 $(FUZZ_ENV) $(FUZZ_BUILD)/fuzz_ckpt $(patsubst %,tests/fuzz/corpus/ckpt/%.seed,ripple shallow sph) 2>&1 | grep -c ': loaded$$'); \
	test "$$n" = 3 || { echo "fuzz-regress: $$n of the 3 checkpoint seeds load: remake them (sh tests/fuzz/ckpt-seeds.sh)"; exit 1; }

fuzz-smoke: fuzz
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/work/$$t; \
		echo "  FUZZ    $$t for $(FUZZ_TIME) s"; \
		$(FUZZ_ENV) $(FUZZ_BUILD)/fuzz_$$t $(FUZZ_FLAGS) -dict=tests/fuzz/$$t.dict \
			-max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- \
			$(FUZZ_BUILD)/work/$$t tests/fuzz/corpus/$$t >$(FUZZ_BUILD)/smoke-$$t.log 2>&1 || \
			{ tail -40 $(FUZZ_BUILD)/smoke-$$t.log; echo "fuzz-smoke: $$t found a failure (log: $(FUZZ_BUILD)/smoke-$$t.log)"; exit 1; }; \
		grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units' $(FUZZ_BUILD)/smoke-$$t.log | sed "s/^/          /"; \
	done

# Each target for FUZZ_RUNS executions (10 million by default; on a quiet machine: hours
# per target, docs/limits.md), results in build/fuzz/long/results.md.
fuzz-long: fuzz
	@sh scripts/fuzz-long.sh $(FUZZ_LONG_TARGETS)

# ONLY="mp4 sph" runs only those workloads (see scripts/bench.sh).
bench: deps $(BIN) $(BENCH_BIN)
	@TP_BENCH_ONLY="$(ONLY)" sh scripts/bench.sh $(BUILD)

# Rewrites tests/golden/*.manifest after an intended change of the frames (lists what changed).
golden: $(BIN)
	@sh scripts/golden.sh $(BIN)
	@sh scripts/golden-textures.sh $(BIN)

# Builds on every core unless -j was given.
demo: deps-build
	$(MAKE) $(if $(findstring -j,$(MAKEFLAGS)),,-j$$(nproc)) $(BIN)
	@mkdir -p out
	$(BIN) render scenes/pond.json -o out/pond.mp4 -y

# The program, its manual page, the documents (the scene reference as
# DOCDIR/scenes/README.md, links between them kept), the example scenes with the JSON
# Schema they name, and bash completion (README "Installing").
install: $(BIN) $(MAN) $(SHLIB) $(PCFILE) $(AV_PLUGIN)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(PYTHONDIR)/tidepool $(DESTDIR)$(LIBDIR)/tidepool
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	install -m 755 $(AV_PLUGIN) $(DESTDIR)$(LIBDIR)/tidepool/tidepool-av.so
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtidepool.so
	install -m 644 include/tidepool.h $(DESTDIR)$(INCLUDEDIR)/tidepool.h
	install -m 644 $(PCFILE) $(DESTDIR)$(PKGCONFIGDIR)/tidepool.pc
	install -m 644 python/tidepool/*.py python/tidepool/py.typed $(DESTDIR)$(PYTHONDIR)/tidepool/
	printf 'LIBRARY = "%s"\nPROGRAM = "%s"\n' '$(LIBDIR)/$(SONAME)' '$(BINDIR)/tidepool' > $(DESTDIR)$(PYTHONDIR)/tidepool/_installed.py
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR)/scenes \
		$(DESTDIR)$(DOCDIR)/docs/stills $(DESTDIR)$(TPDATADIR)/scenes/textures \
		$(DESTDIR)$(TPDATADIR)/scenes/schema $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/tidepool
	install -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/tidepool.1
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 644 scenes/README.md $(DESTDIR)$(DOCDIR)/scenes/README.md
	install -m 644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	install -m 644 docs/stills/*.png $(DESTDIR)$(DOCDIR)/docs/stills/
	install -m 644 scenes/*.json $(DESTDIR)$(TPDATADIR)/scenes/
	install -m 644 scenes/textures/*.json $(DESTDIR)$(TPDATADIR)/scenes/textures/
	install -m 644 scenes/schema/*.json $(DESTDIR)$(TPDATADIR)/scenes/schema/
	install -m 644 scenes/schema/tidepool-scene-1.schema.json $(DESTDIR)$(TPDATADIR)/
	install -m 644 completion/tidepool.bash $(DESTDIR)$(BASHCOMPDIR)/tidepool
	install -d $(DESTDIR)$(BLENDERADDONDIR)/tidepool_ocean
	install -m 644 $(BLENDER_SRCS) $(DESTDIR)$(BLENDERADDONDIR)/tidepool_ocean/
	install -m 644 scenes/textures/ocean_choppy.json \
		$(DESTDIR)$(BLENDERADDONDIR)/tidepool_ocean/example_ocean.json
	printf 'PROGRAM = "%s"\n' '$(BINDIR)/tidepool' > \
		$(DESTDIR)$(BLENDERADDONDIR)/tidepool_ocean/_installed.py

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libtidepool.so \
		$(DESTDIR)$(INCLUDEDIR)/tidepool.h $(DESTDIR)$(PKGCONFIGDIR)/tidepool.pc
	rm -rf $(DESTDIR)$(PYTHONDIR)/tidepool $(DESTDIR)$(LIBDIR)/tidepool
	rm -rf $(DESTDIR)$(BLENDERADDONDIR)/tidepool_ocean
	rm -f $(DESTDIR)$(BINDIR)/tidepool $(DESTDIR)$(MANDIR)/man1/tidepool.1 \
		$(DESTDIR)$(BASHCOMPDIR)/tidepool
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(TPDATADIR)

format:
	clang-format -i $(LIB_SRCS) src/main.c $(TEST_SRCS) $(wildcard src/*/*.h src/core/*/*.h src/core/solvers/*/*.h)

lint:
	cppcheck --quiet --enable=warning,performance,portability --std=c11 -Isrc/core -Isrc \
		--suppress=missingIncludeSystem --error-exitcode=1 src

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(AV_OBJS:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) \
	$(FUZZ_TARGETS:%=$(BUILD)/obj/tests/fuzz/fuzz_%.d)

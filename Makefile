# mlbc - ONNX to dependency-free C.   make | make test | make demo | make bench | make install
BUILD  ?= build
PREFIX ?= /usr/local
CC     ?= cc
PYTHON ?= /usr/bin/python3
CFLAGS ?= -O2 -g
# Appended even to a CFLAGS given on the command line (sanitizer and fuzz builds): the
# language and the feature macros the sources need.
override CFLAGS += -std=c11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE
CPPFLAGS += -Icompiler -I$(BUILD)
LDLIBS  = -lprotobuf-c -lm

ONNX_PROTO = /usr/include/onnx/onnx.proto

# compiler/: main.c and the core header; front/ (protobuf and text front ends), ir/ (the
# graph and its queries), passes/, ops/ (one file per operator family), back/ (the emitter).
SRCDIRS = compiler compiler/front compiler/ir compiler/passes compiler/ops compiler/back
SRCS  = $(sort $(foreach d,$(SRCDIRS),$(wildcard $(d)/*.c)))
GEN   = $(BUILD)/onnx.pb-c.c $(BUILD)/text_parse.c $(BUILD)/text_lex.c $(BUILD)/templates.c
# runtime/md5.c is shared: mlbc computes the model selectors of a composite as the runtime does.
OBJS  = $(patsubst %.c,$(BUILD)/%.o,$(notdir $(SRCS))) $(GEN:.c=.o) $(BUILD)/rt/md5.o
vpath %.c $(SRCDIRS)
TMPLS = $(sort $(wildcard templates/*.c)) runtime/mlbc_model_desc.h

# The runtime library and the development-mode tools (runtime/, tools/*.c). RT_LIBS: what a
# program linking libmlbc_rt.a needs too (mlbc.pc and the CMake package say the same).
RT_SRCS = $(sort $(wildcard runtime/*.c))
RT_OBJS = $(RT_SRCS:runtime/%.c=$(BUILD)/rt/%.o) $(BUILD)/rt/mlbc.pb-c.o
RT_LIBS = -lprotobuf-c -ldl -lm -lpthread
RT_LIB  = $(if $(RT_SRCS),$(BUILD)/libmlbc_rt.a)
TOOLS   = $(patsubst tools/%.c,$(BUILD)/%,$(wildcard tools/mlbc-*.c))

# The gRPC runner (runtime/grpc.cc behind mlbc_grpc.h) is C++ over grpc++: its own archive,
# so that programs without it need neither libstdc++ nor grpc++ (a program linking it adds
# libmlbc_rt.a, grpc++'s and protobuf's libraries and -lstdc++ after it: mlbc-grpc.pc.in).
CXXFLAGS ?= -O2 -g
GRPC_CXXFLAGS = -std=c++17 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -fPIC \
                $(shell pkg-config --cflags grpc++ protobuf)
GRPC_GEN  = $(BUILD)/grpc/mlbc.pb.cc $(BUILD)/grpc/mlbc.grpc.pb.cc
GRPC_OBJS = $(BUILD)/grpc/grpc.o $(GRPC_GEN:.cc=.o)
GRPC_LIB  = $(BUILD)/libmlbc_grpc.a
GRPC_SO   = $(BUILD)/lib/mlbc/libmlbc_grpc.so
PY_GEN    = runtime/python/mlbc_gym/mlbc_pb2.py runtime/python/mlbc_gym/mlbc_pb2_grpc.py

all: $(BUILD)/mlbc $(BUILD)/test_unit $(RT_LIB) $(TOOLS) $(GRPC_LIB) $(GRPC_SO) $(PY_GEN)

$(BUILD)/libmlbc_rt.a: $(RT_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/rt/%.o: runtime/%.c $(wildcard runtime/*.h) $(BUILD)/rt/mlbc.pb-c.h | $(BUILD)/.dir
	$(CC) $(CFLAGS) -fPIC -Iruntime -I$(BUILD)/rt -c -o $@ $<

# runtime/mlbc.proto: protoc-c for the runtime, protoc for mlbc_gym (not committed).
$(BUILD)/rt/mlbc.pb-c.c $(BUILD)/rt/mlbc.pb-c.h: runtime/mlbc.proto | $(BUILD)/.dir
	@mkdir -p $(BUILD)/rt
	protoc-c --proto_path=runtime --c_out=$(BUILD)/rt runtime/mlbc.proto

$(BUILD)/rt/mlbc.pb-c.o: $(BUILD)/rt/mlbc.pb-c.c
	$(CC) $(CFLAGS) -fPIC -I$(BUILD)/rt -w -c -o $@ $<

runtime/python/mlbc_gym/mlbc_pb2.py: runtime/mlbc.proto
	protoc --proto_path=runtime --python_out=runtime/python/mlbc_gym runtime/mlbc.proto

# Debian ships no grpc_tools for Python, but protobuf-compiler-grpc's grpc_python_plugin. Its
# stubs import mlbc_pb2 as a top-level module; inside the package that import is relative.
runtime/python/mlbc_gym/mlbc_pb2_grpc.py: runtime/mlbc.proto
	protoc --proto_path=runtime --grpc_out=runtime/python/mlbc_gym \
	    --plugin=protoc-gen-grpc=$$(command -v grpc_python_plugin) runtime/mlbc.proto
	sed -i 's/^import mlbc_pb2 as/from . import mlbc_pb2 as/' $@

$(GRPC_LIB): $(GRPC_OBJS)
	rm -f $@ && ar rcs $@ $^

$(GRPC_GEN) $(GRPC_GEN:.cc=.h) &: runtime/mlbc.proto | $(BUILD)/.dir
	@mkdir -p $(BUILD)/grpc
	protoc --proto_path=runtime --cpp_out=$(BUILD)/grpc --grpc_out=$(BUILD)/grpc \
	    --plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) runtime/mlbc.proto

$(BUILD)/grpc/grpc.o: runtime/grpc.cc $(wildcard runtime/*.h) $(GRPC_GEN:.cc=.h)
	$(CXX) $(CXXFLAGS) $(GRPC_CXXFLAGS) -Iruntime -I$(BUILD)/grpc -c -o $@ $<

$(BUILD)/grpc/%.o: $(BUILD)/grpc/%.cc $(GRPC_GEN:.cc=.h)
	$(CXX) $(CXXFLAGS) $(GRPC_CXXFLAGS) -I$(BUILD)/grpc -w -c -o $@ $<

$(BUILD)/mlbc-%: tools/mlbc-%.c $(RT_LIB)
	$(CC) $(CFLAGS) -Iruntime -o $@ $< $(RT_LIB) $(RT_LIBS)

# mlbc-serve speaks gRPC too (--remote, --listen).
GRPC_LIBS = $(shell pkg-config --libs grpc++ protobuf) -lstdc++
$(BUILD)/mlbc-serve: tools/mlbc-serve.c $(RT_LIB) $(GRPC_LIB)
	$(CC) $(CFLAGS) -Iruntime -o $@ $< $(GRPC_LIB) $(RT_LIB) $(GRPC_LIBS) $(RT_LIBS)

# Both archives as one shared library, for mlbc_gym's serve_model (ctypes): its C++ model
# server answers with a Python policy (mlbc_grpc_serve_policy), without grpcio's cost. In
# lib/mlbc/, here and installed, so that -lmlbc_grpc keeps linking the archive.
$(GRPC_SO): $(GRPC_OBJS) $(RT_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) -shared -o $@ $^ $(GRPC_LIBS) $(RT_LIBS)

$(BUILD)/test_unit: tests/unit.c $(filter-out $(BUILD)/main.o,$(OBJS))
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/mlbc: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/.dir:
	@mkdir -p $(BUILD) && touch $@

# The ONNX schema comes from Debian's libonnx-dev, compiled by protoc-c.
$(BUILD)/onnx.pb-c.c $(BUILD)/onnx.pb-c.h: $(ONNX_PROTO) | $(BUILD)/.dir
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(BUILD) $(ONNX_PROTO)

$(BUILD)/text_parse.c $(BUILD)/text_parse.h: compiler/front/text_parse.y | $(BUILD)/.dir
	bison -Wall -o $(BUILD)/text_parse.c --defines=$(BUILD)/text_parse.h $<

$(BUILD)/text_lex.c: compiler/front/text_lex.l $(BUILD)/text_parse.h
	flex -o $@ $<

$(BUILD)/templates.c: $(TMPLS) tools/embed-templates.sh | $(BUILD)/.dir
	sh tools/embed-templates.sh $(TMPLS) > $@

$(BUILD)/%.o: %.c compiler/mlbc.h compiler/config.h $(BUILD)/onnx.pb-c.h $(BUILD)/text_parse.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/onnx.pb-c.o: $(BUILD)/onnx.pb-c.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -w -c -o $@ $<

$(BUILD)/text_lex.o $(BUILD)/text_parse.o: CFLAGS += -Wno-sign-compare -Wno-unused-function
$(BUILD)/%.o: $(BUILD)/%.c compiler/mlbc.h $(BUILD)/onnx.pb-c.h $(BUILD)/text_parse.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

deps:
	@sh tools/install-deps.sh

test: deps all
	@$(PYTHON) tests/run_all.py --build $(BUILD)

# What make test samples, in full (too slow for CI; about an hour on 2 cores): the generated
# code of the whole node suite under ASan+UBSan, the sanitized mlbc over every node model and
# a longer mutation fuzz, every example model under TSan with 8 threads x 10^5 runs, the pipe
# soak over 1000 sessions with faults injected (make test runs 100).
check-full: deps all
	$(PYTHON) tests/test_node.py --build $(BUILD) --generate-only
	$(PYTHON) tests/test_node.py --build $(BUILD) --sanitize
	$(PYTHON) tests/test_errors.py --build $(BUILD) --every 1 --fuzz 20000
	$(PYTHON) tests/test_threads.py --build $(BUILD) --all --runs 100000
	$(PYTHON) tests/test_same_bits.py --build $(BUILD) --all-models
	$(PYTHON) tests/pipe/soak.py --build $(BUILD) --sessions 1000

demo: deps all
	@sh tools/demo.sh $(BUILD)

bench: all
	@sh tools/install-deps.sh bench
	@$(PYTHON) bench/run.py --build $(BUILD)

# make install PREFIX=/usr/local [DESTDIR=/stage]: the tools, libmlbc_rt.a and its public
# headers, pkg-config and CMake package files, man pages and the Python package mlbc_gym
# (layout in README.md "Install"). make uninstall removes exactly these files.
BINDIR     = $(PREFIX)/bin
LIBDIR     = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include/mlbc
MANDIR     = $(PREFIX)/share/man
PCDIR      = $(LIBDIR)/pkgconfig
CMAKEDIR   = $(LIBDIR)/cmake/mlbc
# Where Debian's python3 finds packages: /usr/lib/python3/dist-packages for PREFIX=/usr,
# else PREFIX/lib/python3.X/dist-packages (on sys.path for /usr/local; else PYTHONPATH).
PYVER      = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PYTHONDIR  = $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)
VERSION    = $(shell sed -n 's/^\#define MLBC_VERSION "\(.*\)"/\1/p' compiler/config.h)
RT_HEADERS = runtime/mlbc_runtime.h runtime/mlbc_model_desc.h runtime/mlbc_grpc.h
MANPAGES   = man/mlbc.1 man/mlbc-serve.1 man/mlbc-replay.1
PY_FILES   = $(sort $(wildcard runtime/python/mlbc_gym/*.py) $(PY_GEN))
CMAKE_IN   = cmake/mlbcConfig.cmake.in cmake/mlbcConfigVersion.cmake.in

install: all
	@test -n "$(VERSION)" || { echo "install: no MLBC_VERSION in compiler/config.h" >&2; exit 1; }
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PCDIR) \
	    $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PYTHONDIR)/mlbc_gym
	install -m 755 $(BUILD)/mlbc $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(RT_LIB) $(GRPC_LIB) $(DESTDIR)$(LIBDIR)/
	install -d $(DESTDIR)$(LIBDIR)/mlbc
	install -m 644 $(GRPC_SO) $(DESTDIR)$(LIBDIR)/mlbc/
	install -m 644 $(RT_HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(PY_FILES) $(DESTDIR)$(PYTHONDIR)/mlbc_gym/
	for pc in mlbc mlbc-grpc; do \
	    sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $$pc.pc.in \
	        > $(DESTDIR)$(PCDIR)/$$pc.pc && chmod 644 $(DESTDIR)$(PCDIR)/$$pc.pc || exit 1; \
	done
	ptr=$$(echo __SIZEOF_POINTER__ | $(CC) -E -P - | tr -d ' ') && \
	for f in $(CMAKE_IN); do \
	    o=$(DESTDIR)$(CMAKEDIR)/$$(basename $$f .in) && \
	    sed -e 's|@VERSION@|$(VERSION)|g' -e "s|@SIZEOF_VOID_P@|$$ptr|g" $$f > $$o && \
	    chmod 644 $$o || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,mlbc $(notdir $(TOOLS))) \
	    $(DESTDIR)$(LIBDIR)/libmlbc_rt.a $(DESTDIR)$(LIBDIR)/libmlbc_grpc.a \
	    $(DESTDIR)$(LIBDIR)/mlbc/libmlbc_grpc.so $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(RT_HEADERS))) \
	    $(DESTDIR)$(PCDIR)/mlbc.pc $(DESTDIR)$(PCDIR)/mlbc-grpc.pc \
	    $(DESTDIR)$(CMAKEDIR)/mlbcConfig.cmake \
	    $(DESTDIR)$(CMAKEDIR)/mlbcConfigVersion.cmake \
	    $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES))) \
	    $(addprefix $(DESTDIR)$(PYTHONDIR)/mlbc_gym/,$(notdir $(PY_FILES)))
	rm -rf $(DESTDIR)$(PYTHONDIR)/mlbc_gym/__pycache__
	rmdir $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PYTHONDIR)/mlbc_gym \
	    $(DESTDIR)$(LIBDIR)/mlbc \
	    2>/dev/null || true

clean:
	rm -rf $(BUILD)

.PHONY: all deps test demo bench install uninstall clean

train-demo: all
	@$(PYTHON) train/train.py --build $(BUILD)

# ---- fuzzing (fuzz/, docs/FUZZING.md) --------------------------------------------------------
# make fuzz: builds the libFuzzer targets (clang-19, fuzzer + ASan + UBSan; Debian's
# libclang-rt-19-dev) into build/fuzz/ and runs each for FUZZ_SECONDS on the seeds below plus
# fuzz/regress/TARGET; new inputs go to build/fuzz/corpus-TARGET (not committed). The compiler's
# objects are built by a sub-make with -DMLBC_FUZZ (util.c: die longjmps, memory per input).
FUZZ_SECONDS ?= 60
# A campaign also stops after FUZZ_RUNS inputs (-1: no limit); an input that runs longer
# than FUZZ_TIMEOUT seconds is a finding (issue 11: none above 1 s).
FUZZ_RUNS    ?= -1
FUZZ_TIMEOUT ?= 1
# More libFuzzer flags for a campaign. On a shared machine a 1 s wall-clock timeout fires on
# load alone; FUZZ_TIMEOUT=10 FUZZ_EXTRA=-report_slow_units=1 keeps hangs fatal and saves
# every input over 1 s (slow-unit-*) to be timed alone.
FUZZ_EXTRA   ?=
FUZZ_CC      ?= clang-19
FUZZ_DIR      = $(BUILD)/fuzz
# The sanitizers: a long campaign may drop address (about 10x the executions a second) and
# replay its corpus under the default build afterwards (docs/FUZZING.md).
FUZZ_SAN     ?= address,undefined
FUZZ_OPT     ?= -O1
FUZZ_CFLAGS   = $(FUZZ_OPT) -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,$(FUZZ_SAN) \
                -fsanitize-coverage-ignorelist=$(CURDIR)/fuzz/coverage.ignore \
                -fno-sanitize-recover=all -DMLBC_FUZZ
FUZZ_TARGETS  = model text names json logread pipe desc
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz-%)
# Per target: extra libFuzzer flags. The compiler frees nothing until exit by design; fuzz
# builds free each input's memory (util.c), and what that cannot reach (the parser's
# malloc'd strings, bison's stack after a die) is not a leak of a real run: no leak checks.
FUZZ_ARGS_model = -max_len=65536 -dict=fuzz/onnx.dict -detect_leaks=0
FUZZ_ARGS_text  = -max_len=16384 -dict=fuzz/onnx.dict -detect_leaks=0
FUZZ_ARGS_names = -max_len=8192 -dict=fuzz/names.dict -detect_leaks=0
FUZZ_ARGS_json  = -max_len=4096
FUZZ_ARGS_logread = -max_len=8192
FUZZ_ARGS_pipe  = -max_len=4096
FUZZ_ARGS_desc  = -max_len=256
FUZZ_ASAN_model = detect_leaks=0
FUZZ_ASAN_text  = detect_leaks=0
FUZZ_ASAN_names = detect_leaks=0

fuzz-build: $(FUZZ_BINS)

$(FUZZ_DIR)/obj/.built: $(SRCS) $(RT_SRCS) fuzz/coverage.ignore $(wildcard compiler/*.h runtime/*.h) \
                        compiler/front/text_lex.l compiler/front/text_parse.y $(TMPLS)
	CFLAGS='$(FUZZ_CFLAGS)' $(MAKE) -s BUILD=$(FUZZ_DIR)/obj CC=$(FUZZ_CC) fuzz-objs
	touch $@

fuzz-objs: $(filter-out $(BUILD)/main.o,$(OBJS)) $(RT_LIB)

FUZZ_COMPILER = fuzz/compile.c $(filter-out $(FUZZ_DIR)/obj/main.o,$(OBJS:$(BUILD)/%=$(FUZZ_DIR)/obj/%))
$(FUZZ_DIR)/fuzz-model $(FUZZ_DIR)/fuzz-text $(FUZZ_DIR)/fuzz-names: $(FUZZ_DIR)/fuzz-%: fuzz/%.c fuzz/compile.c fuzz/compile.h $(FUZZ_DIR)/obj/.built
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Icompiler -I$(FUZZ_DIR)/obj -o $@ $< $(FUZZ_COMPILER) $(LDLIBS)

$(FUZZ_DIR)/fuzz-json $(FUZZ_DIR)/fuzz-logread $(FUZZ_DIR)/fuzz-pipe $(FUZZ_DIR)/fuzz-desc: $(FUZZ_DIR)/fuzz-%: fuzz/%.c $(FUZZ_DIR)/obj/.built
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Iruntime -o $@ $< $(FUZZ_DIR)/obj/libmlbc_rt.a $(RT_LIBS)

# Seeds: the example and bad models and the node suite (binary), the text corpus (text).
fuzz-seeds:
	@sh tools/install-deps.sh
	$(PYTHON) tests/test_node.py --build $(BUILD) --generate-only
	mkdir -p $(FUZZ_DIR)/seeds-model $(FUZZ_DIR)/seeds-text $(FUZZ_DIR)/seeds-names $(FUZZ_DIR)/seeds-json $(FUZZ_DIR)/seeds-logread $(FUZZ_DIR)/seeds-pipe $(FUZZ_DIR)/seeds-desc
	cp models/*.onnx tests/bad/*.onnx $(FUZZ_DIR)/seeds-model/
	for d in $(BUILD)/onnx-node-data/node/*/; do \
	    cp $$d/model.onnx $(FUZZ_DIR)/seeds-model/$$(basename $$d).onnx; done
	cp tests/text/*.onnxtxt tests/text/bad/*.onnxtxt tests/runtime/*.onnxtxt $(FUZZ_DIR)/seeds-text/

# One campaign: libFuzzer stops at the first finding (saved in build/fuzz/crash-TARGET/).
FUZZ_RUN = mkdir -p $(FUZZ_DIR)/corpus-$1 $(FUZZ_DIR)/crash-$1 && echo "== fuzz-$1, $(FUZZ_SECONDS) s" && \
    UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=allocator_may_return_null=1:$(FUZZ_ASAN_$1) \
        $(FUZZ_DIR)/fuzz-$1 -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) \
        -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-$1/ \
        $(FUZZ_ARGS_$1) $(FUZZ_EXTRA) $(FUZZ_DIR)/corpus-$1 $(FUZZ_DIR)/seeds-$1 fuzz/regress/$1

# The Python readers (mlbc_gym): fuzz/gym.py, a stdlib coverage-guided fuzzer, same limits.
FUZZ_GYM = log llvm bitstream json protobuf
FUZZ_RUN_GYM = echo "== gym-$1, $(FUZZ_SECONDS) s" && $(PYTHON) fuzz/gym.py $1 --build $(BUILD) \
    --seconds $(FUZZ_SECONDS) --runs $(FUZZ_RUNS) --timeout $(FUZZ_TIMEOUT)

fuzz: fuzz-build fuzz-seeds
	@$(foreach t,$(FUZZ_TARGETS),$(call FUZZ_RUN,$t) &&) true
	@$(foreach t,$(FUZZ_GYM),$(call FUZZ_RUN_GYM,$t) &&) true

# One Python reader's campaign: make fuzz-run-gym-llvm FUZZ_SECONDS=300
fuzz-run-gym-%:
	@$(call FUZZ_RUN_GYM,$*)

# One target's campaign: make fuzz-run-model FUZZ_SECONDS=300 [FUZZ_RUNS=10000000]
fuzz-run-%: fuzz-build fuzz-seeds
	@$(call FUZZ_RUN,$*)

.PHONY: check-full fuzz fuzz-build fuzz-objs fuzz-seeds

# mlbc - ONNX to dependency-free C.   make | make test | make demo | make bench | make install
BUILD  ?= build
PREFIX ?= /usr/local
CC     ?= cc
PYTHON ?= /usr/bin/python3
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE
CPPFLAGS += -Icompiler -I$(BUILD)
LDLIBS  = -lprotobuf-c -lm

ONNX_PROTO = /usr/include/onnx/onnx.proto

SRCS  = $(sort $(wildcard compiler/*.c))
GEN   = $(BUILD)/onnx.pb-c.c $(BUILD)/text_parse.c $(BUILD)/text_lex.c $(BUILD)/templates.c
OBJS  = $(SRCS:compiler/%.c=$(BUILD)/%.o) $(GEN:.c=.o)
TMPLS = $(sort $(wildcard templates/*.c)) runtime/mlbc_model_desc.h

# The runtime library and the development-mode tools (runtime/, tools/*.c).
RT_SRCS = $(sort $(wildcard runtime/*.c))
RT_OBJS = $(RT_SRCS:runtime/%.c=$(BUILD)/rt/%.o)
RT_LIB  = $(if $(RT_SRCS),$(BUILD)/libmlbc_rt.a)
TOOLS   = $(patsubst tools/%.c,$(BUILD)/%,$(wildcard tools/mlbc-*.c))

all: $(BUILD)/mlbc $(BUILD)/test_unit $(RT_LIB) $(TOOLS)

$(BUILD)/libmlbc_rt.a: $(RT_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/rt/%.o: runtime/%.c $(wildcard runtime/*.h) | $(BUILD)/.dir
	@mkdir -p $(BUILD)/rt
	$(CC) $(CFLAGS) -fPIC -Iruntime -c -o $@ $<

$(BUILD)/mlbc-%: tools/mlbc-%.c $(RT_LIB)
	$(CC) $(CFLAGS) -Iruntime -o $@ $< $(RT_LIB) -ldl -lm -lpthread

$(BUILD)/test_unit: tests/unit.c $(filter-out $(BUILD)/main.o,$(OBJS))
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/mlbc: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/.dir:
	@mkdir -p $(BUILD) && touch $@

# The ONNX schema comes from Debian's libonnx-dev, compiled by protoc-c.
$(BUILD)/onnx.pb-c.c $(BUILD)/onnx.pb-c.h: $(ONNX_PROTO) | $(BUILD)/.dir
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(BUILD) $(ONNX_PROTO)

$(BUILD)/text_parse.c $(BUILD)/text_parse.h: compiler/text_parse.y | $(BUILD)/.dir
	bison -Wall -o $(BUILD)/text_parse.c --defines=$(BUILD)/text_parse.h $<

$(BUILD)/text_lex.c: compiler/text_lex.l $(BUILD)/text_parse.h
	flex -o $@ $<

$(BUILD)/templates.c: $(TMPLS) tools/embed-templates.sh | $(BUILD)/.dir
	sh tools/embed-templates.sh $(TMPLS) > $@

$(BUILD)/%.o: compiler/%.c compiler/mlbc.h compiler/config.h $(BUILD)/onnx.pb-c.h $(BUILD)/text_parse.h
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

demo: deps all
	@sh tools/demo.sh $(BUILD)

bench: all
	@$(PYTHON) bench/run.py --build $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/mlbc $(TOOLS) $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf $(BUILD)

.PHONY: all deps test demo bench install clean

train-demo: all
	@$(PYTHON) train/train.py --build $(BUILD)

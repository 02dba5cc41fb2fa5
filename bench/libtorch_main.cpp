/* libtorch_main.cpp - the libtorch peer: times one TorchScript model (bench/torchscript/NAME.pt,
 * written by make_torchscript.py) the way model_main.c times mlbc's code; linked with harness.c.
 * ARGS: NAME.pt, then one "DTYPE:D0xD1x..." per ONNX graph input, in graph order (DTYPE is the
 * ONNX element type). The inputs get model_main.c's data: the same draws per element, in the
 * same order. One step = one forward() at batch 1, on one thread, in inference mode. */
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/script.h>

extern "C" {
#include "bench.h"
}

#define WARM_UP_RUNS 10

namespace {

struct State {
    c10::InferenceMode guard;       /* held for the whole run, so not timed in each step */
    torch::jit::Module module;
    std::vector<torch::jit::IValue> inputs;
};

/* The ONNX element types that model_main.c fills with numbers (16-bit floats get bit
 * patterns there: not worth mirroring until a model takes them). */
bool scalar_type(long dtype, at::ScalarType *type)
{
    switch (dtype) {
    case 1: *type = at::kFloat; return true;
    case 11: *type = at::kDouble; return true;
    case 9: *type = at::kBool; return true;
    case 2: *type = at::kByte; return true;
    case 3: *type = at::kChar; return true;
    case 5: *type = at::kShort; return true;
    case 6: *type = at::kInt; return true;
    case 7: *type = at::kLong; return true;
    }
    return false;
}

/* SPEC "DTYPE:D0xD1x..." (no dims: a scalar) -> a tensor holding model_main.c's values. */
bool make_input(const char *spec, at::Tensor *out)
{
    char *end;
    at::ScalarType type;
    if (!scalar_type(strtol(spec, &end, 10), &type) || *end != ':')
        return false;
    std::vector<int64_t> shape;
    for (const char *p = end + 1; *p; p += *p == 'x') {
        shape.push_back(strtoll(p, &end, 10));
        if (end == p)
            return false;
        p = end;
    }
    at::Tensor t = torch::empty(shape, at::kDouble);      /* exact for every value below */
    double *v = t.data_ptr<double>();
    bool real = type == at::kFloat || type == at::kDouble;
    for (int64_t i = 0; i < t.numel(); i++) {
        uint32_t r = bench_rand();
        float f = bench_randf();
        v[i] = real ? f : type == at::kBool ? r & 1 : r & 3;
    }
    *out = t.to(type);
    return true;
}

/* c10::Error messages end in a C++ backtrace: keep the first line. */
void error(const char *what, const std::exception &e)
{
    std::string msg = e.what();
    fprintf(stderr, "libtorch_main: error: %s: %s\n", what, msg.substr(0, msg.find('\n')).c_str());
}

}  // namespace

void *bench_setup(int argc, char **argv)
{
    if (argc < 1)
        return NULL;
    at::set_num_threads(1);                 /* like the generated code */
    at::set_num_interop_threads(1);
    auto s = std::make_unique<State>();
    try {
        s->module = torch::jit::load(argv[0]);
    } catch (const std::exception &e) {
        error(argv[0], e);
        return NULL;
    }
    s->module.eval();
    for (int i = 1; i < argc; i++) {
        at::Tensor t;
        if (!make_input(argv[i], &t)) {
            fprintf(stderr, "libtorch_main: error: bad input \"%s\"\n", argv[i]);
            return NULL;
        }
        s->inputs.push_back(t);
    }
    /* TorchScript's profiling executor records the first run and optimizes the graph in the
     * second, together milliseconds: not steady state, and they would fool the calibration. */
    for (int i = 0; i < WARM_UP_RUNS; i++)
        if (bench_step(s.get()))
            return NULL;
    return s.release();
}

int bench_step(void *state)
{
    State *s = static_cast<State *>(state);
    try {
        s->module.forward(s->inputs);
    } catch (const std::exception &e) {
        error("forward", e);
        return 1;
    }
    return 0;
}

// composite_runner.cpp - a composite of mlbc (several models in one, chosen by model_selector
// as LLVM's composite AOT models are) inside LLVM 19's own llvm::ReleaseModeModelRunner<T>:
//
//   mlbc size=tests/llvm/composite_size.onnxtxt speed=tests/llvm/composite_speed.onnxtxt
//        -o policies.c -n policies --cxx-wrapper
//   mlbc tests/llvm/composite_size.onnxtxt  -o size.c  -n size      (each model alone)
//   mlbc tests/llvm/composite_speed.onnxtxt -o speed.c -n speed
//   clang++-19 $(llvm-config-19 --cxxflags) -I. composite_runner.cpp policies.c size.c speed.c
//       -o composite_runner $(llvm-config-19 --ldflags) -lLLVM-19 -lm
//
// For each selector, every decision LLVM's runner returns must be the one that model
// compiled alone gives (called directly through its descriptor). Prints one
// "ok|FAIL  check -- detail" line per check, then "N passed, M failed".

#include "policies.h"
#include "size.h"
#include "speed.h"

#include "llvm/Analysis/ReleaseModeModelRunner.h"
#include "llvm/Analysis/TensorSpec.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace llvm;

namespace {

int Passed = 0, Failed = 0;

void report(bool Ok, const char *Check, const char *Fmt, ...)
{
    char Detail[600];
    va_list Ap;
    va_start(Ap, Fmt);
    std::vsnprintf(Detail, sizeof Detail, Fmt, Ap);
    va_end(Ap);
    std::printf("%s  %s%s%s\n", Ok ? "ok  " : "FAIL", Check, *Detail ? " -- " : "", Detail);
    std::fflush(stdout);
    (Ok ? Passed : Failed)++;
}

// The errors LLVMContext::emitError reports (without a handler it would exit the process).
std::vector<std::string> Diagnostics;

void collectDiagnostic(const DiagnosticInfo *DI, void *)
{
    std::string S;
    raw_string_ostream OS(S);
    DiagnosticPrinterRawOStream DP(OS);
    DI->print(DP);
    OS.flush();
    Diagnostics.push_back(S);
}

// The model object the runner owns (private to it), for its status.
struct Tracked : mlbc::policies {
    static Tracked *Last;
    Tracked() { Last = this; }
};
Tracked *Tracked::Last = nullptr;

// A model compiled alone, called directly through its descriptor.
int64_t direct(const mlbc_model_desc &D, int64_t Bb, int64_t Height)
{
    std::vector<uint64_t> Ctx(D.ctx_size / 8 + 1);
    D.init(Ctx.data());
    *(int64_t *)D.arg_data(Ctx.data(), D.lookup_arg_index("callee_basic_block_count")) = Bb;
    *(int64_t *)D.arg_data(Ctx.data(), D.lookup_arg_index("callsite_height")) = Height;
    if (D.run(Ctx.data()) != 0)
        return INT64_MIN;
    return *(const int64_t *)D.result_data(Ctx.data(), 0);
}

const std::vector<TensorSpec> Specs = {
    TensorSpec::createSpec<int64_t>("callee_basic_block_count", {1}),
    TensorSpec::createSpec<int64_t>("callsite_height", {1}),
};

// Every decision of the composite under SELECTOR equals that of the model alone; returns
// the decisions, to compare the selectors'.
std::string checkSelector(LLVMContext &Ctx, const char *Selector, const mlbc_model_desc &Alone)
{
    Diagnostics.clear();
    ReleaseModeModelRunner<Tracked> R(Ctx, Specs, "inlining_decision",
                                      EmbeddedModelRunnerOptions().setModelSelector(Selector));
    std::string Got;
    int Wrong = 0;
    for (int64_t Bb = 0; Bb < 12; Bb++)
        for (int64_t H = 0; H < 12; H++) {
            *R.getTensor<int64_t>(0) = Bb;
            *R.getTensor<int64_t>(1) = H;
            int64_t L = R.evaluate<int64_t>();
            Wrong += L != direct(Alone, Bb, H);
            Got += (char)('0' + L);
        }
    char Check[200];
    std::snprintf(Check, sizeof Check, "selector '%s': the decisions of model %s compiled alone",
                  Selector, Alone.name);
    report(!Wrong && Diagnostics.empty(), Check, "%d of 144 differ%s", Wrong,
           Diagnostics.empty() ? "" : "; unexpected diagnostics");
    return Got;
}

} // namespace

int main()
{
    LLVMContext Ctx;
    Ctx.setDiagnosticHandlerCallBack(collectDiagnostic, nullptr);

    std::string Size = checkSelector(Ctx, "size", size_desc);
    std::string Speed = checkSelector(Ctx, "speed", speed_desc);
    report(Size != Speed, "the two selectors choose models that decide differently",
           "'size' inlines %zu of 144 calls, 'speed' %zu",
           (size_t)std::count(Size.begin(), Size.end(), '1'),
           (size_t)std::count(Speed.begin(), Speed.end(), '1'));
    {
        Diagnostics.clear();
        ReleaseModeModelRunner<Tracked> R(Ctx, Specs, "inlining_decision",
                                          EmbeddedModelRunnerOptions().setModelSelector("nope"));
        report(Diagnostics.empty() && Tracked::Last->Run() == policies_UNKNOWN_SELECTOR,
               "an unknown selector: Run() returns policies_UNKNOWN_SELECTOR", "%d",
               Tracked::Last->Run());
    }
    {
        Diagnostics.clear();
        ReleaseModeModelRunner<Tracked> R(Ctx, Specs, "inlining_decision");
        bool Said = !Diagnostics.empty() &&
                    Diagnostics[0].find("A model selector was not specified") != std::string::npos;
        report(Said && Tracked::Last->Run() == policies_UNKNOWN_SELECTOR,
               "no selector: LLVM's error, and Run() on {0, 0} returns policies_UNKNOWN_SELECTOR",
               "%s", Diagnostics.empty() ? "no diagnostic" : Diagnostics[0].c_str());
    }
    std::printf("%d passed, %d failed\n", Passed, Failed);
    return Failed ? 1 : 0;
}

// mlbc_inline_plugin.cpp - an mlbc-compiled inlining policy inside a stock clang-19.
//
// A pass plugin for LLVM 19 (`clang-19 -O2 -c x.c -fpass-plugin=policy.so`). At pipeline
// start it registers PluginInlineAdvisorAnalysis; LLVM's inliner then asks our factory for
// its advisor, and the factory returns LLVM's own MLInlineAdvisor over
//
//   release mode (default):  llvm::ReleaseModeModelRunner<mlbc::NAME>, the C++ class that
//                            `mlbc --cxx-wrapper -n NAME` writes around the generated C
//                            (instantiated in mlbc_inline_policy.cpp, the only part of the
//                            plugin that depends on the policy);
//   development mode:        mlbc's pipe runner (libmlbc_rt, mlbc_runner_pipe), which speaks
//                            LLVM's InteractiveModelRunner protocol to a training host
//                            (mlbc_gym, mlbc-serve, LLVM's interactive_host.py);
//   a model by path:         MLBC_MODEL=policy.onnx (or .onnxtxt, or a .so built from mlbc's
//                            output): libmlbc_rt's shared-object runner, which compiles an
//                            ONNX model with mlbc and cc into its cache first (MLGO's "model
//                            under training"; the plugin's own policy is then not used).
//
// Built per policy by plugins/clang/build.sh. Settings, read from the environment when the
// advisor is created (the cc1 process inherits the environment of the clang command):
//
//   MLBC_CHANNEL=BASE        development mode: observations to BASE.out, advice from BASE.in
//                            (the FIFOs the host created; as -inliner-interactive-channel-base)
//   MLBC_TIMEOUT_MS=N        development mode: limit for opening the channel and for every
//                            read and write (default 10000); on any channel error the plugin
//                            says why once and uses LLVM's default heuristic from then on
//   MLBC_INCLUDE_DEFAULT=1   development mode: append feature "inlining_default" holding the
//                            default heuristic's decision (as -inliner-interactive-include-
//                            default, without LLVM 19's wrong-slot bug, llvm-mlgo.md §13.1)
//   MLBC_MODEL=PATH          release mode with the model at PATH instead of the built-in
//                            policy (bound with LLVM's feed_/fetch_ prefixes); an ONNX model is
//                            compiled on first use into $MLBC_CACHE_DIR (else
//                            ~/.cache/mlbc) by $MLBC (else mlbc on PATH) and $CC (else cc)
//   MLBC_MODEL_SELECTOR=S    release mode: EmbeddedModelRunnerOptions::setModelSelector(S)
//   MLBC_STATS=1             count model evaluations and the time spent in them; print a
//                            summary line on standard error when the process exits
//   MLBC_STATS_FILE=PATH     with MLBC_STATS=1: append the summary line to PATH instead
//
// The same settings are also -mllvm options (-mlbc-channel=BASE, -mlbc-timeout-ms=N,
// -mlbc-include-default, -mlbc-model=PATH, -mlbc-model-selector=S, -mlbc-stats) when the plugin is loaded
// early enough for clang to know them: `-fplugin=P.so -fpass-plugin=P.so` (clang-19 parses
// -mllvm before it loads -fpass-plugin libraries). An option wins over the environment.

#include "mlbc_runtime.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/BlockFrequencyInfo.h"
#include "llvm/Analysis/InlineAdvisor.h"
#include "llvm/Analysis/InlineCost.h"
#include "llvm/Analysis/InlineModelFeatureMaps.h"
#include "llvm/Analysis/MLInlineAdvisor.h"
#include "llvm/Analysis/MLModelRunner.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ProfileSummaryInfo.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Analysis/TensorSpec.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace llvm;

// Provided by mlbc_inline_policy.cpp, compiled with the policy's header.
namespace mlbc_plugin {
const char *policyName();
bool policyUsable(std::string &Why);
std::unique_ptr<MLModelRunner> makeReleaseRunner(LLVMContext &Ctx, StringRef Selector);
} // namespace mlbc_plugin

namespace {

const char *const PluginName = "mlbc-inline-plugin";

// ---- settings ----------------------------------------------------------------------------

cl::opt<std::string> ChannelOpt("mlbc-channel", cl::Hidden, cl::init(""),
                                cl::desc("mlbc plugin: development mode over BASE.in/.out"));
cl::opt<int> TimeoutOpt("mlbc-timeout-ms", cl::Hidden, cl::init(0),
                        cl::desc("mlbc plugin: channel timeout in milliseconds"));
cl::opt<bool> IncludeDefaultOpt("mlbc-include-default", cl::Hidden, cl::init(false),
                                cl::desc("mlbc plugin: send the default decision too"));
cl::opt<std::string> ModelOpt("mlbc-model", cl::Hidden, cl::init(""),
                              cl::desc("mlbc plugin: release mode with this model (.onnx, .so)"));
cl::opt<std::string> SelectorOpt("mlbc-model-selector", cl::Hidden, cl::init(""),
                                 cl::desc("mlbc plugin: model selector (release mode)"));
cl::opt<bool> StatsOpt("mlbc-stats", cl::Hidden, cl::init(false),
                       cl::desc("mlbc plugin: print model evaluation statistics at exit"));

std::string envStr(const char *Name)
{
    const char *V = std::getenv(Name);
    return V ? V : "";
}

bool envFlag(const char *Name)
{
    std::string V = envStr(Name);
    return !V.empty() && V != "0";
}

struct Settings {
    std::string Channel, Model, Selector, StatsFile;
    int TimeoutMs = 0;
    bool IncludeDefault = false, Stats = false;

    static Settings read()
    {
        Settings S;
        S.Channel = !ChannelOpt.empty() ? ChannelOpt.getValue() : envStr("MLBC_CHANNEL");
        S.Model = !ModelOpt.empty() ? ModelOpt.getValue() : envStr("MLBC_MODEL");
        S.Selector = !SelectorOpt.empty() ? SelectorOpt.getValue()
                                          : envStr("MLBC_MODEL_SELECTOR");
        S.TimeoutMs = TimeoutOpt > 0 ? TimeoutOpt.getValue()
                                     : std::atoi(envStr("MLBC_TIMEOUT_MS").c_str());
        S.IncludeDefault = IncludeDefaultOpt || envFlag("MLBC_INCLUDE_DEFAULT");
        S.Stats = StatsOpt || envFlag("MLBC_STATS");
        S.StatsFile = envStr("MLBC_STATS_FILE");
        return S;
    }
};

// ---- statistics: evaluations and the time spent in them, printed at exit ----------------

uint64_t nowNs(clockid_t Clock)
{
    struct timespec T;
    clock_gettime(Clock, &T);
    return (uint64_t)T.tv_sec * 1000000000u + (uint64_t)T.tv_nsec;
}

struct Stats {
    bool Enabled = false;
    std::string File;
    std::string Mode;              // "release" or "development"
    std::string Policy;            // MLBC_MODEL's path; empty: the built-in policy
    uint64_t Evaluations = 0;
    uint64_t ModelNs = 0;          // wall time inside evaluate (development: incl. the host)
    uint64_t Advisors = 0;         // advisors created (one per inliner run, i.e. per TU)
    uint64_t Fallbacks = 0;        // decisions taken by the default heuristic after an error
    uint64_t LoadWallNs = nowNs(CLOCK_MONOTONIC);

    ~Stats()
    {
        if (!Enabled)
            return;
        struct rusage RU;
        getrusage(RUSAGE_SELF, &RU);
        double CpuMs = RU.ru_utime.tv_sec * 1e3 + RU.ru_utime.tv_usec / 1e3 +
                       RU.ru_stime.tv_sec * 1e3 + RU.ru_stime.tv_usec / 1e3;
        double WallMs = (nowNs(CLOCK_MONOTONIC) - LoadWallNs) / 1e6;
        double ModelMs = ModelNs / 1e6;
        char Line[512];
        std::snprintf(Line, sizeof Line,
                      "%s: stats: mode=%s policy=%s advisors=%llu evaluations=%llu "
                      "model_ns=%llu ns_per_evaluation=%.0f fallbacks=%llu process_cpu_ms=%.1f "
                      "wall_ms_since_load=%.1f model_share_of_cpu=%.3f%% "
                      "model_share_of_wall=%.3f%%\n",
                      PluginName, Mode.empty() ? "none" : Mode.c_str(),
                      Policy.empty() ? mlbc_plugin::policyName() : Policy.c_str(),
                      (unsigned long long)Advisors,
                      (unsigned long long)Evaluations, (unsigned long long)ModelNs,
                      Evaluations ? (double)ModelNs / Evaluations : 0.0,
                      (unsigned long long)Fallbacks, CpuMs, WallMs,
                      CpuMs > 0 ? 100.0 * ModelMs / CpuMs : 0.0,
                      WallMs > 0 ? 100.0 * ModelMs / WallMs : 0.0);
        FILE *F = File.empty() ? nullptr : std::fopen(File.c_str(), "a");
        std::fputs(Line, F ? F : stderr);
        if (F)
            std::fclose(F);
    }
};

Stats TheStats;

// ---- model runners -----------------------------------------------------------------------

// An MLModelRunner over a libmlbc_rt runner: the pipe runner (development mode) or the
// shared-object runner over MLBC_MODEL. The input buffers LLVM fills are the runner's own (no
// copy). The first failure is sticky: the advisor reports it once and asks LLVM's default
// heuristic from then on.
class RtRunner final : public MLModelRunner {
public:
    RtRunner(LLVMContext &Ctx, const std::vector<TensorSpec> &Features, MLModelRunner::Kind K,
             mlbc_runner *Runner, const char *Err)
        : MLModelRunner(Ctx, K, Features.size()), R(Runner), Error(Runner ? "" : Err)
    {
        for (size_t I = 0; I < Features.size(); ++I)
            setUpBufferForTensor(I, Features[I], R ? mlbc_runner_input(R, (int)I) : nullptr);
    }
    ~RtRunner() override
    {
        if (R)
            mlbc_runner_free(R);
    }

    static std::vector<mlbc_tensor_spec> specs(const std::vector<TensorSpec> &Features)
    {
        std::vector<mlbc_tensor_spec> Specs;
        for (const TensorSpec &S : Features)
            Specs.push_back(toMlbc(S));
        return Specs;
    }

    static mlbc_tensor_spec toMlbc(const TensorSpec &S)
    {
        int T = 0;
        switch (S.type()) {
        case TensorType::Float: T = MLBC_FLOAT; break;
        case TensorType::Double: T = MLBC_DOUBLE; break;
        case TensorType::Int8: T = MLBC_INT8; break;
        case TensorType::UInt8: T = MLBC_UINT8; break;
        case TensorType::Int16: T = MLBC_INT16; break;
        case TensorType::UInt16: T = MLBC_UINT16; break;
        case TensorType::Int32: T = MLBC_INT32; break;
        case TensorType::UInt32: T = MLBC_UINT32; break;
        case TensorType::Int64: T = MLBC_INT64; break;
        case TensorType::UInt64: T = MLBC_UINT64; break;
        default: break;
        }
        return mlbc_spec(S.name().c_str(), T, (int)S.shape().size(), S.shape().data());
    }

    bool ok() const { return R && !Failed; }
    const std::string &error() const { return Error; }
    // True once after the first failure: the caller reports it.
    bool takeNewFailure()
    {
        bool N = NewFailure;
        NewFailure = false;
        return N;
    }

    void switchContext(StringRef Name) override
    {
        // The pipe runner sent the header and the context "" when it opened the channel, as
        // InteractiveModelRunner + MLInlineAdvisor's switchContext("") do together.
        if (FirstSwitch && Name.empty()) {
            FirstSwitch = false;
            return;
        }
        FirstSwitch = false;
        if (ok() && mlbc_runner_set_context(R, Name.str().c_str()) != 0)
            fail();
    }

private:
    void *evaluateUntyped() override
    {
        FirstSwitch = false;
        if (ok()) {
            if (const void *A = mlbc_runner_evaluate(R))
                return const_cast<void *>(A);
            fail();
        }
        Fallback = 0;
        return &Fallback;
    }

    void fail()
    {
        if (Failed)
            return;
        Failed = NewFailure = true;
        Error = mlbc_runner_error(R);
    }

    mlbc_runner *R = nullptr;
    std::string Error;
    bool Failed = false, NewFailure = false, FirstSwitch = true;
    int64_t Fallback = 0;
};

std::unique_ptr<RtRunner> makePipeRunner(LLVMContext &Ctx,
                                         const std::vector<TensorSpec> &Features,
                                         const Settings &S)
{
    std::vector<mlbc_tensor_spec> Specs = RtRunner::specs(Features);
    mlbc_tensor_spec Adv = RtRunner::toMlbc(InlineDecisionSpec);
    mlbc_pipe_options Opt = {MLBC_FRAMING_LLVM, S.TimeoutMs, ""};
    char Err[512] = "";
    mlbc_runner *R = mlbc_runner_pipe(S.Channel.c_str(), Specs.data(), (int)Specs.size(), &Adv,
                                      &Opt, Err, sizeof Err);
    return std::make_unique<RtRunner>(Ctx, Features, MLModelRunner::Kind::Interactive, R, Err);
}

// MLBC_MODEL: bound as getReleaseModeAdvisor binds a compiled-in model (feed_/fetch_ names
// first, the model selector), and refused when it reads none of the features, as the
// built-in policy is (LLVM would only assert).
std::unique_ptr<RtRunner> makeModelRunner(LLVMContext &Ctx,
                                          const std::vector<TensorSpec> &Features,
                                          const Settings &S)
{
    std::vector<mlbc_tensor_spec> Specs = RtRunner::specs(Features);
    mlbc_tensor_spec Adv = RtRunner::toMlbc(InlineDecisionSpec);
    mlbc_release_options Opt = {"feed_", "fetch_",
                                S.Selector.empty() ? nullptr : S.Selector.c_str()};
    char Err[1024] = "";
    mlbc_runner *R = mlbc_runner_shared_object(S.Model.c_str(), nullptr, Specs.data(),
                                               (int)Specs.size(), &Adv, &Opt, Err, sizeof Err);
    bool Reads = false;
    for (int I = 0; R && I < mlbc_runner_num_inputs(R); ++I)
        Reads |= mlbc_runner_input_bound(R, I) != 0;
    if (R && !Reads) {
        mlbc_runner_free(R);
        R = nullptr;
        std::snprintf(Err, sizeof Err, "the model reads none of the inliner's features");
    }
    return std::make_unique<RtRunner>(Ctx, Features, MLModelRunner::Kind::Release, R, Err);
}

// MLBC_STATS: times every evaluation of the runner it wraps. Its input buffers are the
// wrapped runner's, so LLVM writes the features straight into the model (or pipe runner).
class TimedRunner final : public MLModelRunner {
public:
    TimedRunner(LLVMContext &Ctx, std::unique_ptr<MLModelRunner> In,
                const std::vector<TensorSpec> &Features)
        : MLModelRunner(Ctx, In->getKind(), Features.size()), Inner(std::move(In))
    {
        for (size_t I = 0; I < Features.size(); ++I)
            setUpBufferForTensor(I, Features[I], Inner->getTensorUntyped(I));
    }
    MLModelRunner &inner() { return *Inner; }
    void switchContext(StringRef Name) override { Inner->switchContext(Name); }

private:
    void *evaluateUntyped() override
    {
        uint64_t T0 = nowNs(CLOCK_MONOTONIC);
        Out = Inner->evaluate<int64_t>();
        TheStats.ModelNs += nowNs(CLOCK_MONOTONIC) - T0;
        TheStats.Evaluations++;
        return &Out;
    }
    std::unique_ptr<MLModelRunner> Inner;
    int64_t Out = 0;
};

// ---- the advisor -------------------------------------------------------------------------

// LLVM's -inline-deferral (a hidden cl::opt<bool> of libLLVM, default false).
bool inlineDeferral()
{
    auto &Opts = cl::getRegisteredOptions();
    auto It = Opts.find("inline-deferral");
    return It != Opts.end() && *static_cast<cl::opt<bool> *>(It->second);
}

// LLVM's default decision for a call site (what InlineAdvisor.cpp's getDefaultInlineAdvice
// computes for MLInlineAdvisor's GetDefaultAdvice callback; that function is not exported).
bool defaultAdvice(CallBase &CB, FunctionAnalysisManager &FAM, const InlineParams &Params)
{
    Function &Caller = *CB.getCaller();
    ProfileSummaryInfo *PSI = FAM.getResult<ModuleAnalysisManagerFunctionProxy>(Caller)
                                  .getCachedResult<ProfileSummaryAnalysis>(*Caller.getParent());
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(Caller);
    auto GetAC = [&](Function &F) -> AssumptionCache & {
        return FAM.getResult<AssumptionAnalysis>(F);
    };
    auto GetBFI = [&](Function &F) -> BlockFrequencyInfo & {
        return FAM.getResult<BlockFrequencyAnalysis>(F);
    };
    auto GetTLI = [&](Function &F) -> const TargetLibraryInfo & {
        return FAM.getResult<TargetLibraryAnalysis>(F);
    };
    auto Cost = [&](CallBase &Call) {
        Function &Target = *Call.getCalledFunction();
        auto &TTI = FAM.getResult<TargetIRAnalysis>(Target);
        bool Remarks =
            Target.getContext().getDiagHandlerPtr()->isMissedOptRemarkEnabled("inline");
        return getInlineCost(Call, Params, TTI, GetAC, GetTLI, GetBFI, PSI,
                             Remarks ? &ORE : nullptr);
    };
    return shouldInline(CB, Cost, ORE, Params.EnableDeferral.value_or(inlineDeferral()))
        .has_value();
}

// MLInlineAdvisor with two additions for runners of libmlbc_rt: the "inlining_default"
// feature (development mode, MLBC_INCLUDE_DEFAULT) and, once the channel or the model has
// failed, LLVM's default heuristic instead of a made-up answer. With the built-in policy it
// behaves exactly as MLInlineAdvisor.
class MlbcInlineAdvisor final : public MLInlineAdvisor {
public:
    MlbcInlineAdvisor(Module &M, ModuleAnalysisManager &MAM, std::unique_ptr<MLModelRunner> R,
                      std::function<bool(CallBase &)> GetDefault, RtRunner *Rt,
                      bool IncludeDefault)
        : MLInlineAdvisor(M, MAM, std::move(R), std::move(GetDefault)), Rt(Rt),
          IncludeDefault(IncludeDefault)
    {
    }

protected:
    std::unique_ptr<MLInlineAdvice> getAdviceFromModel(CallBase &CB,
                                                       OptimizationRemarkEmitter &ORE) override
    {
        if (!Rt)
            return MLInlineAdvisor::getAdviceFromModel(CB, ORE);
        if (!Rt->ok()) {
            TheStats.Fallbacks++;
            return std::make_unique<MLInlineAdvice>(this, CB, ORE, GetDefaultAdvice(CB));
        }
        if (IncludeDefault)
            *ModelRunner->getTensor<int64_t>(NumberOfFeatures) = GetDefaultAdvice(CB);
        bool Advice = ModelRunner->evaluate<int64_t>() != 0;
        if (Rt->takeNewFailure())
            std::fprintf(stderr, "%s: %s; using LLVM's default inlining heuristic from now on\n",
                         PluginName, Rt->error().c_str());
        if (!Rt->ok()) {
            TheStats.Fallbacks++;
            Advice = GetDefaultAdvice(CB);
        }
        return std::make_unique<MLInlineAdvice>(this, CB, ORE, Advice);
    }

private:
    RtRunner *Rt;
    bool IncludeDefault;
};

ModuleAnalysisManager *CurrentMAM = nullptr;   // set by the registering pass, per module

InlineAdvisor *advisorFactory(Module &M, FunctionAnalysisManager &FAM, InlineParams Params,
                              InlineContext IC)
{
    (void)IC;
    LLVMContext &Ctx = M.getContext();
    if (!CurrentMAM) {
        Ctx.emitError(Twine(PluginName) + ": no module analysis manager (internal error)");
        return nullptr;
    }
    Settings S = Settings::read();
    if (S.Stats) {
        TheStats.Enabled = true;
        TheStats.File = S.StatsFile;
    }
    auto GetDefault = [&FAM, Params](CallBase &CB) { return defaultAdvice(CB, FAM, Params); };

    std::unique_ptr<MLModelRunner> Runner;
    RtRunner *Rt = nullptr;
    std::vector<TensorSpec> Features = FeatureMap;
    if (!S.Channel.empty() || !S.Model.empty()) {
        bool Dev = !S.Channel.empty();
        if (Dev && S.IncludeDefault)
            Features.push_back(DefaultDecisionSpec);
        std::unique_ptr<RtRunner> P = Dev ? makePipeRunner(Ctx, Features, S)
                                          : makeModelRunner(Ctx, Features, S);
        if (!P->ok()) {
            Ctx.emitError(Twine(PluginName) + (Dev ? ": development mode: " : ": MLBC_MODEL " +
                                               S.Model + ": ") + P->error());
            return nullptr;
        }
        Rt = P.get();
        Runner = std::move(P);
        TheStats.Mode = Dev ? "development" : "release";
        TheStats.Policy = Dev ? "" : S.Model;
    } else {
        static std::string Why;
        static int Usable = -1;
        if (Usable < 0)
            Usable = mlbc_plugin::policyUsable(Why);
        if (!Usable) {
            Ctx.emitError(Twine(PluginName) + ": " + Why);
            return nullptr;
        }
        Runner = mlbc_plugin::makeReleaseRunner(Ctx, S.Selector);
        TheStats.Mode = "release";
    }
    if (S.Stats)
        Runner = std::make_unique<TimedRunner>(Ctx, std::move(Runner), Features);
    TheStats.Advisors++;
    return new MlbcInlineAdvisor(M, *CurrentMAM, std::move(Runner), GetDefault, Rt,
                                 S.IncludeDefault && S.Channel.size());
}

// Runs at pipeline start: makes the inliner use advisorFactory for this module.
struct RegisterMlbcAdvisor : PassInfoMixin<RegisterMlbcAdvisor> {
    PreservedAnalyses run(Module &, ModuleAnalysisManager &MAM)
    {
        CurrentMAM = &MAM;
        MAM.registerPass([] { return PluginInlineAdvisorAnalysis(advisorFactory); });
        return PreservedAnalyses::all();
    }
    static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
    return {LLVM_PLUGIN_API_VERSION, PluginName, LLVM_VERSION_STRING, [](PassBuilder &PB) {
                PB.registerPipelineStartEPCallback(
                    [](ModulePassManager &MPM, OptimizationLevel) {
                        MPM.addPass(RegisterMlbcAdvisor());
                    });
            }};
}

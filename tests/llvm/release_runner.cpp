// release_runner.cpp - mlbc's --cxx-wrapper classes inside LLVM 19's own
// llvm::ReleaseModeModelRunner<T>, built against llvm-19-dev and libLLVM-19:
//
//   mlbc models/inliner.onnx        -o inliner.c  -n inliner  --cxx-wrapper
//   mlbc models/regalloc_evict.onnx -o evict.c    -n evict    --cxx-wrapper
//   mlbc tests/llvm/selector_model.onnxtxt -o selector.c -n selector --cxx-wrapper
//   clang++-19 $(llvm-config-19 --cxxflags) -I. release_runner.cpp inliner.c evict.c
//       selector.c -o release_runner $(llvm-config-19 --ldflags) -lLLVM-19 -lm
//   release_runner [--ref-inliner FILE] [--ref-evict FILE] [--random N] [--seed S]
//
// Every decision LLVM's runner returns is compared with the generated C called directly
// (NAME_init / NAME_arg_data / NAME_run / NAME_result_data on a context of its own), on the
// reference samples (models/ref/*.npz, converted by tests/test_llvm.py: per sample the
// graph inputs' raw bytes in graph order, then the reference output's) and on random inputs.
// Prints one "ok|FAIL  check -- detail" line per check, then "N passed, M failed".
//
// The .c files are compiled as C (the generated code is C99); the headers are included here
// with their C++ classes.

#include "evict.h"
#include "inliner.h"
#include "selector.h"

#include "llvm/Analysis/InlineModelFeatureMaps.h"
#include "llvm/Analysis/ReleaseModeModelRunner.h"
#include "llvm/Analysis/TensorSpec.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/raw_ostream.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
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

// ---- the models: the C++ classes, each instance remembered so that a test can look at the
// model object ReleaseModeModelRunner owns (it is private to the runner) ----------------------

template <class Base> struct Tracked : Base {
    static Tracked *Last;
    Tracked() { Last = this; }
};
template <class Base> Tracked<Base> *Tracked<Base>::Last = nullptr;

using TInliner = Tracked<mlbc::inliner>;
using TEvict = Tracked<mlbc::evict>;
using TSelector = Tracked<mlbc::selector>;

// The generated C called directly, through its descriptor (the NAME_* functions).
struct Direct {
    const mlbc_model_desc &D;
    std::vector<uint64_t> Ctx;
    explicit Direct(const mlbc_model_desc &Desc)
        : D(Desc), Ctx((Desc.ctx_size + 7) / 8 + 1)
    {
        D.init(Ctx.data());
    }
    void *arg(int I) { return D.arg_data(Ctx.data(), I); }
    int64_t run(int Result)
    {
        if (D.run(Ctx.data()) != 0)
            return INT64_MIN;
        return *(const int64_t *)D.result_data(Ctx.data(), Result);
    }
};

size_t recordBytes(const mlbc_model_desc &D)
{
    size_t N = 0;
    for (int I = 0; I < D.num_args; I++)
        N += D.args[I].bytes;
    return N + 8;       // + the int64 reference output
}

size_t argOffset(const mlbc_model_desc &D, int Arg)
{
    size_t N = 0;
    for (int I = 0; I < Arg; I++)
        N += D.args[I].bytes;
    return N;
}

std::vector<std::vector<unsigned char>> readRecords(const char *Path, const mlbc_model_desc &D,
                                                    std::string &Err)
{
    std::vector<std::vector<unsigned char>> Out;
    FILE *F = std::fopen(Path, "rb");
    if (!F) {
        Err = std::string("cannot open ") + Path;
        return Out;
    }
    size_t N = recordBytes(D);
    std::vector<unsigned char> Rec(N);
    size_t Got;
    while ((Got = std::fread(Rec.data(), 1, N, F)) == N)
        Out.push_back(Rec);
    if (Got != 0)
        Err = "trailing partial record";
    std::fclose(F);
    return Out;
}

// Random graph inputs for a policy, by feature name (plausible ranges, both decisions occur).
std::vector<unsigned char> randomRecord(const mlbc_model_desc &D, std::mt19937_64 &G)
{
    std::vector<unsigned char> Rec(recordBytes(D), 0);
    auto U = [&](int64_t Lo, int64_t Hi) {
        return Lo + (int64_t)(G() % (uint64_t)(Hi - Lo + 1));
    };
    for (int I = 0; I < D.num_args; I++) {
        const mlbc_tensor_desc &A = D.args[I];
        unsigned char *P = Rec.data() + argOffset(D, I);
        std::string Name = A.name;
        for (int64_t K = 0; K < A.count; K++) {
            if (A.dtype == 7) {     // int64
                int64_t V;
                if (Name == "mask") {
                    V = K == 32 ? U(0, 1) : U(0, 3) != 0;
                } else if (Name == "is_free" || Name == "is_hint" ||
                           Name.compare(0, 3, "is_") == 0) {
                    V = U(0, 1);
                } else if (Name == "max_stage" || Name == "min_stage") {
                    V = U(0, 6);
                } else {
                    int R = (int)U(0, 9);
                    V = R < 3 ? U(0, 3) : R < 7 ? U(0, 120) : R < 9 ? U(-500, 500)
                                                               : U(0, 100000);
                }
                std::memcpy(P + 8 * K, &V, 8);
            } else if (A.dtype == 1) {  // float
                float V = (float)((double)(G() >> 11) / 9007199254740992.0);
                if (U(0, 7) == 0)
                    V = 0.0f;
                std::memcpy(P + 4 * K, &V, 4);
            }
        }
        if (Name == "mask") {       // at least one column may be chosen
            int64_t One = 1;
            std::memcpy(P + 8 * U(0, A.count - 1), &One, 8);
        }
    }
    return Rec;
}

// Feeds one record to LLVM's runner (by the runner's feature names) and to the generated C
// directly (by graph position); returns both decisions.
template <class TGen>
bool compareOne(ReleaseModeModelRunner<TGen> &R, const std::vector<TensorSpec> &Specs,
                Direct &C, const std::vector<unsigned char> &Rec, int64_t &ViaLLVM,
                int64_t &ViaC, std::string &Err)
{
    const mlbc_model_desc &D = C.D;
    for (size_t I = 0; I < Specs.size(); I++) {
        int A = D.lookup_arg_index(Specs[I].name().c_str());
        if (A < 0)
            continue;       // a feature this model does not read (LLVM gives it scratch)
        if ((size_t)D.args[A].bytes != Specs[I].getTotalTensorBufferSize()) {
            Err = "feature '" + Specs[I].name() + "': LLVM spec and model sizes differ";
            return false;
        }
        std::memcpy(R.getTensorUntyped(I), Rec.data() + argOffset(D, A), D.args[A].bytes);
    }
    for (int A = 0; A < D.num_args; A++)
        std::memcpy(C.arg(A), Rec.data() + argOffset(D, A), D.args[A].bytes);
    ViaLLVM = R.template evaluate<int64_t>();
    ViaC = C.run(0);
    return true;
}

template <class TGen>
void checkDecisions(const char *Check, ReleaseModeModelRunner<TGen> &R,
                    const std::vector<TensorSpec> &Specs, const mlbc_model_desc &D,
                    const std::vector<std::vector<unsigned char>> &Recs, bool HaveRef)
{
    Direct C(D);
    size_t Bad = 0, BadRef = 0, First = (size_t)-1;
    int64_t FirstL = 0, FirstC = 0;
    std::vector<size_t> Histogram(64, 0);
    std::string Err;
    for (size_t K = 0; K < Recs.size(); K++) {
        int64_t L, Cv;
        if (!compareOne(R, Specs, C, Recs[K], L, Cv, Err)) {
            report(false, Check, "%s", Err.c_str());
            return;
        }
        int64_t Ref;
        std::memcpy(&Ref, Recs[K].data() + Recs[K].size() - 8, 8);
        if (L != Cv) {
            if (First == (size_t)-1)
                First = K, FirstL = L, FirstC = Cv;
            Bad++;
        }
        if (HaveRef && L != Ref)
            BadRef++;
        Histogram[(uint64_t)L < 63 ? (size_t)L : 63]++;
    }
    std::string Hist;
    for (size_t V = 0; V < Histogram.size(); V++)
        if (Histogram[V])
            Hist += (Hist.empty() ? "" : ",") + std::to_string(V) + ":" +
                    std::to_string(Histogram[V]);
    if (Recs.empty())
        report(false, Check, "no samples");
    else if (Bad)
        report(false, Check, "%zu of %zu decisions differ, first sample %zu: LLVM runner %" PRId64
               ", generated C %" PRId64, Bad, Recs.size(), First, FirstL, FirstC);
    else if (BadRef)
        report(false, Check, "%zu of %zu decisions differ from the reference output", BadRef,
               Recs.size());
    else
        report(true, Check, "%zu samples%s, decisions {%s}", Recs.size(),
               HaveRef ? " == generated C == reference" : " == generated C", Hist.c_str());
}

// Every feature the model knows is bound to the model's own buffer (no copy), the others get
// LLVM's zeroed scratch buffer.
template <class TT>
void checkBinding(const char *Check, MLModelRunner &R, const std::vector<TensorSpec> &Specs,
                  const mlbc_model_desc &D)
{
    TT *M = TT::Last;
    int Bound = 0, Scratch = 0;
    for (size_t I = 0; I < Specs.size(); I++) {
        int A = D.lookup_arg_index(Specs[I].name().c_str());
        void *Buf = R.getTensorUntyped(I);
        if (A >= 0) {
            if (Buf != M->arg_data(A)) {
                report(false, Check, "feature '%s' is not the model's buffer",
                       Specs[I].name().c_str());
                return;
            }
            Bound++;
        } else {
            bool Zero = true;
            for (size_t B = 0; B < Specs[I].getTotalTensorBufferSize(); B++)
                Zero &= ((unsigned char *)Buf)[B] == 0;
            if (!Zero) {
                report(false, Check, "scratch buffer of '%s' not zeroed",
                       Specs[I].name().c_str());
                return;
            }
            Scratch++;
        }
    }
    report(true, Check, "%d features bound to the model's buffers, %d to scratch", Bound,
           Scratch);
}

std::vector<TensorSpec> evictSpecs()
{
    // LLVM 19's MLRegAllocEvictAdvisor inputs (llvm-mlgo.md §8), in LLVM's order.
    const char *Int64[] = {"mask", "is_free", "is_hint", "is_local", "max_stage", "min_stage"};
    const char *Names[] = {"mask", "is_free", "nr_urgent", "nr_broken_hints", "is_hint",
                           "is_local", "nr_rematerializable", "nr_defs_and_uses",
                           "weighed_reads_by_max", "weighed_writes_by_max",
                           "weighed_read_writes_by_max", "weighed_indvars_by_max",
                           "hint_weights_by_max", "start_bb_freq_by_max", "end_bb_freq_by_max",
                           "hottest_bb_freq_by_max", "liverange_size", "use_def_density",
                           "max_stage", "min_stage"};
    std::vector<TensorSpec> S;
    for (const char *N : Names) {
        bool IsInt = false;
        for (const char *I : Int64)
            IsInt |= !std::strcmp(I, N);
        S.push_back(IsInt ? TensorSpec::createSpec<int64_t>(N, {1, 33})
                          : TensorSpec::createSpec<float>(N, {1, 33}));
    }
    S.push_back(TensorSpec::createSpec<float>("progress", {1}));
    return S;
}

bool sawDiagnostic(const char *Needle)
{
    for (const std::string &D : Diagnostics)
        if (D.find(Needle) != std::string::npos)
            return true;
    return false;
}

std::string joinedDiagnostics()
{
    std::string S;
    for (const std::string &D : Diagnostics)
        S += (S.empty() ? "" : " | ") + D;
    return S.empty() ? "(none)" : S;
}

} // namespace

int main(int argc, char **argv)
{
    const char *RefInliner = nullptr, *RefEvict = nullptr;
    size_t NRandom = 2000;
    uint64_t Seed = 20240519;
    for (int I = 1; I < argc; I++) {
        if (!std::strcmp(argv[I], "--ref-inliner") && I + 1 < argc)
            RefInliner = argv[++I];
        else if (!std::strcmp(argv[I], "--ref-evict") && I + 1 < argc)
            RefEvict = argv[++I];
        else if (!std::strcmp(argv[I], "--random") && I + 1 < argc)
            NRandom = std::strtoull(argv[++I], nullptr, 10);
        else if (!std::strcmp(argv[I], "--seed") && I + 1 < argc)
            Seed = std::strtoull(argv[++I], nullptr, 10);
        else {
            std::fprintf(stderr, "usage: %s [--ref-inliner F] [--ref-evict F] [--random N] "
                                 "[--seed S]\n", argv[0]);
            return 2;
        }
    }
    LLVMContext Ctx;
    Ctx.setDiagnosticHandlerCallBack(collectDiagnostic, nullptr);
    std::mt19937_64 G(Seed);

    // ---- inliner: llvm::FeatureMap, "inlining_decision" ------------------------------------
    {
        bool Same = FeatureMap.size() == (size_t)inliner_desc.num_args;
        for (size_t I = 0; Same && I < FeatureMap.size(); I++)
            Same = FeatureMap[I].name() == inliner_desc.args[I].name &&
                   FeatureMap[I].type() == TensorType::Int64 &&
                   FeatureMap[I].getTotalTensorBufferSize() ==
                       (size_t)inliner_desc.args[I].bytes;
        report(Same, "inliner: llvm::FeatureMap == the model's inputs",
               "%zu LLVM features, %d model inputs, decision '%s'", FeatureMap.size(),
               inliner_desc.num_args, DecisionName);
    }
    Diagnostics.clear();
    auto Inl = std::make_unique<ReleaseModeModelRunner<TInliner>>(Ctx, FeatureMap, DecisionName);
    report(Diagnostics.empty(), "inliner: ReleaseModeModelRunner<mlbc::inliner> constructs "
           "without diagnostics", "%s", Diagnostics.empty() ? "" : joinedDiagnostics().c_str());
    checkBinding<TInliner>("inliner: features bound to the model's own buffers", *Inl,
                           FeatureMap, inliner_desc);
    report(TInliner::Last->LookupResultIndex(std::string("fetch_") + DecisionName) == 0 &&
               TInliner::Last->LookupArgIndex("feed_model_selector") < 0 &&
               TInliner::Last->LookupArgIndex("feed_callee_users") ==
                   TInliner::Last->LookupArgIndex("callee_users") &&
               TInliner::Last->LookupArgIndex("feed_no_such_feature") < 0,
           "inliner: LookupArgIndex/LookupResultIndex with LLVM's prefixes", "");
    if (RefInliner) {
        std::string Err;
        auto Recs = readRecords(RefInliner, inliner_desc, Err);
        if (!Err.empty())
            report(false, "inliner: reference samples", "%s", Err.c_str());
        else
            checkDecisions("inliner: reference samples (models/ref/inliner.npz)", *Inl,
                           FeatureMap, inliner_desc, Recs, true);
    }
    {
        std::vector<std::vector<unsigned char>> Recs;
        for (size_t K = 0; K < NRandom; K++)
            Recs.push_back(randomRecord(inliner_desc, G));
        checkDecisions("inliner: random inputs", *Inl, FeatureMap, inliner_desc, Recs, false);

        // A newer compiler with a feature the model does not know: it gets scratch, the
        // decisions do not change; a model bound with another feed prefix sees nothing.
        std::vector<TensorSpec> More = FeatureMap;
        More.push_back(TensorSpec::createSpec<int64_t>("feature_from_the_future", {1}));
        More.push_back(TensorSpec::createSpec<float>("another_one", {4, 2}));
        ReleaseModeModelRunner<TInliner> Newer(Ctx, More, DecisionName);
        checkBinding<TInliner>("inliner: unknown features get LLVM's scratch buffers", Newer,
                               More, inliner_desc);
        Recs.resize(std::min<size_t>(Recs.size(), 300));
        checkDecisions("inliner: decisions unchanged with unknown features", Newer, More,
                       inliner_desc, Recs, false);
    }
    {
        ReleaseModeModelRunner<TInliner> Other(
            Ctx, FeatureMap, DecisionName, EmbeddedModelRunnerOptions().setFeedPrefix("xyz_"));
        bool AllScratch = true;
        for (size_t I = 0; I < FeatureMap.size(); I++)
            AllScratch &= Other.getTensorUntyped(I) != TInliner::Last->arg_data((int)I);
        Direct Zero(inliner_desc);
        for (size_t I = 0; I < FeatureMap.size(); I++)
            *Other.getTensor<int64_t>(I) = 1000 + (int64_t)I;   // never reaches the model
        int64_t Got = Other.evaluate<int64_t>(), Want = Zero.run(0);
        report(AllScratch && Got == Want,
               "inliner: an unknown feed prefix unbinds every input (as TF-AOT models)",
               "decision %" PRId64 ", the model on its initial inputs %" PRId64, Got, Want);
    }
    {
        // Two runners at once: no state shared between model instances.
        ReleaseModeModelRunner<TInliner> A(Ctx, FeatureMap, DecisionName);
        ReleaseModeModelRunner<TInliner> B(Ctx, FeatureMap, DecisionName);
        Direct C(inliner_desc);
        size_t Bad = 0, N = 200;
        for (size_t K = 0; K < N; K++) {
            auto RA = randomRecord(inliner_desc, G), RB = randomRecord(inliner_desc, G);
            int64_t LA, LB, CA, CB;
            std::string Err;
            compareOne(A, FeatureMap, C, RA, LA, CA, Err);
            for (size_t I = 0; I < FeatureMap.size(); I++)    // B's inputs, A's left alone
                std::memcpy(B.getTensorUntyped(I), RB.data() + 8 * I, 8);
            LB = B.evaluate<int64_t>();
            int64_t LA2 = A.evaluate<int64_t>();    // A again: its inputs are still there
            for (int I = 0; I < inliner_desc.num_args; I++)
                std::memcpy(C.arg(I), RB.data() + 8 * I, 8);
            CB = C.run(0);
            Bad += LA != CA || LA2 != CA || LB != CB;
        }
        report(!Bad, "inliner: two runners interleaved, inputs kept across evaluations",
               "%zu of %zu rounds wrong", Bad, N);
    }

    // ---- model selector (llvm-mlgo.md §11.3) ---------------------------------------------
    {
        Diagnostics.clear();
        ReleaseModeModelRunner<TInliner> R(Ctx, FeatureMap, DecisionName,
                                           EmbeddedModelRunnerOptions().setModelSelector("size"));
        report(sawDiagnostic("A model selector was specified but the underlying model does not "
                             "expose a model_selector input"),
               "selector: given to a model without model_selector -> LLVM's error", "%s",
               joinedDiagnostics().c_str());
    }
    {
        Diagnostics.clear();
        ReleaseModeModelRunner<TSelector> R(Ctx, FeatureMap, DecisionName);
        report(sawDiagnostic("A model selector was not specified but the underlying model "
                             "requires selecting one"),
               "selector: model with model_selector, none given -> LLVM's error", "%s",
               joinedDiagnostics().c_str());
    }
    {
        Diagnostics.clear();
        const char *Names[] = {"size", "speed", ""};
        bool Ok = true;
        std::string Detail;
        for (const char *Name : Names) {
            if (!*Name)
                break;
            ReleaseModeModelRunner<TSelector> R(
                Ctx, FeatureMap, DecisionName,
                EmbeddedModelRunnerOptions().setModelSelector(Name));
            *R.getTensor<int64_t>(FeatureIndex::callee_basic_block_count) = 7;
            int64_t Got = R.evaluate<int64_t>();
            MD5::MD5Result H = MD5::hash(arrayRefFromStringRef(Name));
            TSelector *M = TSelector::Last;
            int Echo = M->LookupResultIndex("fetch_selector_echo");
            int Bb = M->LookupResultIndex("fetch_bb_echo");
            const uint64_t *E = (const uint64_t *)M->result_data(Echo);
            const int64_t *B = (const int64_t *)M->result_data(Bb);
            bool This = Got == (int64_t)H.high() && E[0] == H.high() && E[1] == H.low() &&
                        *B == 7;
            char Buf[160];
            std::snprintf(Buf, sizeof Buf, "%s%s -> {%016" PRIx64 ", %016" PRIx64 "}",
                          Detail.empty() ? "" : "; ", Name, E[0], E[1]);
            Detail += Buf;
            Ok &= This;
        }
        Ok &= Diagnostics.empty();
        report(Ok, "selector: the model receives {MD5.high, MD5.low} of the selector", "%s%s",
               Detail.c_str(), Diagnostics.empty() ? "" : " (unexpected diagnostics)");
    }

    // ---- regalloc eviction: 21 specs, "index_to_evict" ------------------------------------
    {
        std::vector<TensorSpec> Specs = evictSpecs();
        bool Same = Specs.size() == (size_t)evict_desc.num_args;
        for (size_t I = 0; Same && I < Specs.size(); I++)
            Same = Specs[I].name() == evict_desc.args[I].name &&
                   Specs[I].getTotalTensorBufferSize() == (size_t)evict_desc.args[I].bytes;
        report(Same, "evict: LLVM's 21 eviction specs == the model's inputs",
               "%zu specs, %d model inputs", Specs.size(), evict_desc.num_args);
        Diagnostics.clear();
        ReleaseModeModelRunner<TEvict> R(Ctx, Specs, "index_to_evict");
        report(Diagnostics.empty(), "evict: ReleaseModeModelRunner<mlbc::evict> constructs "
               "without diagnostics", "%s", Diagnostics.empty() ? "" :
               joinedDiagnostics().c_str());
        checkBinding<TEvict>("evict: features bound to the model's own buffers", R, Specs,
                             evict_desc);
        if (RefEvict) {
            std::string Err;
            auto Recs = readRecords(RefEvict, evict_desc, Err);
            if (!Err.empty())
                report(false, "evict: reference samples", "%s", Err.c_str());
            else
                checkDecisions("evict: reference samples (models/ref/regalloc_evict.npz)", R,
                               Specs, evict_desc, Recs, true);
        }
        std::vector<std::vector<unsigned char>> Recs;
        for (size_t K = 0; K < NRandom / 2; K++)
            Recs.push_back(randomRecord(evict_desc, G));
        checkDecisions("evict: random inputs", R, Specs, evict_desc, Recs, false);
        // The decision is always a column LLVM may choose (mask 1).
        size_t Masked = 0;
        for (const auto &Rec : Recs) {
            int64_t L, C;
            Direct D(evict_desc);
            std::string Err;
            compareOne(R, Specs, D, Rec, L, C, Err);
            int64_t M = 0;
            if (L >= 0 && L < 33)
                std::memcpy(&M, Rec.data() + 8 * L, 8);
            Masked += M != 1;
        }
        report(!Masked, "evict: every decision is a column with mask 1",
               "%zu of %zu decisions are masked or out of range", Masked, Recs.size());
    }

    std::printf("%d passed, %d failed\n", Passed, Failed);
    return Failed ? 1 : 0;
}

// override_check.cpp - the headers and objects of plugins/clang/llvm_override.sh consumed the
// way LLVM 19's own sources consume an AOT model when built with
// LLVM_OVERRIDE_MODEL_{HEADER,OBJECT}_{INLINERSIZEMODEL,REGALLOCEVICTMODEL}:
// MLInlineAdvisor.cpp and MLRegAllocEvictAdvisor.cpp include "InlinerSizeModel.h" /
// "RegAllocEvictModel.h" under LLVM_HAVE_TF_AOT_<NAME> and instantiate
// ReleaseModeModelRunner<llvm::InlinerSizeModel> / <llvm::RegAllocEvictModel>. Compiled like
// LLVM's own sources by default (-fno-rtti -fno-exceptions), both models in one program
// (as in one libLLVM), with -DLLVM_HAVE_TF_AOT_INLINERSIZEMODEL
// -DLLVM_HAVE_TF_AOT_REGALLOCEVICTMODEL -I OUTDIR, linked with OUTDIR/*.o.
// Prints "ok|FAIL  check -- detail" lines, then "N passed, M failed".

#include "llvm/Analysis/InlineModelFeatureMaps.h"
#include "llvm/Analysis/ReleaseModeModelRunner.h"
#include "llvm/Analysis/TensorSpec.h"
#include "llvm/IR/LLVMContext.h"

#if defined(LLVM_HAVE_TF_AOT_INLINERSIZEMODEL)
#include "InlinerSizeModel.h" // as MLInlineAdvisor.cpp
using InlinerModelType = llvm::InlinerSizeModel;
#else
using InlinerModelType = llvm::NoopSavedModelImpl;
#endif
#if defined(LLVM_HAVE_TF_AOT_REGALLOCEVICTMODEL)
#include "RegAllocEvictModel.h" // as MLRegAllocEvictAdvisor.cpp
using EvictModelType = llvm::RegAllocEvictModel;
#else
using EvictModelType = llvm::NoopSavedModelImpl;
#endif

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace llvm;

static int Passed = 0, Failed = 0;

static void report(bool Ok, const char *Check, const char *Detail)
{
    std::printf("%s  %s%s%s\n", Ok ? "ok  " : "FAIL", Check, *Detail ? " -- " : "", Detail);
    (Ok ? Passed : Failed)++;
}

int main()
{
    LLVMContext Ctx;
    std::mt19937_64 G(7);
    char Buf[200];

    report(isEmbeddedModelEvaluatorValid<InlinerModelType>(),
           "llvm::InlinerSizeModel is a real model (not NoopSavedModelImpl)", "");
    report(isEmbeddedModelEvaluatorValid<EvictModelType>(),
           "llvm::RegAllocEvictModel is a real model (not NoopSavedModelImpl)", "");

    {
        // As getReleaseModeAdvisor: FeatureMap, DecisionName, a selector option ("" here).
        ReleaseModeModelRunner<InlinerModelType> R(
            Ctx, FeatureMap, DecisionName, EmbeddedModelRunnerOptions().setModelSelector(""));
        static InlinerSizeModel_ctx Direct;
        InlinerSizeModel_init(&Direct);
        int Out = InlinerSizeModel_lookup_result_index("inlining_decision");
        int Bad = 0, Ones = 0, N = 500;
        for (int K = 0; K < N; K++) {
            for (size_t I = 0; I < FeatureMap.size(); I++) {
                int64_t V = (int64_t)(G() % 7 == 0 ? G() % 100000 : G() % 60);
                *R.getTensor<int64_t>(I) = V;
                int A = InlinerSizeModel_lookup_arg_index(FeatureMap[I].name().c_str());
                if (A >= 0)
                    *(int64_t *)InlinerSizeModel_arg_data(&Direct, A) = V;
            }
            int64_t L = R.evaluate<int64_t>();
            InlinerSizeModel_run(&Direct);
            int64_t C = *(int64_t *)InlinerSizeModel_result_data(&Direct, Out);
            Bad += L != C;
            Ones += L != 0;
        }
        std::snprintf(Buf, sizeof Buf, "%d of %d differ; %d inline", Bad, N, Ones);
        report(Bad == 0 && Ones > 0 && Ones < N,
               "ReleaseModeModelRunner<llvm::InlinerSizeModel> == the generated C", Buf);
    }
    {
        // As MLRegAllocEvictAdvisor: its 21 specs (llvm-mlgo.md §8) and "index_to_evict".
        const char *Ints[] = {"mask", "is_free", "is_hint", "is_local", "max_stage",
                              "min_stage"};
        std::vector<TensorSpec> Specs;
        for (int A = 0; A < RegAllocEvictModel_NUM_ARGS; A++) {
            const mlbc_tensor_desc &D = RegAllocEvictModel_desc.args[A];
            bool IsInt = false;
            for (const char *I : Ints)
                IsInt |= !std::strcmp(I, D.name);
            std::vector<int64_t> Shape = !std::strcmp(D.name, "progress")
                                             ? std::vector<int64_t>{1}
                                             : std::vector<int64_t>{1, 33};
            Specs.push_back(IsInt ? TensorSpec::createSpec<int64_t>(D.name, Shape)
                                  : TensorSpec::createSpec<float>(D.name, Shape));
        }
        ReleaseModeModelRunner<EvictModelType> R(Ctx, Specs, "index_to_evict");
        static RegAllocEvictModel_ctx Direct;
        RegAllocEvictModel_init(&Direct);
        int Bad = 0, N = 300;
        for (int K = 0; K < N; K++) {
            for (size_t I = 0; I < Specs.size(); I++) {
                size_t Count = Specs[I].getElementCount();
                void *T = R.getTensorUntyped(I);
                void *C = RegAllocEvictModel_arg_data(
                    &Direct, RegAllocEvictModel_lookup_arg_index(Specs[I].name().c_str()));
                for (size_t E = 0; E < Count; E++) {
                    if (Specs[I].type() == TensorType::Int64) {
                        int64_t V = Specs[I].name() == "mask" ? (E == 32 || G() % 3 != 0)
                                                              : (int64_t)(G() % 7);
                        ((int64_t *)T)[E] = ((int64_t *)C)[E] = V;
                    } else {
                        float V = (float)(G() % 10000) / 10000.0f;
                        ((float *)T)[E] = ((float *)C)[E] = V;
                    }
                }
            }
            int64_t L = R.evaluate<int64_t>();
            RegAllocEvictModel_run(&Direct);
            Bad += L != *(int64_t *)RegAllocEvictModel_result_data(&Direct, 0);
        }
        std::snprintf(Buf, sizeof Buf, "%d of %d differ", Bad, N);
        report(Bad == 0, "ReleaseModeModelRunner<llvm::RegAllocEvictModel> == the generated C",
               Buf);
    }
    std::printf("%d passed, %d failed\n", Passed, Failed);
    return Failed ? 1 : 0;
}

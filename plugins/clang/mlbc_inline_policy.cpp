// mlbc_inline_policy.cpp - the policy-specific part of the clang-19 inlining plugin
// (mlbc_inline_plugin.cpp is the rest). Compiled by plugins/clang/build.sh with
//   -DMLBC_POLICY_NAME=NAME    the -n NAME given to `mlbc --cxx-wrapper`
// and the directory holding NAME.h on the include path. It instantiates LLVM's
// ReleaseModeModelRunner over mlbc's C++ class mlbc::NAME exactly as LLVM's
// getReleaseModeAdvisor does over a TF-AOT class (FeatureMap, "inlining_decision", the
// model selector option), and checks once that the model is an inlining policy.

#define MLBC_STR2(x) #x
#define MLBC_STR(x) MLBC_STR2(x)
#define MLBC_CAT2(a, b) a##b
#define MLBC_CAT(a, b) MLBC_CAT2(a, b)

#include MLBC_STR(MLBC_POLICY_NAME.h)

#include "llvm/Analysis/InlineModelFeatureMaps.h"
#include "llvm/Analysis/ReleaseModeModelRunner.h"

#include <memory>
#include <string>

using namespace llvm;

namespace mlbc_plugin {

const char *policyName() { return "mlbc::" MLBC_STR(MLBC_POLICY_NAME); }

// The decision must be an int64 output named inlining_decision (LLVM only asserts it, and
// reads element 0 as int64_t); the model should read at least one of LLVM's features.
bool policyUsable(std::string &Why)
{
    const mlbc_model_desc &D = MLBC_CAT(MLBC_POLICY_NAME, _desc);
    mlbc::MLBC_POLICY_NAME Probe;
    int R = Probe.LookupResultIndex(std::string("fetch_") + DecisionName);
    if (R < 0) {
        Why = std::string("the model '") + policyName() + "' has no output named '" +
              DecisionName + "' (an inlining policy has one)";
        return false;
    }
    if (D.results[R].dtype != 7 || D.results[R].count < 1) {
        Why = std::string("the model's output '") + DecisionName + "' is not int64";
        return false;
    }
    int Bound = 0;
    for (const TensorSpec &S : FeatureMap)
        Bound += Probe.LookupArgIndex("feed_" + S.name()) >= 0;
    if (Bound == 0) {
        Why = std::string("the model '") + policyName() +
              "' reads none of LLVM's inliner features";
        return false;
    }
    return true;
}

std::unique_ptr<MLModelRunner> makeReleaseRunner(LLVMContext &Ctx, StringRef Selector)
{
    return std::make_unique<ReleaseModeModelRunner<mlbc::MLBC_POLICY_NAME>>(
        Ctx, FeatureMap, DecisionName, EmbeddedModelRunnerOptions().setModelSelector(Selector));
}

} // namespace mlbc_plugin

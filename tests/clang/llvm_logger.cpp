// llvm_logger.cpp - writes the scenarios of log_scenarios.h with LLVM's own llvm::Logger
// (exported by Debian's libLLVM-19), plus each scenario's expected dump.
//
//   clang++-19 $(llvm-config-19 --cxxflags) llvm_logger.cpp -o llvm_logger \
//       $(llvm-config-19 --ldflags) -lLLVM-19
//   llvm_logger OUTDIR      -> OUTDIR/NAME.log and OUTDIR/NAME.expect for every scenario
#include "llvm/Analysis/TensorSpec.h"
#include "llvm/Analysis/Utils/TrainingLogger.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "log_scenarios.h"

using namespace llvm;

static TensorSpec toSpec(const scen_spec &S) {
  std::vector<int64_t> Shape(S.shape, S.shape + S.rank);
  switch (S.type) {
  case T_FLOAT: return TensorSpec::createSpec<float>(S.name, Shape);
  case T_DOUBLE: return TensorSpec::createSpec<double>(S.name, Shape);
  case T_INT8: return TensorSpec::createSpec<int8_t>(S.name, Shape);
  case T_UINT8: return TensorSpec::createSpec<uint8_t>(S.name, Shape);
  case T_INT16: return TensorSpec::createSpec<int16_t>(S.name, Shape);
  case T_UINT16: return TensorSpec::createSpec<uint16_t>(S.name, Shape);
  case T_INT32: return TensorSpec::createSpec<int32_t>(S.name, Shape);
  case T_UINT32: return TensorSpec::createSpec<uint32_t>(S.name, Shape);
  case T_INT64: return TensorSpec::createSpec<int64_t>(S.name, Shape);
  default: return TensorSpec::createSpec<uint64_t>(S.name, Shape);
  }
}

struct LLVMWriter {
  std::unique_ptr<Logger> L;
  int NFeat = 0;
  static void context(void *Self, const char *Name) {
    static_cast<LLVMWriter *>(Self)->L->switchContext(Name);
  }
  static void observation(void *Self, const void *const *Tensors) {
    auto *W = static_cast<LLVMWriter *>(Self);
    W->L->startObservation();
    for (int I = 0; I < W->NFeat; ++I)
      W->L->logTensorValue(I, static_cast<const char *>(Tensors[I]));
    W->L->endObservation();
  }
  static void outcome(void *Self, const void *Reward) {
    // logReward<T> copies a T; the raw bytes go through the same path.
    auto *W = static_cast<LLVMWriter *>(Self);
    struct Raw { unsigned char B[64]; } R;
    std::memcpy(R.B, Reward, sizeof R.B);
    W->L->logReward(R);
  }
};

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: llvm_logger OUTDIR\n");
    return 2;
  }
  std::string Dir = argv[1];
  for (int S = 0; S < NUM_SCENARIOS; ++S) {
    const scenario &Sc = scenarios[S];
    std::vector<TensorSpec> Specs;
    for (int I = 0; I < Sc.nfeat; ++I)
      Specs.push_back(toSpec(Sc.feat[I]));
    std::optional<TensorSpec> Advice;
    if (Sc.has_advice)
      Advice = toSpec(Sc.advice);
    std::error_code EC;
    std::string Path = Dir + "/" + Sc.name + ".log";
    auto OS = std::make_unique<raw_fd_ostream>(Path, EC);
    if (EC) {
      std::fprintf(stderr, "llvm_logger: cannot write %s: %s\n", Path.c_str(),
                   EC.message().c_str());
      return 1;
    }
    LLVMWriter W;
    W.NFeat = Sc.nfeat;
    W.L = std::make_unique<Logger>(std::move(OS), Specs, toSpec(Sc.reward),
                                   Sc.has_reward != 0, Advice);
    scen_writer SW = {&W, LLVMWriter::context, LLVMWriter::observation,
                      LLVMWriter::outcome};
    std::string ExpectPath = Dir + "/" + Sc.name + ".expect";
    FILE *Expect = std::fopen(ExpectPath.c_str(), "w");
    if (!Expect) {
      std::perror(ExpectPath.c_str());
      return 1;
    }
    scen_play(&Sc, &SW, Expect);
    std::fclose(Expect);
    W.L->flush();
    W.L.reset();
  }
  return 0;
}

// llvm_logger.cpp - writes the log described by a test_runtime script (stdin; see
// test_runtime.c, write mode) with LLVM's own llvm::Logger from libLLVM-19, so that
// test_runtime.py can compare mlbc's logger with it byte for byte.
//   llvm_logger OUT < script
#include "llvm/Analysis/TensorSpec.h"
#include "llvm/Analysis/Utils/TrainingLogger.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace llvm;

static std::string unhex(const std::string &h)
{
    std::string s;
    if (h == "-")
        return s;
    for (size_t i = 0; i + 1 < h.size(); i += 2)
        s += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return s;
}

static std::optional<TensorSpec> makeSpec(const std::string &name, const std::string &type,
                                          const std::vector<int64_t> &shape)
{
#define MLBC_SPEC(T, _)                                                                  \
    if (type == #T)                                                                      \
        return TensorSpec::createSpec<T>(name, shape);
    SUPPORTED_TENSOR_TYPES(MLBC_SPEC)
#undef MLBC_SPEC
    return std::nullopt;
}

int main(int argc, char **argv)
{
    std::vector<TensorSpec> features;
    std::optional<TensorSpec> score, advice;
    std::unique_ptr<Logger> log;
    std::vector<unsigned char> data(1 << 16);
    std::string line;
    if (argc != 2)
        return 2;
    auto open = [&]() {
        std::error_code ec;
        auto os = std::make_unique<raw_fd_ostream>(argv[1], ec);
        if (ec)
            return false;
        TensorSpec none = TensorSpec::createSpec<float>("reward", {1});
        log = std::make_unique<Logger>(std::move(os), features, score ? *score : none,
                                       score.has_value(), advice);
        return true;
    };
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd, arg;
        if (!(in >> cmd >> arg))
            continue;
        if (cmd == "feature" || cmd == "score" || cmd == "advice") {
            std::string type;
            std::vector<int64_t> shape;
            int64_t d;
            in >> type;
            while (in >> d)
                shape.push_back(d);
            auto spec = makeSpec(unhex(arg), type, shape);
            if (!spec)
                return 1;
            if (cmd == "feature")
                features.push_back(*spec);
            else
                (cmd == "score" ? score : advice) = *spec;
            continue;
        }
        if (!log && !open())
            return 1;
        int seed = std::stoi(cmd == "context" ? "0" : arg);
        if (cmd == "context") {
            log->switchContext(unhex(arg));
        } else if (cmd == "observation") {
            size_t at = 0;
            log->startObservation();
            for (size_t i = 0; i < features.size(); i++) {
                for (size_t j = 0; j < features[i].getTotalTensorBufferSize(); j++)
                    data[at + j] = static_cast<unsigned char>(seed + at + j);
                log->logTensorValue(i, reinterpret_cast<const char *>(&data[at]));
                at += features[i].getTotalTensorBufferSize();
            }
            log->endObservation();
        } else if (cmd == "outcome") {
            uint64_t v;
            unsigned char b[8];
            for (int j = 0; j < 8; j++)
                b[j] = static_cast<unsigned char>(seed + j);
            std::memcpy(&v, b, 8);      // logReward writes the score's size from &v
            log->logReward(v);
        }
    }
    if (!log && !open())
        return 1;
    log->flush();
    return 0;
}

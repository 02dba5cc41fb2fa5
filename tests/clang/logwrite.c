/* logwrite.c - writes the scenarios of log_scenarios.h with mlbc's logger (mlbc_logger_*),
 * as llvm_logger.cpp does with LLVM's: the two logs of a scenario should be byte-identical.
 *   logwrite OUTDIR      -> OUTDIR/NAME.log for every scenario */
#include <stdio.h>
#include <stdlib.h>

#include "mlbc_runtime.h"
#include "log_scenarios.h"

static const int mlbc_type_of[] = { MLBC_FLOAT, MLBC_DOUBLE, MLBC_INT8, MLBC_UINT8, MLBC_INT16,
                                    MLBC_UINT16, MLBC_INT32, MLBC_UINT32, MLBC_INT64,
                                    MLBC_UINT64 };

static mlbc_tensor_spec to_spec(const scen_spec *s)
{
    return mlbc_spec(s->name, mlbc_type_of[s->type], s->rank, s->shape);
}

static int failures;

static void w_context(void *self, const char *name)
{
    if (mlbc_logger_context(self, name) != 0) failures++;
}

static void w_observation(void *self, const void *const *tensors)
{
    if (mlbc_logger_observation(self, tensors) != 0) failures++;
}

static void w_outcome(void *self, const void *reward)
{
    if (mlbc_logger_outcome(self, reward) != 0) failures++;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: logwrite OUTDIR\n");
        return 2;
    }
    for (int s = 0; s < NUM_SCENARIOS; s++) {
        const scenario *sc = &scenarios[s];
        mlbc_tensor_spec feat[64], reward, advice;
        for (int i = 0; i < sc->nfeat; i++) feat[i] = to_spec(&sc->feat[i]);
        reward = to_spec(&sc->reward);
        advice = to_spec(&sc->advice);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.log", argv[1], sc->name);
        FILE *f = fopen(path, "wb");
        if (!f) {
            perror(path);
            return 1;
        }
        mlbc_logger *lg = mlbc_logger_open(f, feat, sc->nfeat, sc->has_reward ? &reward : NULL,
                                           sc->has_advice ? &advice : NULL);
        if (!lg) {
            fprintf(stderr, "logwrite: mlbc_logger_open failed for %s\n", sc->name);
            return 1;
        }
        scen_writer w = { lg, w_context, w_observation, w_outcome };
        scen_play(sc, &w, NULL);
        if (mlbc_logger_close(lg) != 0) failures++;
        if (fclose(f) != 0) failures++;
    }
    if (failures) fprintf(stderr, "logwrite: %d logger call(s) failed\n", failures);
    return failures ? 1 : 0;
}

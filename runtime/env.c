/* env.c - the environment/agent loop: multi-step, multi-agent inference in process. */
#include "internal.h"

int mlbc_env_run(const mlbc_env_ops *ops, void *env, mlbc_runner *const *agents,
                 int nagents, int max_steps)
{
    int steps = 0;
    if (!ops || !ops->reset || !ops->current_agent || !ops->observe || !ops->step || !ops->done
        || !agents || nagents <= 0 || max_steps < 0)
        return -1;
    if (ops->reset(env))
        return -1;
    while (steps < max_steps && !ops->done(env)) {
        int a = ops->current_agent(env);
        if (a < 0 || a >= nagents || !agents[a] || ops->observe(env, a, agents[a]))
            return -1;
        if (ops->step(env, a, mlbc_runner_evaluate(agents[a])))
            return -1;
        steps++;
    }
    return steps;
}

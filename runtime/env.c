/* env.c - the environment/agent loop: multi-step, multi-agent inference in process, with
 * agents by index or by label (a label -> model map, models by path). */
#include <stdlib.h>
#include <string.h>

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

/* ---- agents by label ------------------------------------------------------------------- */

struct mlbc_agents {
    int n;
    char **labels;
    mlbc_runner **runners;
};

static int label_ok(const mlbc_agents *a, int i, const char *label, char *err, size_t errlen)
{
    if (!label || !*label) {
        set_err(err, errlen, "agent %d has no label", i);
        return 0;
    }
    if (mlbc_agents_index(a, label) >= 0) {
        set_err(err, errlen, "two agents are labelled '%s'", label);
        return 0;
    }
    return 1;
}

/* Agent i's runner from its model path, into a->runners[i] and a->labels[i]. */
static int open_agent(mlbc_agents *a, int i, const mlbc_agent_spec *s,
                      const mlbc_onnx_options *onnx, char *err, size_t errlen)
{
    char why[512] = "";
    if (!label_ok(a, i, s->label, err, errlen))
        return -1;
    if (s->model && is_onnx_path(s->model))
        a->runners[i] = mlbc_runner_onnx(s->model, onnx, s->features, s->nfeatures, s->advice,
                                         s->opt, why, sizeof why);
    else
        a->runners[i] = mlbc_runner_shared_object(s->model, NULL, s->features, s->nfeatures,
                                                  s->advice, s->opt, why, sizeof why);
    if (!a->runners[i] || !(a->labels[i] = strdup(s->label))) {
        set_err(err, errlen, "agent '%s': %s", s->label, a->runners[i] ? "out of memory" : why);
        return -1;
    }
    a->n = i + 1;
    return 0;
}

mlbc_agents *mlbc_agents_open(const mlbc_agent_spec *agents, int n,
                              const mlbc_onnx_options *onnx, char *err, size_t errlen)
{
    mlbc_agents *a;
    if (!agents || n <= 0) {
        set_err(err, errlen, "no agents");
        return NULL;
    }
    if (!(a = calloc(1, sizeof *a)) || !(a->labels = calloc((size_t)n, sizeof *a->labels))
        || !(a->runners = calloc((size_t)n, sizeof *a->runners))) {
        set_err(err, errlen, "out of memory");
        mlbc_agents_free(a);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (open_agent(a, i, &agents[i], onnx, err, errlen)) {
            a->n = i + 1;       /* frees the half-opened agent too */
            mlbc_agents_free(a);
            return NULL;
        }
    return a;
}

int mlbc_agents_count(const mlbc_agents *a)
{
    return a ? a->n : 0;
}

int mlbc_agents_index(const mlbc_agents *a, const char *label)
{
    for (int i = 0; a && label && i < a->n; i++)
        if (a->labels[i] && !strcmp(a->labels[i], label))
            return i;
    return -1;
}

const char *mlbc_agents_label(const mlbc_agents *a, int i)
{
    return a && i >= 0 && i < a->n ? a->labels[i] : NULL;
}

mlbc_runner *mlbc_agents_runner(const mlbc_agents *a, const char *label)
{
    int i = mlbc_agents_index(a, label);
    return i < 0 ? NULL : a->runners[i];
}

void mlbc_agents_free(mlbc_agents *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->n; i++) {
        mlbc_runner_free(a->runners[i]);
        free(a->labels[i]);
    }
    free(a->runners);
    free(a->labels);
    free(a);
}

/* ---- the loop by label: mlbc_env_run through ops that map labels to indices ----------- */

typedef struct labelled {
    const mlbc_env_label_ops *ops;
    void *env;
    const mlbc_agents *agents;
} labelled;

static int lb_reset(void *w)
{
    labelled *l = w;
    return l->ops->reset(l->env);
}

static int lb_current(void *w)
{
    labelled *l = w;
    return mlbc_agents_index(l->agents, l->ops->current_agent(l->env));
}

static int lb_observe(void *w, int agent, mlbc_runner *r)
{
    labelled *l = w;
    return l->ops->observe(l->env, l->agents->labels[agent], r);
}

static int lb_step(void *w, int agent, const void *advice)
{
    labelled *l = w;
    return l->ops->step(l->env, l->agents->labels[agent], advice);
}

static int lb_done(void *w)
{
    labelled *l = w;
    return l->ops->done(l->env);
}

int mlbc_env_run_labels(const mlbc_env_label_ops *ops, void *env, const mlbc_agents *agents,
                        int max_steps)
{
    static const mlbc_env_ops by_index = {lb_reset, lb_current, lb_observe, lb_step, lb_done};
    labelled l = {ops, env, agents};
    if (!ops || !ops->reset || !ops->current_agent || !ops->observe || !ops->step || !ops->done
        || !agents)
        return -1;
    return mlbc_env_run(&by_index, &l, agents->runners, agents->n, max_steps);
}

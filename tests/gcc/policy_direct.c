/* policy_direct.c - evaluates the plugin's built-in policy by calling the code mlbc generated
 * for it directly (no runtime library, no runner): the reference the plugin's release-mode
 * decisions are checked against.
 *
 * stdin:  a line of feature names, then one line of int64 values per observation.
 * stdout: one decision per observation.  Names the model does not read are ignored; a model
 *         input missing from the names is an error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_inline_policy.h"

#define MAXF 256

int main(void)
{
    static char line[65536];
    char *names[MAXF];
    int slot[MAXF], n = 0;
    if (!fgets(line, sizeof line, stdin))
        return 1;
    for (char *t = strtok(line, " \t\n"); t && n < MAXF; t = strtok(NULL, " \t\n")) {
        names[n] = strdup(t);
        slot[n] = mlbc_inline_policy_lookup_arg_index(t);
        n++;
    }
    for (int a = 0; a < mlbc_inline_policy_NUM_ARGS; a++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= slot[i] == a;
        if (!found) {
            fprintf(stderr, "policy_direct: model input %d is not among the names\n", a);
            return 1;
        }
    }
    static mlbc_inline_policy_ctx ctx;
    mlbc_inline_policy_init(&ctx);
    int out = mlbc_inline_policy_lookup_result_index("inlining_decision");
    if (out < 0)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        char *p = line;
        for (int i = 0; i < n; i++) {
            char *end;
            int64_t v = strtoll(p, &end, 10);
            if (end == p) {
                fprintf(stderr, "policy_direct: short line\n");
                return 1;
            }
            p = end;
            if (slot[i] >= 0)
                *(int64_t *)mlbc_inline_policy_arg_data(&ctx, slot[i]) = v;
        }
        if (mlbc_inline_policy_run(&ctx) != 0)
            return 1;
        printf("%" PRId64 "\n", *(int64_t *)mlbc_inline_policy_result_data(&ctx, out));
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    return 0;
}

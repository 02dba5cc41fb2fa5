/* inliner_direct.c - calls mlbc's generated code for the inliner policy directly (built with
 * `mlbc models/inliner.onnx -n policy`; no runtime library): the first line of standard input
 * names the int64 features, every further line holds one observation's values; prints one
 * decision per observation. Features the model does not know are ignored. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int main(void)
{
    static char line[1 << 16];
    static int slot[256];
    static policy_ctx ctx;
    int n = 0;
    policy_init(&ctx);
    if (!fgets(line, sizeof line, stdin)) return 1;
    for (char *t = strtok(line, " \n"); t && n < 256; t = strtok(NULL, " \n"))
        slot[n++] = policy_lookup_arg_index(t);
    int out = policy_lookup_result_index("inlining_decision");
    if (out < 0) return 1;
    while (fgets(line, sizeof line, stdin)) {
        char *p = line;
        for (int i = 0; i < n; i++) {
            long long v = strtoll(p, &p, 10);
            if (slot[i] >= 0) *(int64_t *)policy_arg_data(&ctx, slot[i]) = v;
        }
        if (policy_run(&ctx) != 0) return 1;
        printf("%lld\n", (long long)*(const int64_t *)policy_result_data(&ctx, out));
    }
    return 0;
}

/*
 * binpack: prefers the nodes that the task fills most, so that whole nodes
 * stay free for big tasks — Volcano's binpack plugin
 * (pkg/scheduler/plugins/binpack/binpack.go, BinPackingScore).
 *
 * Arguments (Volcano's names and defaults):
 *   binpack.weight                  1  the plugin's weight; 0 registers nothing
 *   binpack.cpu                     1  cpu weight (negative means 1)
 *   binpack.memory                  1  memory weight (negative means 1)
 *   binpack.resources               "" extra resources, comma-separated:
 *                                      "nvidia.com/gpu, example.com/foo"
 *   binpack.resources.<name>        1  weight of an extra resource (negative means 1)
 *
 * Score.  For every resource the task requests (non-zero) that has a weight
 * (cpu, memory, or one listed in binpack.resources; others are skipped):
 *
 *   usedFinally = node used + request
 *   part        = 0                                 allocatable 0 or weight 0
 *               = usedFinally * weight / allocatable otherwise
 *   sum += part; weightSum += weight
 *
 *   score = (weightSum > 0 ? sum / weightSum : 0) * 100 * binpack.weight
 *
 * A resource that would overflow the node (usedFinally > allocatable) makes
 * the whole node score 0, as Volcano master's ResourceBinPackingScore
 * error does.
 *
 * Example: weights cpu 1, memory 1, nvidia.com/gpu 2; a node with 8 cpu,
 * 32Gi, 4 GPUs allocatable and 4 cpu, 8Gi, 1 GPU used; a task asking 2 cpu,
 * 8Gi, 1 GPU: cpu 6/8*1 = 0.75, memory 16/32*1 = 0.5, gpu 2/4*2 = 1.0; sum
 * 2.25 over weightSum 4 = 0.5625; score 56.25 * binpack.weight.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

static void *binpack_open(struct kb_session *s, const struct kb_value *args);

static const char *const arguments[] = {"binpack.weight", "binpack.cpu", "binpack.memory",
                                        "binpack.resources*", NULL};

const struct kb_plugin kb_plugin_binpack = {
    .name = "binpack",
    .open = binpack_open,
    .close = NULL,
    .arguments = arguments,
};

#define MAX_NODE_SCORE 100

static int64_t nonneg_weight(const struct kb_value *args, const char *key)
{
        int64_t w = kb_args_int(args, key, 1);
        return w < 0 ? 1 : w;
}

static void set_weight(struct kb__binpack *bp, int slot, int64_t w)
{
        bp->has[slot] = true;
        bp->res[slot] = w;
}

void kb__plugins_binpack_weights(const struct kb_value *args, const char *prefix,
                                 struct kb__binpack *bp)
{
        char key[300];
        snprintf(key, sizeof(key), "%sresources", prefix);
        const char *list = kb_value_str(kb_value_get(args, key));
        while (list && *list) {
                const char *end = strchr(list, ',');
                size_t len = end ? (size_t)(end - list) : strlen(list);
                const char *b = list, *e = list + len;
                list = end ? end + 1 : NULL;
                while (b < e && isspace((unsigned char)*b))
                        b++;
                while (e > b && isspace((unsigned char)e[-1]))
                        e--;
                if (b == e)
                        continue;

                char name[256];
                if ((size_t)(e - b) >= sizeof(name)) {
                        KB_WARN("%sresources: name too long: %.*s", prefix, (int)(e - b), b);
                        continue;
                }
                memcpy(name, b, (size_t)(e - b));
                name[e - b] = '\0';
                snprintf(key, sizeof(key), "%sresources.%s", prefix, name);
                int64_t w = nonneg_weight(args, key);
                /* A name no object uses cannot be requested by any task;
                 * the pods slot is a count Volcano never scores. */
                int slot = kb_res_lookup(name);
                if (slot < 0 || slot == KB_RES_PODS) {
                        KB_V(4, "%sresources: resource %s is not used by any object", prefix, name);
                        continue;
                }
                set_weight(bp, slot, w);
        }

        /* Set last, as Volcano does: they win over "cpu" in the list. */
        snprintf(key, sizeof(key), "%scpu", prefix);
        set_weight(bp, KB_RES_CPU, nonneg_weight(args, key));
        snprintf(key, sizeof(key), "%smemory", prefix);
        set_weight(bp, KB_RES_MEMORY, nonneg_weight(args, key));
}

KB_TESTABLE void binpack_conf(const struct kb_value *args, struct kb__binpack *bp)
{
        memset(bp, 0, sizeof(*bp));
        bp->weight = kb_args_int(args, "binpack.weight", 1);
        kb__plugins_binpack_weights(args, "binpack.", bp);
}

KB_TESTABLE double binpack_score(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        const struct kb__binpack *bp = arg;
        /* In double throughout: weights come from the conf as int64, and
         * their sum, or 100 times binpack.weight, overflowed int64 for a
         * large one (Volcano's ints wrap there). */
        double sum = 0, weight_sum = 0;

        for (int r = 0; r < KB_RES_MAX; r++) {
                int64_t req = t->resreq->q[r];
                if (req == 0 || !bp->has[r])
                        continue;
                double cap = (double)n->allocatable.q[r];
                double used_finally = (double)req + (double)n->used.q[r];
                int64_t w = bp->res[r];
                if (cap != 0 && w != 0 && used_finally > cap)
                        return 0;
                if (cap != 0 && w != 0)
                        sum += used_finally * (double)w / cap;
                weight_sum += (double)w;
        }
        if (weight_sum > 0)
                sum /= weight_sum;
        return sum * MAX_NODE_SCORE * (double)bp->weight;
}

static void *binpack_open(struct kb_session *s, const struct kb_value *args)
{
        struct kb__binpack *bp = kb_pool_alloc(kb_session_pool(s), sizeof(*bp));
        binpack_conf(args, bp);
        if (bp->weight != 0)
                kb_on_node_order(s, binpack_score, bp, KB_PURE);
        else
                KB_V(2, "binpack: binpack.weight is 0, not scoring nodes");
        return bp;
}

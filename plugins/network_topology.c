/*
 * network-topology-aware: where the network topology comes from and how
 * topology domains are ranked — the conf side of Volcano's plugin of the
 * same name (pkg/scheduler/plugins/network-topology-aware).  The placement
 * itself — a gang with a hard spec.networkTopology lands within one domain
 * of tier at most highestTierAllowed, the lowest tier that fits first and,
 * among those, the tightest fit — is the allocate action's
 * (actions/topology.c), so that no conf can drop a hard constraint.
 *
 * Arguments:
 *   hypernode.tier<N>.label        a node label key, N = 1, 2, ... with no
 *                                  gap: nodes with equal values of it form
 *                                  a domain of tier N (inside their domain
 *                                  of tier N+1).  When set, the topology
 *                                  comes from node labels and HyperNode
 *                                  objects are left aside.
 *   weight                      1  0 ranks equal-tier domains by name only
 *   hypernode.binpack.cpu       1  the domain binpack score's weights
 *   hypernode.binpack.memory    1  (negative means 1)
 *   hypernode.binpack.resources    "nvidia.com/gpu, ..."
 *   hypernode.binpack.resources.<name>  1
 *
 * Example: nodes labelled topology.kbatch.io/rack and
 * topology.kbatch.io/block, and
 *
 *   - name: network-topology-aware
 *     arguments:
 *       hypernode.tier1.label: topology.kbatch.io/rack
 *       hypernode.tier2.label: topology.kbatch.io/block
 *
 * make racks tier-1 domains inside tier-2 blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

#define MAX_TIERS 16

static void *topology_open(struct kb_session *s, const struct kb_value *args);
static int topology_check(const struct kb_value *args, char *err, size_t errlen);

static const char *const arguments[] = {"weight",
                                        "hypernode.binpack.cpu",
                                        "hypernode.binpack.memory",
                                        "hypernode.binpack.resources*",
                                        "hypernode.tier*",
                                        NULL};
/* Volcano's, not acted on: node scores for pods without a network
 * topology, preemption's domain search, and IP-based scores. */
static const char *const ignored[] = {
    "hypernode.binpack.normal-pod.enable", "hypernode.binpack.normal-pod.fading",
    "hypernode.gradient.evict.max-hypernodes", "highPriorityIPScore", NULL};

const struct kb_plugin kb_plugin_network_topology_aware = {
    .name = "network-topology-aware",
    .open = topology_open,
    .arguments = arguments,
    .ignored = ignored,
    .check = topology_check,
};

/* N of a "hypernode.tier<N>.label" key, 0 when key is not one. */
static int tier_of(const char *key)
{
        int n = 0, end = 0;
        if (sscanf(key, "hypernode.tier%d.label%n", &n, &end) != 1 || key[end] || n < 1)
                return 0;
        return n;
}

/* The tier labels, tier 1 first, into labels[] (at most MAX_TIERS):
 * returns their count, or -1 with the problem in err. */
static int tier_labels(const struct kb_value *args, const char **labels, char *err, size_t errlen)
{
        int n = 0;
        for (size_t i = 0; i < MAX_TIERS; i++)
                labels[i] = NULL;
        for (size_t i = 0; i < args->obj.n; i++) {
                const char *key = args->obj.m[i].key;
                if (strncmp(key, "hypernode.tier", 14) != 0)
                        continue;
                int tier = tier_of(key);
                if (!tier) {
                        snprintf(err, errlen,
                                 "%s: unknown key; tier labels are "
                                 "hypernode.tier<N>.label with N = 1, 2, ...",
                                 key);
                        return -1;
                }
                if (tier > MAX_TIERS) {
                        snprintf(err, errlen, "%s: at most %d tiers", key, MAX_TIERS);
                        return -1;
                }
                const char *v = kb_value_str(args->obj.m[i].val);
                if (!v || !*v || strchr(v, ' ') || strchr(v, ',')) {
                        snprintf(err, errlen, "%s: must be a node label key, got \"%s\"", key,
                                 kb_value_text(args->obj.m[i].val)
                                     ? kb_value_text(args->obj.m[i].val)
                                     : kb_value_type_name(args->obj.m[i].val->type));
                        return -1;
                }
                labels[tier - 1] = v;
                n = tier > n ? tier : n;
        }
        for (int t = 0; t < n; t++) {
                if (!labels[t]) {
                        snprintf(err, errlen,
                                 "hypernode.tier%d.label: missing; tiers must run from 1 with no "
                                 "gap (hypernode.tier%d.label is set)",
                                 t + 1, n);
                        return -1;
                }
                for (int u = 0; u < t; u++)
                        if (strcmp(labels[u], labels[t]) == 0) {
                                snprintf(err, errlen,
                                         "hypernode.tier%d.label: %s is already tier %d's label",
                                         t + 1, labels[t], u + 1);
                                return -1;
                        }
        }
        return n;
}

static int topology_check(const struct kb_value *args, char *err, size_t errlen)
{
        const char *labels[MAX_TIERS];
        return tier_labels(args, labels, err, errlen) < 0 ? -1 : 0;
}

static void *topology_open(struct kb_session *s, const struct kb_value *args)
{
        const char *labels[MAX_TIERS];
        char err[300];
        int n = tier_labels(args, labels, err, sizeof(err));
        struct kb__binpack bp = {0};
        kb__plugins_binpack_weights(args, "hypernode.binpack.", &bp);
        struct kb_topology_conf conf = {.labels = labels, .nlabels = n > 0 ? (size_t)n : 0};
        bool scored = kb_args_int(args, "weight", 1) != 0;
        for (int r = 0; r < KB_RES_MAX; r++) {
                conf.weighted[r] = scored && bp.has[r];
                conf.weight[r] = bp.res[r];
        }
        kb_topology_configure(s, &conf);
        return NULL;
}

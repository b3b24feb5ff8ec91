/*
 * Helpers that several plugin files share (not a public interface: the
 * plugins' only public symbols are their kb_plugin descriptors).
 */
#ifndef KB_PLUGINS_PLUGINS_INT_H
#define KB_PLUGINS_PLUGINS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "framework/framework.h"

/* The node's label value for key, or NULL when it has none. */
const char *kb__plugins_node_label(const struct kb_node *node, const char *key);

/*
 * Whether node matches one NodeSelectorTerm, as kube-scheduler's
 * nodeaffinity helpers decide (see plugins/nodeselector.c).  predicates uses
 * it for required terms, nodeorder for preferred ones.
 */
bool kb__plugins_term_matches(const struct kb_node_term *term, const struct kb_node *node);

/* nodeorder's configuration: the weight of each scorer. */
struct kb__nodeorder {
        int64_t least, most, balanced, affinity;
        int gpu; /* resource slot of nvidia.com/gpu, or -1 */
};

/* binpack's configuration. */
struct kb__binpack {
        int64_t weight;
        bool has[KB_RES_MAX];    /* the slot has a weight (was configured) */
        int64_t res[KB_RES_MAX]; /* its weight */
};

/* ---- capacity (plugins/capacity.c, its queue tree in capacity_tree.c) ---- */

/* A resource vector: one amount per resource slot (INFINITY: no limit). */
typedef double kb__vec[KB_RES_MAX];

/* Volcano's resource epsilon: amounts closer than this are equal. */
#define KB__EPS 0.1

/* One queue's attributes in capacity (Volcano's queueAttr). */
struct kb__capq {
        const struct kb_queue_info *info; /* NULL for the implicit root */
        const char *name;
        int parent; /* index; -1 at the root, without hierarchy, or when broken */
        int depth;  /* 0 at the root */
        int nchildren;
        /* Why the queue has no place in the hierarchy (its spec.parent names
         * no queue, or its parents form a cycle), or NULL. */
        const char *broken;
        /* Why a job in this queue cannot run: broken, or (with hierarchy) a
         * queue with children; NULL when jobs may run here. */
        const char *refuse;
        kb__vec deserved, allocated, inqueue, elastic, guarantee, capability, real_cap;
        double share;
};

struct kb__capacity {
        struct kb_session *s;
        bool hierarchy;     /* enableHierarchy */
        int64_t level;      /* ancestorReclaimLevel (no deeper than depth) */
        struct kb__capq *q; /* by session queue index, then the implicit root */
        size_t n;           /* the session's queues, plus the implicit root if any */
        int root;           /* the root's index; -1 without hierarchy */
        int depth;          /* the deepest queue's depth */
        int *slot;          /* reclaimable's scratch, by queue: -1 */
};

/* Fills c->q from the session (c->s, c->hierarchy set): limits, deserved,
 * what the jobs hold, request and reserve, shares. */
void kb__capacity_build(struct kb__capacity *c);
/* a's share: the largest allocated/deserved over the resources it deserves;
 * 1 for a queue that deserves nothing (best effort). */
void kb__capacity_share(struct kb__capq *a);
/* The queue level steps above q (1: its parent), or -1. */
static inline int kb__capacity_above(const struct kb__capacity *c, int q, int64_t level)
{
        for (; level > 0 && q >= 0; level--)
                q = c->q[q].parent;
        return q;
}
/* capacity's reclaimable (plugins/capacity_victims.c), a kb_victims_fn. */
int kb__capacity_reclaimable(void *arg, const struct kb_task *reclaimer,
                             struct kb_task *const *cand, size_t n, struct kb_task **out);

/* Volcano's binpack weights under a key prefix ("binpack.", and
 * network-topology-aware's "hypernode.binpack."): <prefix>cpu and
 * <prefix>memory (1), <prefix>resources ("a, b") and
 * <prefix>resources.<name> (1); negative weights mean 1.  Sets has[] and
 * res[] only. */
void kb__plugins_binpack_weights(const struct kb_value *args, const char *prefix,
                                 struct kb__binpack *bp);

#ifdef KB_TESTING
/* The plugins' file-local functions (KB_TESTABLE), for the unit tests. */
const char *predicates_check(const struct kb_pod *pod, const struct kb_node *node, char *buf,
                             size_t len);

void nodeorder_conf(const struct kb_value *args, struct kb__nodeorder *no);
int64_t nodeorder_least_requested(const struct kb_task *t, const struct kb_node_info *n);
int64_t nodeorder_most_requested(const struct kb_task *t, const struct kb_node_info *n);
int64_t nodeorder_balanced_resource(const struct kb_task *t, const struct kb_node_info *n, int gpu);
int64_t nodeorder_node_affinity(const struct kb_task *t, const struct kb_node_info *n);
double nodeorder_score(void *arg, const struct kb_task *t, const struct kb_node_info *n);

void binpack_conf(const struct kb_value *args, struct kb__binpack *bp);
double binpack_score(void *arg, const struct kb_task *t, const struct kb_node_info *n);
#endif

#endif /* KB_PLUGINS_PLUGINS_INT_H */

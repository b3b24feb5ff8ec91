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

/*
 * predicates: may this task go to this node at all, as the node-level filters
 * of kube-scheduler decide it.  Volcano's predicates plugin
 * (pkg/scheduler/plugins/predicates/predicates.go) runs kube-scheduler's
 * filter plugins; kbatch keeps the ones that read only the pod's placement
 * spec and the node's static attributes, in this order, and answers with the
 * first failure in kube-scheduler's words:
 *
 *   1. the node is not Ready          "node(s) were not ready"
 *   2. NodeUnschedulable              "node(s) were unschedulable"
 *      (spec.unschedulable, unless the pod tolerates the taint
 *      node.kubernetes.io/unschedulable:NoSchedule)
 *   3. NodeAffinity                   "node(s) didn't match Pod's node affinity/selector"
 *      (spec.nodeSelector and requiredDuringSchedulingIgnoredDuringExecution)
 *   4. TaintToleration                "node(s) had untolerated taint {KEY: VALUE}"
 *      (the node's first NoSchedule or NoExecute taint that no toleration
 *      tolerates; PreferNoSchedule taints only affect scoring)
 *
 * Those read only the node's static attributes, so they are registered
 * KB_PURE and cached per placement class.  Then, as placement filters
 * (plugins/podfilter.c: they look at the pods on nodes, this session's
 * included), in Volcano's order:
 *
 *   5. NodePorts                      "node(s) didn't have free ports for the requested pod ports"
 *   6. InterPodAffinity               "node(s) didn't match pod affinity rules",
 *                                     "... pod anti-affinity rules",
 *                                     "node(s) didn't satisfy existing pods anti-affinity rules"
 *   7. PodTopologySpread              "node(s) didn't match pod topology spread constraints"
 *      (DoNotSchedule constraints)
 *
 * Resource fit (cpu, memory, pods, extended resources) is the framework's
 * job (kb_select_node); volume filters are not done.  Volcano's switches
 * predicate.NodeAffinityEnable, predicate.TaintTolerationEnable,
 * predicate.NodePortsEnable, predicate.PodAffinityEnable and
 * predicate.PodTopologySpreadEnable (all default true) turn checks 3 to 7
 * off; the switches of filters kbatch does not have
 * (predicate.VolumeZoneEnable, ...) are accepted with a warning when they
 * ask for one.
 *
 * Node affinity: nodeSelector needs every key present with an equal value;
 * the required terms are ORed; each term is matched as plugins/nodeselector.c
 * explains (In, NotIn, Exists, DoesNotExist, Gt, Lt on labels; metadata.name
 * in matchFields; an empty term matches nothing).
 *
 * Example: a pod with nodeSelector {disk: ssd} and one required term
 * [gpu-count Gt "3"] fits a node labelled {disk: ssd, gpu-count: "8"}, not
 * one labelled {disk: ssd, gpu-count: "eight"} (the label is not an integer).
 *
 * Tolerations follow v1.Toleration.ToleratesTaint: a toleration with an
 * effect must name the taint's effect; with a key, the taint's key; then
 * Exists tolerates any value and Equal (the default) needs equal values.  So
 * {operator: Exists} alone tolerates every taint.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

static void *predicates_open(struct kb_session *s, const struct kb_value *args);
static void predicates_close(struct kb_session *s, void *state);

/* Volcano's switches: those of checks kbatch does are honoured, the cache
 * switch changes nothing (kbatch always caches what is pure); the others
 * switch on checks kbatch does not do yet. */
static const char *const arguments[] = {"predicate.NodeAffinityEnable",
                                        "predicate.TaintTolerationEnable",
                                        "predicate.NodePortsEnable",
                                        "predicate.PodAffinityEnable",
                                        "predicate.PodTopologySpreadEnable",
                                        "predicate.CacheEnable",
                                        NULL};
static const char *const ignored[] = {"predicate.NodeVolumeLimitsEnable",
                                      "predicate.VolumeZoneEnable",
                                      "predicate.VolumeBindingEnable",
                                      "predicate.DynamicResourceAllocationEnable",
                                      "predicate.GPUSharingEnable",
                                      "predicate.ProportionalEnable",
                                      "predicate.resources*",
                                      NULL};

const struct kb_plugin kb_plugin_predicates = {
    .name = "predicates",
    .open = predicates_open,
    .close = predicates_close,
    .arguments = arguments,
    .ignored = ignored,
};

#define REASON_NOT_READY     "node(s) were not ready"
#define REASON_UNSCHEDULABLE "node(s) were unschedulable"
#define REASON_AFFINITY      "node(s) didn't match Pod's node affinity/selector"

#define TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

struct predicates {
        struct kb_session *s;
        bool node_affinity;    /* predicate.NodeAffinityEnable */
        bool taint_toleration; /* predicate.TaintTolerationEnable */
        struct kb__podfilter *filters;
};

/*
 * The whole check.  Returns NULL when pod may go to node, else a static
 * reason, or buf holding the taint reason (the caller interns it).
 */
static const char *check(const struct predicates *p, const struct kb_pod *pod,
                         const struct kb_node *node, char *buf, size_t len)
{
        if (!node->ready)
                return REASON_NOT_READY;
        if (node->unschedulable &&
            !kb__plugins_tolerates(pod, TAINT_UNSCHEDULABLE, "", KB_TAINT_NO_SCHEDULE))
                return REASON_UNSCHEDULABLE;
        if (p->node_affinity && !kb__plugins_node_affinity(pod, node))
                return REASON_AFFINITY;
        const struct kb_taint *taint =
            p->taint_toleration ? kb__plugins_untolerated(pod, node) : NULL;
        if (taint) {
                snprintf(buf, len, "node(s) had untolerated taint {%s: %s}", taint->key,
                         taint->value ? taint->value : "");
                return buf;
        }
        return NULL;
}

#ifdef KB_TESTING
/* Every check on (Volcano's defaults), for the unit tests. */
const char *predicates_check(const struct kb_pod *pod, const struct kb_node *node, char *buf,
                             size_t len)
{
        static const struct predicates all = {.node_affinity = true, .taint_toleration = true};
        return check(&all, pod, node, buf, len);
}
#endif

static const char *predicates_fn(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        struct predicates *p = arg;
        char buf[640];
        const char *why = check(p, t->pod, n->node, buf, sizeof(buf));
        return why == buf ? kb_session_intern(p->s, buf) : why;
}

static void *predicates_open(struct kb_session *s, const struct kb_value *args)
{
        struct predicates *p = kb_pool_alloc(kb_session_pool(s), sizeof(*p));
        p->s = s;
        p->node_affinity = kb_args_bool(args, "predicate.NodeAffinityEnable", true);
        p->taint_toleration = kb_args_bool(args, "predicate.TaintTolerationEnable", true);
        kb_on_predicate(s, predicates_fn, p, KB_PURE);
        p->filters =
            kb__podfilter_open(s, kb_args_bool(args, "predicate.NodePortsEnable", true),
                               kb_args_bool(args, "predicate.PodAffinityEnable", true),
                               kb_args_bool(args, "predicate.PodTopologySpreadEnable", true));
        return p;
}

static void predicates_close(struct kb_session *s, void *state)
{
        struct predicates *p = state;
        if (p)
                kb__podfilter_close(p->filters);
}

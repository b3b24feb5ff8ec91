/*
 * sim: an in-memory cluster for kbatch-sim and the scenario tests — loaded
 * from Kubernetes manifests or built synthetically — that runs sessions and
 * applies their decisions between them (bound pods run, evicted pods are
 * deleted, PodGroup status is written back), and prints results.
 *
 * Everything here runs on the caller's thread; a cluster is not shared.
 */
#ifndef KB_PKG_SIM_H
#define KB_PKG_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "api/api.h"
#include "framework/framework.h"

struct kb_cluster {
        struct kb_node **nodes;
        size_t nnodes, capnodes;
        struct kb_pod **pods;
        size_t npods, cappods;
        struct kb_podgroup **podgroups;
        size_t npodgroups, cappodgroups;
        struct kb_queue **queues;
        size_t nqueues, capqueues;
        struct kb_priorityclass **priorityclasses;
        size_t npriorityclasses, cappriorityclasses;
        struct kb_namespace **namespaces;
        size_t nnamespaces, capnamespaces;
        struct kb_hypernode **hypernodes;
        size_t nhypernodes, caphypernodes;
        const char **scheduler_names;
        size_t nscheduler_names, capscheduler_names;
        const char *default_queue;
        double now;
        /* What earlier --synthetic specs built, so that later ones carry on
         * (creation times, the spread of running pods). */
        int64_t synthetic_groups, synthetic_placed;
};

void kb_cluster_init(struct kb_cluster *c);
void kb_cluster_release(struct kb_cluster *c);
/* Adds a name pods must carry as schedulerName to be scheduled ("kbatch"
 * when none is added).  The string must outlive the cluster. */
void kb_cluster_add_scheduler(struct kb_cluster *c, const char *name);

/*
 * Loads manifests (YAML, multi-document, or JSON; kind List is expanded;
 * a batch/v1 Job becomes its pods, parallelism of them, named
 * <job>-<index>).  label names the source in messages ("jobs.yaml").
 * Unknown kinds are skipped with a warning.  Returns 0, or KB_EBADINPUT
 * with err = "jobs.yaml:12: podgroup team-a/train: spec.minMember: ...";
 * on error nothing of this text is kept.
 */
int kb_cluster_load(struct kb_cluster *c, const char *label, const char *text, size_t len,
                    char *err, size_t errlen);

/*
 * Builds a synthetic cluster from a spec like
 * "nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=5000,
 *  group-size=20,pod-cpu=1,pod-memory=1Gi,queues=4,besteffort-groups=0".
 * Every group's minMember is its size.  Returns 0 or KB_EBADINPUT with err.
 */
int kb_cluster_synthetic(struct kb_cluster *c, const char *spec, char *err, size_t errlen);

/* Adds the default queue (weight 1) when no queue has that name, as the
 * daemon creates it in a real cluster.  Returns whether it added one. */
bool kb_cluster_ensure_default_queue(struct kb_cluster *c);

/* Points snap at the cluster's objects; valid until the cluster changes. */
void kb_cluster_snapshot(const struct kb_cluster *c, struct kb_snapshot *snap);

/* Applies a session's decisions: bound pods get their node and run,
 * evicted pods are deleted, PodGroups get the session's status. */
void kb_cluster_apply(struct kb_cluster *c, const struct kb_result *r);

/* ---- output ---------------------------------------------------------------- */

/* Appends session `index`'s result to a JSON "sessions" array (kb_value). */
void kb_result_to_json(const struct kb_result *r, int index, struct kb_value *sessions);
/* Writes a human-readable report of one session. */
void kb_result_print_table(const struct kb_result *r, int index, const struct kb_cluster *c,
                           FILE *out);

#endif /* KB_PKG_SIM_H */

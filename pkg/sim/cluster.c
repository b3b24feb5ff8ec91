/* The simulated cluster: its arrays, snapshots, pods' runtimes and applying
 * session results (load.c loads manifests, synthetic.c builds clusters). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"
#include "workload/workload.h"

void kb_cluster_init(struct kb_cluster *c)
{
        memset(c, 0, sizeof(*c));
        c->default_queue = "default";
        c->workload_podgroups = true;
        c->gen = 1;
}

void kb_cluster_changed(struct kb_cluster *c)
{
        c->gen++;
        c->epoch++;
}

void kb_cluster_release(struct kb_cluster *c)
{
        for (size_t i = 0; i < c->nnodes; i++)
                kb_node_free(c->nodes[i]);
        for (size_t i = 0; i < c->npods; i++)
                kb_pod_free(c->pods[i]);
        for (size_t i = 0; i < c->npodgroups; i++)
                kb_podgroup_free(c->podgroups[i]);
        for (size_t i = 0; i < c->nqueues; i++)
                kb_queue_free(c->queues[i]);
        for (size_t i = 0; i < c->npriorityclasses; i++)
                kb_priorityclass_free(c->priorityclasses[i]);
        for (size_t i = 0; i < c->nnamespaces; i++)
                kb_namespace_free(c->namespaces[i]);
        for (size_t i = 0; i < c->nhypernodes; i++)
                kb_hypernode_free(c->hypernodes[i]);
        for (size_t i = 0; i < c->npdbs; i++)
                kb_pdb_free(c->pdbs[i]);
        for (size_t i = 0; i < c->nowners; i++)
                kb_value_free(c->owners[i]);
        free(c->owners);
        free(c->nodes);
        free(c->pods);
        free(c->podgroups);
        free(c->queues);
        free(c->priorityclasses);
        free(c->namespaces);
        free(c->hypernodes);
        free(c->pdbs);
        free(c->scheduler_names);
        memset(c, 0, sizeof(*c));
}

void kb_cluster_add_scheduler(struct kb_cluster *c, const char *name)
{
        KB_PUSH(c->scheduler_names, c->nscheduler_names, c->capscheduler_names, name);
        kb_cluster_changed(c);
}

void kb_cluster_snapshot(const struct kb_cluster *c, struct kb_snapshot *snap)
{
        static const char *const dflt[] = {"kbatch"};
        memset(snap, 0, sizeof(*snap));
        snap->nodes = c->nodes;
        snap->nnodes = c->nnodes;
        snap->pods = c->pods;
        snap->npods = c->npods;
        snap->podgroups = c->podgroups;
        snap->npodgroups = c->npodgroups;
        snap->queues = c->queues;
        snap->nqueues = c->nqueues;
        snap->priorityclasses = c->priorityclasses;
        snap->npriorityclasses = c->npriorityclasses;
        snap->namespaces = c->namespaces;
        snap->nnamespaces = c->nnamespaces;
        snap->hypernodes = c->hypernodes;
        snap->nhypernodes = c->nhypernodes;
        snap->pdbs = c->pdbs;
        snap->npdbs = c->npdbs;
        if (c->nscheduler_names) {
                snap->scheduler_names = c->scheduler_names;
                snap->nscheduler_names = c->nscheduler_names;
        } else {
                snap->scheduler_names = dflt;
                snap->nscheduler_names = 1;
        }
        snap->default_queue = c->default_queue;
        snap->now = c->now;
        snap->gen = c->gen;
        snap->epoch = c->epoch;
}

int kb_pod_runtime(const struct kb_pod *p, int64_t *ns, char *err, size_t errlen)
{
        const char *key = KB_RUNTIME_ANNOTATION;
        const char *v = kb_meta_annotation(&p->meta, key);
        char why[256];
        if (!v) {
                key = KB_SIM_DURATION_ANNOTATION;
                v = kb_meta_annotation(&p->meta, key);
        }
        if (!v)
                return 0;
        int rc = kb_duration_parse(v, ns, why, sizeof(why));
        if (rc == 0 && *ns >= 0)
                return 1;
        if (rc == 0)
                snprintf(why, sizeof(why), "\"%s\": a runtime must not be negative", v);
        snprintf(err, errlen, "pod %s/%s: annotation %s: %s",
                 p->meta.namespace ? p->meta.namespace : "default", p->meta.name, key, why);
        return KB_EBADINPUT;
}

/* ---- applying results --------------------------------------------------------- */

void kb__cluster_bind(struct kb_pod *p, const char *node)
{
        free(p->node_name);
        p->node_name = kb_xstrdup(node);
        free(p->nominated_node_name);
        p->nominated_node_name = NULL;
        p->phase = KB_POD_RUNNING;
}

bool kb__cluster_ours(const struct kb_cluster *c, const struct kb_pod *p)
{
        if (!c->nscheduler_names)
                return kb_streq(p->scheduler_name, "kbatch");
        for (size_t i = 0; i < c->nscheduler_names; i++)
                if (kb_streq(p->scheduler_name, c->scheduler_names[i]))
                        return true;
        return false;
}

/* One condition per type, replaced in place (Volcano keeps the latest
 * per type). */
static void set_condition(struct kb_podgroup *pg, const char *type, const char *status,
                          const char *reason, const char *message, double when)
{
        struct kb_condition *cond = NULL;
        for (size_t k = 0; k < pg->nconditions; k++)
                if (kb_streq(pg->conditions[k].type, type))
                        cond = &pg->conditions[k];
        if (!cond) {
                pg->conditions =
                    kb_xrealloc(pg->conditions, (pg->nconditions + 1) * sizeof(*pg->conditions));
                cond = &pg->conditions[pg->nconditions++];
                memset(cond, 0, sizeof(*cond));
                cond->type = kb_xstrdup(type);
        }
        free(cond->status);
        free(cond->reason);
        free(cond->message);
        cond->status = kb_xstrdup(status);
        cond->reason = kb_xstrdup(reason);
        cond->message = kb_xstrdup(message);
        cond->last_transition = when;
}

/* Whether condition type of pg says status, reason and message already,
 * since when (NULL type: nothing to set). */
static bool same_condition(const struct kb_podgroup *pg, const char *type, const char *status,
                           const char *reason, const char *message, double when)
{
        if (!type)
                return true;
        for (size_t k = 0; k < pg->nconditions; k++) {
                const struct kb_condition *cond = &pg->conditions[k];
                if (kb_streq(cond->type, type))
                        return kb_streq(cond->status, status) && kb_streq(cond->reason, reason) &&
                               kb_streq(cond->message, message) && cond->last_transition == when;
        }
        return false;
}

/* Whether applying st would leave pg as it is. */
static bool same_status(const struct kb_podgroup *pg, const struct kb_pg_status *st, double now)
{
        return kb_streq(pg->phase, kb_pg_phase_name(st->phase)) && pg->running == st->running &&
               pg->succeeded == st->succeeded && pg->failed == st->failed &&
               (!st->inq_status ||
                same_condition(pg, KB_INQUEUE_CONDITION, st->inq_status, st->inq_reason,
                               st->inq_message, st->inq_since)) &&
               same_condition(pg, st->cond_type, st->cond_status, st->cond_reason, st->cond_message,
                              now);
}

void kb_cluster_apply(struct kb_cluster *c, const struct kb_result *r)
{
        if (r->nbinds || r->nevictions)
                c->gen++;
        for (size_t i = 0; i < r->nbinds; i++) {
                kb__cluster_bind((struct kb_pod *)r->binds[i].pod, r->binds[i].node);
                ((struct kb_pod *)r->binds[i].pod)->meta.gen = c->gen;
        }
        if (r->nevictions) {
                /* Evicted pods are gone: drop them from the pod list. */
                struct ptrmap gone;
                kb__ptrmap_init(&gone, r->nevictions);
                for (size_t i = 0; i < r->nevictions; i++)
                        kb__ptrmap_put(&gone, r->evictions[i].pod, 1);
                size_t w = 0;
                uint32_t one;
                for (size_t i = 0; i < c->npods; i++) {
                        if (kb__ptrmap_get(&gone, c->pods[i], &one))
                                kb_pod_free(c->pods[i]);
                        else
                                c->pods[w++] = c->pods[i];
                }
                c->npods = w;
                kb__ptrmap_release(&gone);
        }
        kb__cluster_apply_statuses(c, r);
}

void kb__cluster_apply_statuses(struct kb_cluster *c, const struct kb_result *r)
{
        /* A Closing queue the session found idle is Closed from now on. */
        for (size_t i = 0; i < r->nqueues; i++)
                for (size_t k = 0; r->queues[i].state_changed && k < c->nqueues; k++)
                        if (strcmp(c->queues[k]->meta.name, r->queues[i].name) == 0 &&
                            c->queues[k]->state != r->queues[i].state) {
                                c->queues[k]->state = r->queues[i].state;
                                c->queues[k]->meta.gen = ++c->gen;
                        }
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                struct kb_podgroup *pg = (struct kb_podgroup *)st->pg;
                if (!pg)
                        continue;
                /* Writing back what the group says already is no change
                 * (an idle session's statuses). */
                if (!same_status(pg, st, c->now))
                        pg->meta.gen = ++c->gen;
                free(pg->phase);
                pg->phase = kb_xstrdup(kb_pg_phase_name(st->phase));
                pg->running = st->running;
                pg->succeeded = st->succeeded;
                pg->failed = st->failed;
                if (st->inq_status)
                        set_condition(pg, KB_INQUEUE_CONDITION, st->inq_status, st->inq_reason,
                                      st->inq_message, st->inq_since);
                if (st->cond_type)
                        set_condition(pg, st->cond_type, st->cond_status, st->cond_reason,
                                      st->cond_message, c->now);
        }
}

/*
 * A kept model brought up to a newer snapshot without building it again,
 * when what changed is pods and PodGroups, each in place: the same
 * object, or one of the same namespace and name at the same position of
 * the snapshot's array (the cache replaces an updated object where the
 * old one stood).  An object changed after the model's snapshot carries a
 * later generation (kb_meta.gen > the model's); an unchanged one is the
 * same pointer with an earlier one.  Each changed pod's task is taken off
 * its node and job, read again, and put back where a build would put it
 * (its node's list is in task order); each job one of them belongs to is
 * read again from its PodGroup or pod; nodes changed in place are read
 * again first (update_node.c).  Anything else (a queue or priority class
 * changed, a node renamed, an object added or dropped, a pod joining
 * another job or becoming ours or not, a group that does not exist yet)
 * makes the model be built again, whole.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* Every this many updates, the model is built again: updates allocate a
 * few strings in its pool (the reasons of jobs read again). */
#define MAX_UPDATES 256

/* Whether the snapshot's array v of n objects is seen (of m's generation
 * at most, each where it was). */
static bool same_objects(const void *const *v, size_t n, const void **seen, size_t nseen,
                         uint64_t gen)
{
        if (n != nseen)
                return false;
        for (size_t i = 0; i < n; i++)
                if (v[i] != seen[i] || ((const struct kb_meta *)v[i])->gen > gen)
                        return false;
        return true;
}

/* Whether path is "ns/name". */
static bool is_path(const char *path, const char *ns, const char *name)
{
        size_t nns = strlen(ns);
        return strncmp(path, ns, nns) == 0 && path[nns] == '/' && strcmp(path + nns + 1, name) == 0;
}

/* Whether meta names path. */
static bool named(const struct kb_meta *meta, const char *path)
{
        return is_path(path, kb_meta_ns(meta), meta->name);
}

/* Whether j is the job of a pod without a group (its one task's). */
static bool lone(const struct kb_job *j)
{
        return !j->pg && j->ntasks == 1 && j->name == j->tasks[0]->name;
}

/* Pod i's task read again from p; false when the pod left its job or
 * node in a way only a build can follow. */
static bool update_task(struct kb_session *s, struct kb_task *t, const struct kb_pod *p, size_t i,
                        uint8_t *dirty)
{
        const struct kb_snapshot *snap = s->snap;
        if (!named(&p->meta, t->name))
                return false;
        const char *on = kb__pod_node(snap, i);
        enum kb_task_status st = kb__pod_status(p, on);
        struct kb_node_info *node = NULL;
        if (on && st != KB_TASK_SUCCEEDED && st != KB_TASK_FAILED)
                node = kb_session_node(s, on);
        bool mine = kb__pod_ours(snap, p);
        if (mine != (t->job != NULL) || (!mine && !node))
                return false;
        struct kb_job *j = t->job;
        if (j) {
                bool workload;
                const char *group = kb__pod_group(snap, p, &workload);
                /* The same job: its group's, with its PodGroup, or its own.
                 * (Its strings but its name may be the old objects'.) */
                if (group ? !j->pg || !is_path(j->name, kb_meta_ns(&p->meta), group) : !lone(j))
                        return false;
                kb__job_count(j, t, -1);
                dirty[j->index] = 1;
        }
        if (t->node >= 0)
                kb__node_detach(s, t);
        kb__task_fields(s, t, p, st);
        t->node = -1;
        t->eclass = 0;
        t->fit_error = NULL;
        if (node)
                kb__node_attach_ordered(s, node, t);
        if (j)
                kb__job_count(j, t, 1);
        return true;
}

/* A job one of whose objects changed, read again as a build reads it. */
static void update_job(struct kb_session *s, struct kb_job *j)
{
        if (j->pg) {
                kb__job_from_pg(s, j, j->pg);
        } else {
                const struct kb_task *t = j->tasks[0];
                j->namespace = kb_meta_ns(&t->pod->meta);
                j->creation = t->pod->meta.creation;
                j->priority = t->priority;
        }
        j->queue = NULL;
        j->invalid = NULL;
        j->invalid_reason = NULL;
        kb__job_resolve(s, j, j->ntasks);
        for (uint32_t k = 0; k < j->ntasks; k++) {
                const struct kb_task *t = j->tasks[k];
                if (t->pod->invalid && t->status == KB_TASK_PENDING && !j->invalid)
                        j->invalid = t->pod->invalid;
        }
}

bool kb__model_update(struct kb_session *s, struct kb_model *m)
{
        const struct kb_snapshot *snap = s->snap;
        uint64_t gen = m->gen;
        if (snap->epoch != m->epoch || m->updates >= MAX_UPDATES ||
            !kb__model_update_nodes(s, m) || /* nodes changed in place: update_node.c */
            !same_objects((const void *const *)snap->queues, snap->nqueues, m->queues_seen,
                          m->nqueues_seen, gen) ||
            !same_objects((const void *const *)snap->priorityclasses, snap->npriorityclasses,
                          m->pcs_seen, m->npcs_seen, gen) ||
            snap->npods != m->npods_seen || snap->npodgroups != m->npgs_seen)
                return false;
        uint8_t *dirty = kb_xcalloc(m->njobs + 1, 1);
        bool ok = true;
        /* PodGroups: a changed one must be its job's. */
        for (size_t i = 0; ok && i < snap->npodgroups; i++) {
                const struct kb_podgroup *pg = snap->podgroups[i];
                if (pg == m->pgs_seen[i] && pg->meta.gen <= gen)
                        continue;
                struct kb_job *j = m->pg_job[i];
                ok = named(&pg->meta, j->name);
                j->pg = pg;
                dirty[j->index] = 1;
        }
        /* Pods: a changed one (or one assumed elsewhere) read again. */
        for (size_t i = 0; ok && i < snap->npods; i++) {
                if (i + 8 < snap->npods)
                        __builtin_prefetch(&snap->pods[i + 8]->meta.gen);
                const struct kb_pod *p = snap->pods[i];
                const char *assumed = snap->assumed_node ? snap->assumed_node[i] : NULL;
                if (p == m->pods_seen[i] && p->meta.gen <= gen && assumed == m->assumed_seen[i])
                        continue;
                uint32_t k = m->pod_task[i];
                ok = k && update_task(s, &m->tasks[k - 1], p, i, dirty);
        }
        for (size_t i = 0; ok && i < m->njobs; i++)
                if (dirty[i]) {
                        /* A group that does not exist yet says which pod
                         * waits for it: only a build says it right. */
                        ok = m->jobs[i]->pg || lone(m->jobs[i]);
                        if (ok)
                                update_job(s, m->jobs[i]);
                }
        free(dirty);
        if (!ok)
                return false;
        /* What a build leaves: versions count the tasks attached. */
        for (size_t i = 0; i < m->nnodes; i++)
                m->nodes[i].version = m->nodes[i].ntasks;
        memcpy(m->pods_seen, snap->pods, snap->npods * sizeof(*m->pods_seen));
        memcpy(m->pgs_seen, snap->podgroups, snap->npodgroups * sizeof(*m->pgs_seen));
        for (size_t i = 0; i < snap->npods; i++)
                m->assumed_seen[i] = snap->assumed_node ? snap->assumed_node[i] : NULL;
        m->updates++;
        return true;
}

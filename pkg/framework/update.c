/*
 * A kept model brought up to a newer snapshot without building it again,
 * when what changed is pods and PodGroups: changed in place, added or
 * removed.  Both producers keep their arrays in the order objects came:
 * the cache (uthash's insertion order) and kbatch-sim's cluster append a
 * new object at the end, drop a removed one without moving the others,
 * and replace an updated one where the old one stood.  So the snapshot's
 * pods are the model's (pods_seen), some gone, some replaced, then the new
 * ones:
 *
 *     seen:      A  B  C  D            (tasks 0 1 2 3)
 *     snapshot:  A  C' D  E            (B deleted, C changed, E created)
 *
 * A walk over both matches A, drops B (its task becomes a hole: no job,
 * no node), reads C' again into C's task, matches D, and appends E's task
 * after the last (index 4).  A build would number them 0 1 2 3; the
 * model's 0 2 3 4 are in the same order, which is all task indices say
 * (a node's list is in task order; plugins index arrays by them).  An
 * unchanged object is the same pointer of the model's generation or
 * earlier; a changed or new one carries a later one (kb_meta.gen), and is
 * matched by name.  A pod found out of that order starts the tail: it and
 * every pod after it are appended as new, and the model's pods not
 * matched by then are dropped, which keeps the order a build gives.
 *
 * Jobs are the build's: PodGroup jobs by name, then the jobs of pods
 * without a group by name; a new one is merged in where it sorts, a job
 * left without a PodGroup and pods is dropped, and every job one of whose
 * objects changed is read again; nodes changed in place are read again
 * first (update_node.c).  What only a build says right builds the model
 * again, whole: a node added, dropped or renamed, a queue or priority
 * class changed, a pod joining another job or becoming ours or not, a
 * group that does not exist yet, a PodGroup removed under pods or added
 * over pods that waited for it, pods of another scheduler counting on a
 * group; and a change of
 * more than a quarter of the pods, a task array out of room, or a pool
 * grown to twice its size as built (updates leave in it the names of the
 * tasks and jobs they make and the lists of the jobs they grow).
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

const struct kb_pod kb__hole_pod;
static const struct kb_res hole_request; /* a hole asks for nothing */

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

/* ---- the walk ---------------------------------------------------------------------- */

/* The model's task of seen pod k, or NULL (a pod of another scheduler
 * on no node). */
static struct kb_task *seen_task(const struct kb_model *m, size_t k)
{
        return m->pod_task[k] ? &m->tasks[m->pod_task[k] - 1] : NULL;
}

/* The first seen pod from k on that snapshot pod p is (the same pointer
 * when p is unchanged, the same name otherwise), looking at most limit
 * ahead; m->npods_seen when none. */
static size_t find_pod(const struct kb_model *m, const struct kb_pod *p, bool old, size_t k,
                       size_t limit)
{
        size_t end = m->npods_seen - k > limit ? k + limit : m->npods_seen;
        for (; k < end; k++) {
                /* A pod of another scheduler on no node, not counting
                 * on a group (nforeign 0), adds nothing to the model:
                 * any such pod at its address is as good. */
                if (m->pods_seen[k] == p && (old || !m->pod_task[k]))
                        return k;
                if (!old && m->pod_task[k] && named(&p->meta, seen_task(m, k)->name))
                        return k;
        }
        return m->npods_seen;
}

static size_t find_pg(const struct kb_model *m, const struct kb_podgroup *pg, bool old, size_t k,
                      size_t limit)
{
        size_t end = m->npgs_seen - k > limit ? k + limit : m->npgs_seen;
        for (; k < end; k++)
                if (old ? m->pgs_seen[k] == pg : named(&pg->meta, m->pg_job[k]->name))
                        return k;
        return m->npgs_seen;
}

/* Pod i's task read again from p; false when the pod left its job or
 * node in a way only a build can follow. */
static bool update_task(struct kb__update *u, struct kb_task *t, const struct kb_pod *p, size_t i)
{
        struct kb_session *s = u->s;
        const struct kb_snapshot *snap = s->snap;
        if (!named(&p->meta, t->name))
                return false;
        enum kb_task_status st;
        struct kb_node_info *node;
        bool mine = kb__pod_place(s, i, &st, &node);
        if (mine != (t->job != NULL) || (!mine && !node))
                return false;
        struct kb_job *j = t->job;
        if (j) {
                bool workload;
                const char *group = kb__pod_group(snap, p, &workload);
                /* The same job: its group's, with its PodGroup, or its own.
                 * (Its strings but its name may be the old objects'.) */
                if (group ? !j->pg || !is_path(j->name, kb_meta_ns(&p->meta), group)
                          : !kb__lone_job(j))
                        return false;
                kb__job_count(j, t, -1);
                u->dirty[j->index] |= KB__DIRTY_TASKS;
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

/* Seen pod k gone from the snapshot: its task becomes a hole. */
static bool remove_pod(struct kb__update *u, size_t k)
{
        struct kb_task *t = seen_task(u->m, k);
        if (!t)
                /* Whether it counted on a group is not known any more. */
                return u->m->nforeign == 0;
        struct kb_job *j = t->job;
        if (j) {
                kb__job_count(j, t, -1);
                uint32_t w = 0;
                for (uint32_t x = 0; x < j->ntasks; x++)
                        if (j->tasks[x] != t)
                                j->tasks[w++] = j->tasks[x];
                j->ntasks = w;
                j->tasks[w] = NULL;
                u->dirty[j->index] |= KB__DIRTY_TASKS;
        }
        if (t->node >= 0)
                kb__node_detach(u->s, t);
        uint32_t index = t->index;
        const char *name = t->name;
        memset(t, 0, sizeof(*t));
        t->pod = &kb__hole_pod;
        t->resreq = &hole_request;
        t->name = name;
        t->index = index;
        t->node = -1;
        t->status = KB_TASK_UNKNOWN;
        return true;
}

/* Snapshot pod i at seen pod k, changed (or assumed elsewhere). */
static bool change_pod(struct kb__update *u, size_t i, size_t k)
{
        const struct kb_snapshot *snap = u->s->snap;
        const struct kb_pod *p = snap->pods[i];
        kb__update_map_pod(u, i, u->m->pod_task[k]);
        struct kb_task *t = seen_task(u->m, k);
        if (t)
                return update_task(u, t, p, i);
        /* Still nobody's concern: another scheduler's, on no node, not
         * counting on a group. */
        const char *on = kb__pod_node(snap, i);
        enum kb_task_status st = kb__pod_status(p, on);
        bool node =
            on && st != KB_TASK_SUCCEEDED && st != KB_TASK_FAILED && kb_session_node(u->s, on);
        return !kb__pod_ours(snap, p) && !node && !kb__counts_foreign(p) && u->m->nforeign == 0;
}

/* The snapshot's pods against the model's: matched, changed, removed, or
 * added (listed, for after the PodGroups). */
static bool walk_pods(struct kb__update *u)
{
        struct kb_model *m = u->m;
        const struct kb_snapshot *snap = u->s->snap;
        size_t k = 0, changes = 0, same = KB_MIN(snap->npods, m->npods_seen);
        bool tail = false;
        for (size_t i = 0; i < snap->npods; i++) {
                /* While nothing was added or removed before, the pods the
                 * model saw as they were, at their places (most of them,
                 * most sessions): as cheap a loop as can be. */
                if (k == i && !u->pod_task && !tail) {
                        for (; i < same; i++) {
                                if (i + 8 < snap->npods)
                                        __builtin_prefetch(&snap->pods[i + 8]->meta.gen);
                                const struct kb_pod *p = snap->pods[i];
                                if (p != m->pods_seen[i] || p->meta.gen > u->gen ||
                                    (snap->assumed_node ? snap->assumed_node[i] : NULL) !=
                                        m->assumed_seen[i])
                                        break;
                        }
                        k = i;
                        if (i == snap->npods)
                                break;
                }
                if (i + 8 < snap->npods)
                        __builtin_prefetch(&snap->pods[i + 8]->meta.gen);
                const struct kb_pod *p = snap->pods[i];
                const char *assumed = snap->assumed_node ? snap->assumed_node[i] : NULL;
                bool old = p->meta.gen <= u->gen;
                if (!tail && k < m->npods_seen && p == m->pods_seen[k] && old &&
                    assumed == m->assumed_seen[k]) {
                        /* Nothing added or removed before it: the map holds. */
                        if (u->pod_task || k != i)
                                kb__update_map_pod(u, i, m->pod_task[k]);
                        k++;
                        continue;
                }
                size_t at = m->npods_seen;
                if (!tail)
                        at = find_pod(m, p, old, k, u->budget - changes + 1);
                if (at == m->npods_seen) {
                        tail = true;
                        KB_PUSH(u->pods_added, u->npods_added, u->cappods_added, i);
                        if (++changes > u->budget)
                                return false;
                        continue;
                }
                for (; k < at; k++)
                        if (++changes > u->budget || !remove_pod(u, k))
                                return false;
                if (!change_pod(u, i, k++))
                        return false;
        }
        for (; k < m->npods_seen; k++)
                if (++changes > u->budget || !remove_pod(u, k))
                        return false;
        return true;
}

/* The snapshot's PodGroups against the model's, as walk_pods. */
static bool walk_pgs(struct kb__update *u)
{
        struct kb_model *m = u->m;
        const struct kb_snapshot *snap = u->s->snap;
        size_t k = 0;
        bool tail = false;
        for (size_t i = 0; i < snap->npodgroups; i++) {
                const struct kb_podgroup *pg = snap->podgroups[i];
                bool old = pg->meta.gen <= u->gen;
                if (!tail && k < m->npgs_seen && pg == m->pgs_seen[k] && old) {
                        u->pg_job[i] = m->pg_job[k++];
                        continue;
                }
                size_t at = m->npgs_seen;
                if (!tail)
                        at = find_pg(m, pg, old, k, u->budget + 1);
                if (at == m->npgs_seen) {
                        tail = true;
                        KB_PUSH(u->pgs_added, u->npgs_added, u->cappgs_added, i);
                        continue;
                }
                for (; k < at; k++)
                        u->gone[m->pg_job[k]->index] = 1;
                struct kb_job *j = u->pg_job[i] = m->pg_job[k++];
                j->pg = pg;
                if (!old)
                        u->dirty[j->index] |= KB__DIRTY_GROUP;
        }
        for (; k < m->npgs_seen; k++)
                u->gone[m->pg_job[k]->index] = 1;
        return true;
}

/* ---- jobs read again -------------------------------------------------------------- */

/* A job one of whose objects changed (dirty: which), read again as a
 * build reads it. */
static void update_job(struct kb_session *s, struct kb_job *j, uint8_t dirty)
{
        /* What its pods say (open.c's finish_jobs: the first pending one
         * whose placement fields are unusable, a reason of none), when
         * its PodGroup alone changed and nothing else spoke first. */
        const char *pods_say = NULL;
        bool known = !(dirty & KB__DIRTY_TASKS) && !j->invalid_reason;
        if (known)
                pods_say = j->invalid;
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
        if (known && !j->invalid)
                j->invalid = pods_say;
        /* The first pending pod whose placement fields are unusable (a
         * gang's hundreds of pods are not read again for nothing). */
        for (uint32_t k = 0; !known && k < j->ntasks && j->count[KB_TASK_PENDING] && !j->invalid;
             k++) {
                const struct kb_task *t = j->tasks[k];
                if (t->status == KB_TASK_PENDING && t->pod->invalid)
                        j->invalid = t->pod->invalid;
        }
}

/* The walks, then the jobs; false when the model is to be built. */
static bool update(struct kb__update *u)
{
        struct kb_session *s = u->s;
        struct kb_model *m = u->m;
        if (!walk_pgs(u) || !walk_pods(u) || !kb__update_add(u))
                return false;
        for (size_t i = 0; i < m->njobs; i++)
                if (u->dirty[i]) {
                        /* A group that does not exist yet says which pod
                         * waits for it: only a build says it right. */
                        if (!m->jobs[i]->pg && !kb__lone_job(m->jobs[i]))
                                return false;
                        update_job(s, m->jobs[i], u->dirty[i]);
                }
        /* The copies as built of the jobs changed (close put the others
         * back as they are), of all when the array changed. */
        for (size_t i = 0; i < m->njobs; i++)
                if (u->dirty[i] || u->restructured)
                        m->base_jobs[i] = *m->jobs[i];
        return true;
}

bool kb__model_update(struct kb_session *s, struct kb_model *m)
{
        const struct kb_snapshot *snap = s->snap;
        uint64_t gen = m->gen;
        if (snap->epoch != m->epoch || m->pool.total > 2 * m->pool_built ||
            !kb__model_update_nodes(s, m) || /* nodes changed in place: update_node.c */
            !same_objects((const void *const *)snap->queues, snap->nqueues, m->queues_seen,
                          m->nqueues_seen, gen) ||
            !same_objects((const void *const *)snap->priorityclasses, snap->npriorityclasses,
                          m->pcs_seen, m->npcs_seen, gen))
                return false;
        struct kb__update u = {.s = s, .m = m, .gen = gen};
        size_t most = snap->npods > m->npods_seen ? snap->npods : m->npods_seen;
        /* A quarter of the pods; a few dozen more, so that a small
         * cluster (a build of it costs little either way) updates too. */
        u.budget = most / 4 + 32;
        u.pg_job = kb_xcalloc(snap->npodgroups + 1, sizeof(*u.pg_job));
        u.dirty = kb_xcalloc(m->njobs + 1, 1);
        u.gone = kb_xcalloc(m->njobs + 1, 1);
        bool ok = update(&u);
        free(u.pods_added);
        free(u.pgs_added);
        free(u.dirty);
        free(u.gone);
        free(u.made);
        free(u.adds);
        if (!ok) {
                free(u.pod_task);
                free(u.pg_job);
                return false;
        }
        /* What a build leaves: versions count the tasks attached. */
        for (size_t i = 0; i < m->nnodes; i++)
                m->nodes[i].version = m->nodes[i].ntasks;
        if (u.pod_task) {
                free(m->pod_task);
                m->pod_task = u.pod_task;
        }
        free(m->pg_job);
        m->pg_job = u.pg_job;
        if (snap->npods != m->npods_seen) {
                free(m->pods_seen);
                free(m->assumed_seen);
                m->pods_seen = kb_xmalloc((snap->npods + 1) * sizeof(*m->pods_seen));
                m->assumed_seen = kb_xmalloc((snap->npods + 1) * sizeof(*m->assumed_seen));
        }
        if (snap->npodgroups != m->npgs_seen) {
                free(m->pgs_seen);
                m->pgs_seen = kb_xmalloc((snap->npodgroups + 1) * sizeof(*m->pgs_seen));
        }
        m->npods_seen = snap->npods;
        m->npgs_seen = snap->npodgroups;
        if (snap->npods)
                memcpy(m->pods_seen, snap->pods, snap->npods * sizeof(*m->pods_seen));
        if (snap->npodgroups)
                memcpy(m->pgs_seen, snap->podgroups, snap->npodgroups * sizeof(*m->pgs_seen));
        for (size_t i = 0; i < snap->npods; i++)
                m->assumed_seen[i] = snap->assumed_node ? snap->assumed_node[i] : NULL;
        m->updates++;
        return true;
}

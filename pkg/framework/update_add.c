/*
 * What an update (update.c) adds: the jobs of PodGroups created since the
 * model's snapshot, the tasks of pods created, in the snapshot's order
 * after every task the model has (the highest indices, so each job's
 * list and each node's stay in task order by appending), and the job
 * array as a build sorts it, PodGroups' jobs by name and then the jobs of
 * pods without a group by name, with the jobs made merged in and the ones
 * left without a PodGroup or pods dropped.  A pod that waits for a group
 * not there, a PodGroup over pods that waited for it, two objects of one
 * name, or a task array out of room: only a build says those right.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* Where the job named name sorts in jobs[lo, hi) (by name, as built). */
static size_t job_pos(struct kb_job *const *jobs, size_t lo, size_t hi, const char *name)
{
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(jobs[mid]->name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The model's jobs with PodGroups: jobs[0, npg). */
static size_t pg_jobs(const struct kb_model *m)
{
        size_t lo = 0, hi = m->njobs;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->jobs[mid]->pg)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* A job (not dropped) of the model named name in jobs[lo, hi), of a group
 * (grouped) or a lone pod; NULL when none. */
static struct kb_job *find_job(struct kb__update *u, size_t lo, size_t hi, const char *name,
                               bool grouped)
{
        struct kb_model *m = u->m;
        for (size_t x = job_pos(m->jobs, lo, hi, name); x < hi; x++) {
                struct kb_job *j = m->jobs[x];
                if (strcmp(j->name, name) != 0)
                        break;
                if (!u->gone[x] && (grouped ? j->pg || !kb__lone_job(j) : kb__lone_job(j)))
                        return j;
        }
        return NULL;
}

static int cmp_job_name(const void *a, const void *b)
{
        return strcmp((*(struct kb_job *const *)a)->name, (*(struct kb_job *const *)b)->name);
}

/* The new PodGroups' jobs, sorted by name. */
static bool add_pgs(struct kb__update *u)
{
        struct kb_session *s = u->s;
        struct kb_model *m = u->m;
        size_t npg = pg_jobs(m);
        for (size_t x = 0; x < npg; x++)
                /* Its pods would have a group again or lose it. */
                if (u->gone[x] && m->jobs[x]->ntasks)
                        return false;
        if (u->npgs_added && m->nforeign)
                return false; /* pods of another scheduler may count on it */
        for (size_t a = 0; a < u->npgs_added; a++) {
                size_t i = u->pgs_added[a];
                const struct kb_podgroup *pg = s->snap->podgroups[i];
                const char *ns = kb_meta_ns(&pg->meta);
                char *name = kb_pool_path(&m->pool, ns, pg->meta.name);
                /* Twice in the snapshot, or pods waiting for it. */
                if (find_job(u, 0, npg, name, true) || find_job(u, npg, m->njobs, name, true))
                        return false;
                struct kb_job *j = kb_pool_alloc(&m->pool, sizeof(*j));
                j->name = name;
                j->tasks = kb_pool_alloc(&m->pool, sizeof(*j->tasks));
                kb__job_from_pg(s, j, pg);
                u->pg_job[i] = j;
                KB_PUSH(u->made, u->nmade, u->capmade, j);
        }
        u->nmade_pg = u->nmade;
        if (u->nmade > 1)
                qsort(u->made, u->nmade, sizeof(*u->made), cmp_job_name);
        for (size_t x = 1; x < u->nmade; x++)
                if (strcmp(u->made[x - 1]->name, u->made[x]->name) == 0)
                        return false;
        return true;
}

/* A new PodGroup's job named name, or NULL. */
static struct kb_job *find_made(struct kb__update *u, const char *name)
{
        size_t x = job_pos(u->made, 0, u->nmade_pg, name);
        return x < u->nmade_pg && strcmp(u->made[x]->name, name) == 0 ? u->made[x] : NULL;
}

/* The job pod p's new task t joins, made when a build would make it
 * (a lone pod's); NULL when only a build says it right. */
static struct kb_job *job_of(struct kb__update *u, size_t npg, const struct kb_pod *p,
                             struct kb_task *t)
{
        struct kb_session *s = u->s;
        struct kb_model *m = u->m;
        bool workload;
        const char *group = kb__pod_group(s->snap, p, &workload);
        if (group) {
                char *name = kb_pool_path(&s->pool, kb_meta_ns(&p->meta), group);
                struct kb_job *j = find_job(u, 0, npg, name, true);
                /* A group that does not exist says which pod waits for it
                 * first: a build. */
                return j ? j : find_made(u, name);
        }
        /* Two pods of one name (restructure finds two new ones). */
        if (find_job(u, npg, m->njobs, t->name, false))
                return NULL;
        struct kb_job *j = kb_pool_alloc(&m->pool, sizeof(*j));
        j->name = t->name;
        j->namespace = kb_meta_ns(&p->meta);
        j->queue_name = s->snap->default_queue ? s->snap->default_queue : "default";
        j->min_available = 1;
        j->creation = p->meta.creation;
        j->priority = t->priority;
        KB_PUSH(u->made, u->nmade, u->capmade, j);
        return j;
}

/* The new pods' tasks, appended in snapshot order, each with its job. */
static bool add_pods(struct kb__update *u)
{
        struct kb_session *s = u->s;
        struct kb_model *m = u->m;
        const struct kb_snapshot *snap = s->snap;
        size_t npg = pg_jobs(m);
        for (size_t a = 0; a < u->npods_added; a++) {
                size_t i = u->pods_added[a];
                const struct kb_pod *p = snap->pods[i];
                enum kb_task_status st;
                struct kb_node_info *node;
                bool mine = kb__pod_place(s, i, &st, &node);
                if (!mine && !node) {
                        if (kb__counts_foreign(p))
                                return false;
                        kb__update_map_pod(u, i, 0);
                        continue;
                }
                if (m->ntasks >= m->taskcap)
                        return false;
                struct kb_task *t = &m->tasks[m->ntasks];
                memset(t, 0, sizeof(*t));
                t->index = (uint32_t)m->ntasks++;
                t->name = kb_pool_path(&m->pool, kb_meta_ns(&p->meta), p->meta.name);
                kb__task_fields(s, t, p, st);
                kb__update_map_pod(u, i, t->index + 1);
                if (node)
                        kb__node_attach_ordered(s, node, t);
                if (!mine)
                        continue;
                struct kb_job *j = job_of(u, npg, p, t);
                if (!j)
                        return false;
                struct kb__update_add add = {j, t};
                KB_PUSH(u->adds, u->nadds, u->capadds, add);
        }
        return true;
}

static int cmp_added(const void *a, const void *b)
{
        const struct kb__update_add *x = a, *y = b;
        if (x->j != y->j)
                return (uintptr_t)x->j < (uintptr_t)y->j ? -1 : 1;
        return x->t->index < y->t->index ? -1 : x->t->index > y->t->index;
}

/* The added tasks into their jobs' lists (after the job's others: their
 * indices are the highest), counted; each job to be read again (its pods
 * and its count of them say whether it can run at all). */
static void join_jobs(struct kb__update *u)
{
        if (u->nadds > 1)
                qsort(u->adds, u->nadds, sizeof(*u->adds), cmp_added);
        for (size_t a = 0, b; a < u->nadds; a = b) {
                struct kb_job *j = u->adds[a].j;
                for (b = a; b < u->nadds && u->adds[b].j == j; b++)
                        ;
                struct kb_task **v =
                    kb_pool_alloc(&u->m->pool, (j->ntasks + (b - a) + 1) * sizeof(*v));
                if (j->ntasks)
                        memcpy(v, j->tasks, j->ntasks * sizeof(*v));
                j->tasks = v;
                /* A job made by this update is read again in any case. */
                if (j->index < u->m->njobs && u->m->jobs[j->index] == j)
                        u->dirty[j->index] |= KB__DIRTY_TASKS;
                for (size_t x = a; x < b; x++) {
                        struct kb_task *t = u->adds[x].t;
                        t->job = j;
                        j->tasks[j->ntasks++] = t;
                        kb__job_count(j, t, 1);
                }
        }
}

/* The model's jobs with the dropped ones out and the made ones merged in
 * where a build sorts them; dirty follows them (every made job is). */
static bool restructure(struct kb__update *u)
{
        struct kb_model *m = u->m;
        size_t npg = pg_jobs(m), nold = 0;
        for (size_t x = 0; x < m->njobs; x++) {
                /* A lone pod's job or a missing group's without pods. */
                if (!m->jobs[x]->pg && !m->jobs[x]->ntasks)
                        u->gone[x] = 1;
                nold += !u->gone[x];
        }
        if (!u->nmade && nold == m->njobs)
                return true;
        size_t n = nold + u->nmade, w = 0;
        /* The model's own (not its pool's: updates would pile them up). */
        struct kb_job **v = kb_xmalloc((n + 1) * sizeof(*v));
        uint8_t *dirty = kb_xcalloc(n + 1, 1);
        /* Two sections, each a merge of the old (sorted) and made
         * (sorted) by name; equal names sort as qsort happens to, so
         * only a build says which comes first. */
        size_t ranges[2][4] = {{0, npg, 0, u->nmade_pg}, {npg, m->njobs, u->nmade_pg, u->nmade}};
        if (u->nmade > u->nmade_pg + 1)
                qsort(u->made + u->nmade_pg, u->nmade - u->nmade_pg, sizeof(*u->made),
                      cmp_job_name);
        bool ok = true;
        for (size_t y = u->nmade_pg + 1; y < u->nmade; y++)
                if (strcmp(u->made[y - 1]->name, u->made[y]->name) == 0)
                        ok = false;
        for (int r = 0; r < 2; r++) {
                size_t x = ranges[r][0], xe = ranges[r][1], y = ranges[r][2], ye = ranges[r][3];
                while (x < xe || y < ye) {
                        if (x < xe && u->gone[x]) {
                                x++;
                                continue;
                        }
                        int c = x == xe   ? 1
                                : y == ye ? -1
                                          : strcmp(m->jobs[x]->name, u->made[y]->name);
                        if (c == 0)
                                ok = false;
                        if (c <= 0) {
                                dirty[w] = u->dirty[x];
                                v[w++] = m->jobs[x++];
                        } else {
                                dirty[w] = KB__DIRTY_GROUP | KB__DIRTY_TASKS;
                                v[w++] = u->made[y++];
                        }
                }
        }
        for (size_t x = 0; x < n; x++)
                v[x]->index = (uint32_t)x;
        free(m->jobs_own);
        m->jobs = m->jobs_own = v;
        m->njobs = n;
        free(u->dirty);
        u->dirty = dirty;
        free(m->base_jobs);
        m->base_jobs = kb_xmalloc((n + 1) * sizeof(*m->base_jobs));
        u->restructured = true;
        return ok;
}

bool kb__update_add(struct kb__update *u)
{
        if (!add_pgs(u) || !add_pods(u))
                return false;
        join_jobs(u);
        return restructure(u);
}

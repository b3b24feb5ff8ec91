/*
 * Extension points: registration and the dispatchers that combine plugin
 * answers across tiers.  Each dispatcher's rule is Volcano's
 * (pkg/scheduler/framework/session_plugins.go) and is stated above it.
 *
 * A plugin registers during its open(); the registration records the tier
 * and drops the callback when the plugin's conf disables that point
 * (enableJobOrder: false and friends), so the dispatchers never look at
 * flags.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* ---- registration ------------------------------------------------------------ */

void kb__points_begin(struct kb_session *s, int tier, const struct kb_plugin_conf *pc)
{
        s->cur_tier = tier;
        s->cur_plugin = pc;
}

void kb__points_release(struct kb_session *s)
{
        for (int p = 0; p < KB_NPOINTS; p++) {
                free(s->cb[p].v);
                s->cb[p].v = NULL;
                s->cb[p].n = s->cb[p].cap = 0;
        }
}

static void add(struct kb_session *s, enum kb_point p, union kb_cb_fn fn, void *arg, unsigned flags)
{
        const struct kb_plugin_conf *pc = s->cur_plugin;
        if (pc && !pc->enabled[p])
                return;
        struct kb_cb cb = {fn, arg, pc ? pc->name : NULL, s->cur_tier, flags};
        KB_PUSH(s->cb[p].v, s->cb[p].n, s->cb[p].cap, cb);
}

#define KB_ON_DEF_PLAIN(E, name, fnt)                                                              \
        void kb_on_##name(struct kb_session *s, fnt fn, void *arg)                                 \
        {                                                                                          \
                add(s, KB_POINT_##E, (union kb_cb_fn){.name = fn}, arg, 0);                        \
        }
#define KB_ON_DEF_FLAGS(E, name, fnt)                                                              \
        void kb_on_##name(struct kb_session *s, fnt fn, void *arg, unsigned flags)                 \
        {                                                                                          \
                add(s, KB_POINT_##E, (union kb_cb_fn){.name = fn}, arg, flags);                    \
        }
#define XX(E, name, fnt, reg, flag, ret, disp, params) KB_ON_DEF_##reg(E, name, fnt)
KB_POINTS(XX)
#undef XX

/* Counts, per candidate, how many of the k tasks in picked name it (picked
 * is a subset of cand).  A candidate's index is found through a scan only
 * when the plugin did not keep the candidates' order. */
static void mark(struct kb_task *const *cand, size_t n, struct kb_task *const *picked, size_t k,
                 unsigned *hits)
{
        size_t c = 0;
        for (size_t a = 0; a < k; a++) {
                size_t start = c;
                while (c < n && cand[c] != picked[a])
                        c++;
                if (c == n)
                        for (c = 0; c < start && cand[c] != picked[a]; c++)
                                ;
                if (c < n && cand[c] == picked[a])
                        hits[c]++;
                c = c < n ? c + 1 : 0;
        }
}

/* ---- orders --------------------------------------------------------------- */

static int cmp_double(double a, double b)
{
        return a < b ? -1 : a > b ? 1 : 0;
}

/* Jobs: the first non-zero answer, in tier then plugin order, wins.  With
 * no opinion, the earlier creation time, then namespace/name (Volcano:
 * then UID; a name is stable across restarts and readable in tests). */
int kb_job_order(struct kb_session *s, const struct kb_job *l, const struct kb_job *r)
{
        EACH_CB (s, KB_POINT_JOB_ORDER, e) {
                int c = e->fn.job_order(e->arg, l, r);
                if (c)
                        return c;
        }
        int c = cmp_double(l->creation, r->creation);
        return c ? c : strcmp(l->name, r->name);
}

/* A gang's sub-groups: as jobs; with no opinion, the first match value,
 * then the id (Volcano's Session.SubJobOrderFn: MatchIndex, then UID). */
int kb_subgroup_order(struct kb_session *s, const struct kb_subgroup_info *l,
                      const struct kb_subgroup_info *r)
{
        EACH_CB (s, KB_POINT_SUBGROUP_ORDER, e) {
                int c = e->fn.subgroup_order(e->arg, l, r);
                if (c)
                        return c;
        }
        if (l->match_index != r->match_index)
                return l->match_index < r->match_index ? -1 : 1;
        return strcmp(l->id, r->id);
}

/* Queues: as jobs; with no opinion, creation time, then name. */
int kb_queue_order(struct kb_session *s, const struct kb_queue_info *l,
                   const struct kb_queue_info *r)
{
        EACH_CB (s, KB_POINT_QUEUE_ORDER, e) {
                int c = e->fn.queue_order(e->arg, l, r);
                if (c)
                        return c;
        }
        double lc = l->queue ? l->queue->meta.creation : 0;
        double rc = r->queue ? r->queue->meta.creation : 0;
        int c = cmp_double(lc, rc);
        return c ? c : strcmp(l->name, r->name);
}

/* Victims' queues (Volcano's VictimQueueOrderFn): the first non-zero
 * answer; with no opinion 0, and the caller falls back on the reverse of
 * queue order. */
int kb_victim_queue_order(struct kb_session *s, const struct kb_queue_info *l,
                          const struct kb_queue_info *r, const struct kb_queue_info *preemptor)
{
        EACH_CB (s, KB_POINT_VICTIM_QUEUE_ORDER, e) {
                int c = e->fn.victim_queue_order(e->arg, l, r, preemptor);
                if (c)
                        return c;
        }
        return 0;
}

/* t's pod-name index, read from the name on first use and kept in the
 * task: the session's tasks are its own, never const objects, and task
 * order runs on the session's thread.  Reading it for every task when the
 * session is built cost the idle session 6%; reading it at every
 * comparison cost W2's first session 14%. */
static int64_t name_index(const struct kb_task *t)
{
        if (t->name_index == KB_NAME_INDEX_UNREAD)
                ((struct kb_task *)t)->name_index =
                    (int32_t)(t->pod->meta.name ? kb__pod_name_index(t->pod->meta.name) : -1);
        return t->name_index;
}

/* Tasks: as jobs; with no opinion, Volcano's CompareTask: the lower
 * pod-name index first when both names have one and they differ, else the
 * earlier creation, then uid (then name, for tasks without uids). */
int kb_task_order(struct kb_session *s, const struct kb_task *l, const struct kb_task *r)
{
        EACH_CB (s, KB_POINT_TASK_ORDER, e) {
                int c = e->fn.task_order(e->arg, l, r);
                if (c)
                        return c;
        }
        int64_t li = name_index(l), ri = name_index(r);
        if (li >= 0 && ri >= 0 && li != ri)
                return li < ri ? -1 : 1;
        int c = cmp_double(l->pod->meta.creation, r->pod->meta.creation);
        if (c)
                return c;
        c = strcmp(l->pod->meta.uid ? l->pod->meta.uid : "",
                   r->pod->meta.uid ? r->pod->meta.uid : "");
        return c ? c : strcmp(l->name, r->name);
}

/* ---- node-level ------------------------------------------------------------ */

/* The predicates alone (what the node-selection caches keep per class):
 * every one must pass; the first failure is the answer. */
const char *kb__predicate_static(struct kb_session *s, const struct kb_task *t,
                                 const struct kb_node_info *n)
{
        EACH_CB (s, KB_POINT_PREDICATE, e) {
                const char *why = e->fn.predicate(e->arg, t, n);
                if (why)
                        return why;
        }
        return NULL;
}

/* Every placement filter must pass; the first failure is the answer. */
const char *kb_filter_check(struct kb_session *s, const struct kb_task *t,
                            const struct kb_node_info *n)
{
        EACH_CB (s, KB_POINT_FILTER, e) {
                const char *why = e->fn.filter.check(e->arg, t, n);
                if (why)
                        return why;
        }
        return NULL;
}

/* The predicates, then the placement filters: the first failure is the
 * answer (Volcano runs a node's static filters first, then those that
 * look at other pods). */
const char *kb_predicate(struct kb_session *s, const struct kb_task *t,
                         const struct kb_node_info *n)
{
        const char *why = kb__predicate_static(s, t, n);
        return why ? why : kb_filter_check(s, t, n);
}

/* Scores add up across every plugin and tier (weights are applied by the
 * plugins themselves from their arguments). */
double kb_node_order(struct kb_session *s, const struct kb_task *t, const struct kb_node_info *n)
{
        double score = 0;
        EACH_CB (s, KB_POINT_NODE_ORDER, e)
                score += e->fn.node_order(e->arg, t, n);
        return score;
}

/* Batch scores add up too: each plugin adds its score per node into
 * scores[] (computed over the candidates, as Volcano does). */
void kb_batch_node_order(struct kb_session *s, const struct kb_task *t,
                         struct kb_node_info *const *nodes, size_t n, double *scores)
{
        EACH_CB (s, KB_POINT_BATCH_NODE_ORDER, e)
                e->fn.batch_node_order.score(e->arg, t, nodes, n, scores);
}

/* ---- jobs ------------------------------------------------------------------ */

/* Every job-ready answer must be true. */
bool kb_job_ready(struct kb_session *s, const struct kb_job *j)
{
        EACH_CB (s, KB_POINT_JOB_READY, e)
                if (!e->fn.job_ready(e->arg, j))
                        return false;
        return true;
}

/* Votes (Volcano's JobPipelined and JobEnqueueable): any reject is final;
 * at the end of a tier in which some plugin permitted, the answer is yes;
 * when every plugin abstains, yes. */
static bool vote(struct kb_session *s, enum kb_point p, const struct kb_job *j)
{
        const struct kb_cb_list *list = &s->cb[p];
        bool permitted = false;
        for (size_t i = 0; i < list->n; i++) {
                const struct kb_cb *e = &list->v[i];
                kb_job_vote_fn fn =
                    p == KB_POINT_JOB_PIPELINED ? e->fn.job_pipelined : e->fn.job_enqueueable;
                int v = fn(e->arg, j);
                if (v < 0)
                        return false;
                if (v > 0)
                        permitted = true;
                bool tier_end = i + 1 == list->n || list->v[i + 1].tier != e->tier;
                if (tier_end && permitted)
                        return true;
        }
        return true;
}

bool kb_job_pipelined(struct kb_session *s, const struct kb_job *j)
{
        return vote(s, KB_POINT_JOB_PIPELINED, j);
}

bool kb_job_enqueueable(struct kb_session *s, const struct kb_job *j)
{
        return vote(s, KB_POINT_JOB_ENQUEUEABLE, j);
}

/* The first plugin that finds the job invalid gives the reason (a job the
 * session could not build, with no group or no queue, is invalid first). */
const char *kb_job_valid(struct kb_session *s, const struct kb_job *j, const char **reason)
{
        const char *dummy;
        if (!reason)
                reason = &dummy;
        if (j->invalid) {
                *reason = j->invalid_reason;
                return j->invalid;
        }
        EACH_CB (s, KB_POINT_JOB_VALID, e) {
                *reason = KB_WHY_TASKS;
                const char *why = e->fn.job_valid(e->arg, j, reason);
                if (why)
                        return why;
        }
        *reason = NULL;
        return NULL;
}

/* Every plugin is told, in order; enqueue calls this only once every vote
 * admitted the job, so that reservations are charged only for admitted
 * jobs (Volcano's JobEnqueued). */
void kb_job_enqueued(struct kb_session *s, const struct kb_job *j)
{
        EACH_CB (s, KB_POINT_JOB_ENQUEUED, e)
                e->fn.job_enqueued(e->arg, j);
}

/* Every plugin is told, in order (the reservation plugin plans for the
 * first gangs allocate could not place). */
void kb_job_unplaced(struct kb_session *s, const struct kb_job *j)
{
        EACH_CB (s, KB_POINT_JOB_UNPLACED, e)
                e->fn.job_unplaced(e->arg, j);
}

/* The first tier in which some plugin answers decides, all of its answers
 * must be true; with no answer anywhere, false (Volcano's JobStarving). */
bool kb_job_starving(struct kb_session *s, const struct kb_job *j)
{
        const struct kb_cb_list *list = &s->cb[KB_POINT_JOB_STARVING];
        for (size_t i = 0; i < list->n; i++) {
                if (!list->v[i].fn.job_starving(list->v[i].arg, j))
                        return false;
                if (i + 1 == list->n || list->v[i + 1].tier != list->v[i].tier)
                        return true;
        }
        return false;
}

/* ---- queues ---------------------------------------------------------------- */

/* Any plugin finding the queue overused is enough. */
bool kb_overused(struct kb_session *s, const struct kb_queue_info *q)
{
        EACH_CB (s, KB_POINT_OVERUSED, e)
                if (e->fn.overused(e->arg, q))
                        return true;
        return false;
}

/* Every answer must be true. */
bool kb_allocatable(struct kb_session *s, const struct kb_queue_info *q, const struct kb_task *t)
{
        EACH_CB (s, KB_POINT_ALLOCATABLE, e)
                if (!e->fn.allocatable(e->arg, q, t))
                        return false;
        return true;
}

/* Every answer must be true. */
bool kb_preemptive(struct kb_session *s, const struct kb_queue_info *q, const struct kb_task *t)
{
        EACH_CB (s, KB_POINT_PREEMPTIVE, e)
                if (!e->fn.preemptive(e->arg, q, t))
                        return false;
        return true;
}

/* ---- victims --------------------------------------------------------------- */

/*
 * Preemptable.  First the vetoes: a candidate that a plugin registered with
 * KB_VETO does not name is out, in every tier (so conformance protects
 * kube-system whatever a later tier thinks).  Then, among the rest, Volcano
 * master's rule:
 * within a tier, each plugin with an opinion narrows the set — the first
 * one's victims start it, later ones intersect (keeping the first one's
 * order); a plugin that names no victim at all empties the set and ends
 * the tier.  A tier that ends with victims decides; an empty one passes the
 * question to the next tier.  As in Volcano, an intersection that comes out
 * empty also lets the tier's next plugin start the set afresh.
 */
static size_t victims(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *all, size_t nall, struct kb_task **out)
{
        const struct kb_cb_list *list = &s->cb[KB_POINT_PREEMPTABLE];
        if (nall == 0 || list->n == 0)
                return 0;
        struct kb_task **buf = kb_xmalloc(nall * sizeof(*buf));
        struct kb_task **cand = kb_xmalloc(nall * sizeof(*cand));
        unsigned *hits = kb_xcalloc(nall, sizeof(*hits));
        unsigned vetoes = 0;
        EACH_CB (s, KB_POINT_PREEMPTABLE, e) {
                if (!(e->flags & KB_VETO))
                        continue;
                int k = e->fn.preemptable(e->arg, preemptor, all, nall, buf);
                if (k < 0)
                        continue;
                vetoes++;
                mark(all, nall, buf, (size_t)k, hits);
        }
        size_t n = 0;
        for (size_t c = 0; c < nall; c++)
                if (hits[c] == vetoes)
                        cand[n++] = all[c];
        free(hits);
        size_t nv = 0, i = 0;
        while (n && i < list->n) {
                int tier = list->v[i].tier;
                for (; i < list->n && list->v[i].tier == tier; i++) {
                        const struct kb_cb *e = &list->v[i];
                        int k = e->fn.preemptable(e->arg, preemptor, cand, n, buf);
                        if (k < 0)
                                continue;
                        if (k == 0) {
                                nv = 0;
                                /* the rest of the tier is not asked */
                                while (i + 1 < list->n && list->v[i + 1].tier == tier)
                                        i++;
                                continue;
                        }
                        if (nv == 0) {
                                memcpy(out, buf, (size_t)k * sizeof(*out));
                                nv = (size_t)k;
                                continue;
                        }
                        size_t kept = 0;
                        for (size_t v = 0; v < nv; v++)
                                for (int c = 0; c < k; c++)
                                        if (out[v] == buf[c]) {
                                                out[kept++] = out[v];
                                                break;
                                        }
                        nv = kept;
                }
                if (nv)
                        break;
        }
        free(buf);
        free(cand);
        return nv;
}

size_t kb_preemptable(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *candidates, size_t n, struct kb_task **out)
{
        return victims(s, preemptor, candidates, n, out);
}

/*
 * Reclaimable: every plugin with an opinion, in every tier, must give a
 * candidate up (an intersection across tiers; one naming none means none).
 * kbatch differs from Volcano here on purpose: with Volcano's rule the
 * first tier decides, and with its default tiers gang and conformance
 * (tier 1) decide alone, so proportion's rule that only queues above their
 * deserved share lose tasks never gets a say.
 */
size_t kb_reclaimable(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *cand, size_t n, struct kb_task **out)
{
        const struct kb_cb_list *list = &s->cb[KB_POINT_RECLAIMABLE];
        if (n == 0 || list->n == 0)
                return 0;
        struct kb_task **buf = kb_xmalloc(n * sizeof(*buf));
        unsigned *hits = kb_xcalloc(n, sizeof(*hits));
        unsigned opinions = 0;
        size_t result = 0;
        EACH_CB (s, KB_POINT_RECLAIMABLE, e) {
                int k = e->fn.reclaimable(e->arg, preemptor, cand, n, buf);
                if (k < 0)
                        continue;
                opinions++;
                mark(cand, n, buf, (size_t)k, hits);
        }
        for (size_t c = 0; opinions && c < n; c++)
                if (hits[c] == opinions)
                        out[result++] = cand[c];
        free(buf);
        free(hits);
        return result;
}

/*
 * Victim tasks (Volcano's VictimTasks, for rescheduling): within a tier the
 * plugins' choices add up (a union: different plugins pick different
 * victims, and a task named twice is taken once); the first tier that names
 * any victim decides; out keeps the candidates' order.
 */
size_t kb_victim_tasks(struct kb_session *s, struct kb_task *const *cand, size_t n,
                       struct kb_task **out)
{
        const struct kb_cb_list *list = &s->cb[KB_POINT_VICTIM_TASKS];
        if (n == 0 || list->n == 0)
                return 0;
        struct kb_task **buf = kb_xmalloc(n * sizeof(*buf));
        unsigned *hits = kb_xcalloc(n, sizeof(*hits));
        size_t result = 0, i = 0;
        while (i < list->n && result == 0) {
                int tier = list->v[i].tier;
                for (; i < list->n && list->v[i].tier == tier; i++) {
                        const struct kb_cb *e = &list->v[i];
                        int k = e->fn.victim_tasks(e->arg, cand, n, buf);
                        if (k > 0)
                                mark(cand, n, buf, (size_t)k, hits);
                }
                for (size_t c = 0; c < n; c++)
                        if (hits[c])
                                out[result++] = cand[c];
        }
        free(buf);
        free(hits);
        return result;
}

/* ---- events ------------------------------------------------------------------ */

/* Every handler, in registration order: allocate after a task took room
 * (allocated or pipelined), deallocate after it gave room back. */
void kb_event(struct kb_session *s, const struct kb_task *t, bool allocated)
{
        EACH_CB (s, KB_POINT_EVENT, e) {
                kb_task_event_fn fn = allocated ? e->fn.event.allocate : e->fn.event.deallocate;
                if (fn)
                        fn(e->arg, t);
        }
}

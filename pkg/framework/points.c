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

static bool point_enabled(struct kb_session *s, enum kb_point p)
{
        return !s->cur_plugin || s->cur_plugin->enabled[p] != 0;
}

#define REGISTER(list, point, fnv, argv, flagsv)                                                   \
        do {                                                                                       \
                if (!point_enabled(s, point))                                                      \
                        break;                                                                     \
                if (s->list.n >= s->list.cap)                                                      \
                        kb_grow((void **)&s->list.v, &s->list.cap, s->list.n + 1,                  \
                                sizeof(*s->list.v));                                               \
                s->list.v[s->list.n].fn = (fnv);                                                   \
                s->list.v[s->list.n].arg = (argv);                                                 \
                s->list.v[s->list.n].tier = s->cur_tier;                                           \
                s->list.v[s->list.n].flags = (flagsv);                                             \
                s->list.n++;                                                                       \
        } while (0)

void kb_on_job_order(struct kb_session *s, kb_job_order_fn fn, void *arg)
{
        REGISTER(job_order, KB_POINT_JOB_ORDER, fn, arg, 0);
}
void kb_on_queue_order(struct kb_session *s, kb_queue_order_fn fn, void *arg)
{
        REGISTER(queue_order, KB_POINT_QUEUE_ORDER, fn, arg, 0);
}
void kb_on_task_order(struct kb_session *s, kb_task_order_fn fn, void *arg)
{
        REGISTER(task_order, KB_POINT_TASK_ORDER, fn, arg, 0);
}
void kb_on_namespace_order(struct kb_session *s, kb_namespace_order_fn fn, void *arg)
{
        REGISTER(namespace_order, KB_POINT_NAMESPACE_ORDER, fn, arg, 0);
}
void kb_on_predicate(struct kb_session *s, kb_predicate_fn fn, void *arg, unsigned flags)
{
        REGISTER(predicate, KB_POINT_PREDICATE, fn, arg, flags);
}
void kb_on_node_order(struct kb_session *s, kb_node_order_fn fn, void *arg, unsigned flags)
{
        REGISTER(node_order, KB_POINT_NODE_ORDER, fn, arg, flags);
}
void kb_on_batch_node_order(struct kb_session *s, kb_batch_node_order_fn fn, void *arg)
{
        REGISTER(batch_node_order, KB_POINT_BATCH_NODE_ORDER, fn, arg, 0);
}
void kb_on_job_ready(struct kb_session *s, kb_job_bool_fn fn, void *arg)
{
        REGISTER(job_ready, KB_POINT_JOB_READY, fn, arg, 0);
}
void kb_on_job_pipelined(struct kb_session *s, kb_job_vote_fn fn, void *arg)
{
        REGISTER(job_pipelined, KB_POINT_JOB_PIPELINED, fn, arg, 0);
}
void kb_on_job_valid(struct kb_session *s, kb_job_valid_fn fn, void *arg)
{
        REGISTER(job_valid, KB_POINT_JOB_VALID, fn, arg, 0);
}
void kb_on_job_enqueueable(struct kb_session *s, kb_job_vote_fn fn, void *arg)
{
        REGISTER(job_enqueueable, KB_POINT_JOB_ENQUEUEABLE, fn, arg, 0);
}
void kb_on_job_enqueued(struct kb_session *s, kb_job_event_fn fn, void *arg)
{
        REGISTER(job_enqueued, KB_POINT_JOB_ENQUEUED, fn, arg, 0);
}
void kb_on_job_starving(struct kb_session *s, kb_job_bool_fn fn, void *arg)
{
        REGISTER(job_starving, KB_POINT_JOB_STARVING, fn, arg, 0);
}
void kb_on_overused(struct kb_session *s, kb_queue_bool_fn fn, void *arg)
{
        REGISTER(overused, KB_POINT_OVERUSED, fn, arg, 0);
}
void kb_on_allocatable(struct kb_session *s, kb_allocatable_fn fn, void *arg)
{
        REGISTER(allocatable, KB_POINT_ALLOCATABLE, fn, arg, 0);
}
void kb_on_preemptable(struct kb_session *s, kb_victims_fn fn, void *arg)
{
        REGISTER(preemptable, KB_POINT_PREEMPTABLE, fn, arg, 0);
}
void kb_on_reclaimable(struct kb_session *s, kb_victims_fn fn, void *arg)
{
        REGISTER(reclaimable, KB_POINT_RECLAIMABLE, fn, arg, 0);
}
void kb_on_preemptive(struct kb_session *s, kb_allocatable_fn fn, void *arg)
{
        REGISTER(preemptive, KB_POINT_PREEMPTIVE, fn, arg, 0);
}

void kb_on_event(struct kb_session *s, kb_task_event_fn allocate, kb_task_event_fn deallocate,
                 void *arg)
{
        struct kb_event_cb cb = {allocate, deallocate, arg};
        KB_PUSH(s->events, s->nevents, s->capevents, cb);
}

/* ---- orders --------------------------------------------------------------- */

static int cmp_double(double a, double b)
{
        return a < b ? -1 : a > b ? 1 : 0;
}

/* Orders: the first non-zero answer, in tier then plugin order, wins.  With
 * no opinion, jobs go by creation time, then namespace/name (Volcano: then
 * UID; a name is stable across restarts and readable in tests). */
int kb_job_order(struct kb_session *s, const struct kb_job *l, const struct kb_job *r)
{
        for (size_t i = 0; i < s->job_order.n; i++) {
                int c = s->job_order.v[i].fn(s->job_order.v[i].arg, l, r);
                if (c)
                        return c;
        }
        int c = cmp_double(l->creation, r->creation);
        return c ? c : strcmp(l->name, r->name);
}

/* Queues fall back to creation time, then name. */
int kb_queue_order(struct kb_session *s, const struct kb_queue_info *l,
                   const struct kb_queue_info *r)
{
        for (size_t i = 0; i < s->queue_order.n; i++) {
                int c = s->queue_order.v[i].fn(s->queue_order.v[i].arg, l, r);
                if (c)
                        return c;
        }
        double lc = l->queue ? l->queue->meta.creation : 0;
        double rc = r->queue ? r->queue->meta.creation : 0;
        int c = cmp_double(lc, rc);
        return c ? c : strcmp(l->name, r->name);
}

/*
 * The pod-name index: the part after the last '-' when the name has at
 * least three '-'-separated parts ("job-worker-3" -> 3), as Volcano's
 * GetPodIndexUnderTask.  Returns false when there is none or it is not a
 * number.
 */
static bool pod_index(const char *name, long *out)
{
        int dashes = 0;
        const char *last = NULL;
        for (const char *p = name; *p; p++)
                if (*p == '-') {
                        dashes++;
                        last = p;
                }
        if (dashes < 2 || !last[1])
                return false;
        long v = 0;
        for (const char *p = last + 1; *p; p++) {
                if (*p < '0' || *p > '9' || v > 100000000)
                        return false;
                v = v * 10 + (*p - '0');
        }
        *out = v;
        return true;
}

/* Tasks, with no plugin opinion: higher priority first, then Volcano's
 * CompareTask (the lower pod-name index first when both names have one and
 * they differ, else the earlier creation), then uid. */
int kb_task_order(struct kb_session *s, const struct kb_task *l, const struct kb_task *r)
{
        for (size_t i = 0; i < s->task_order.n; i++) {
                int c = s->task_order.v[i].fn(s->task_order.v[i].arg, l, r);
                if (c)
                        return c;
        }
        if (l->priority != r->priority)
                return l->priority > r->priority ? -1 : 1;
        long li, ri;
        if (pod_index(l->pod->meta.name, &li) && pod_index(r->pod->meta.name, &ri) && li != ri)
                return li < ri ? -1 : 1;
        int c = cmp_double(l->pod->meta.creation, r->pod->meta.creation);
        if (c)
                return c;
        c = strcmp(l->pod->meta.uid ? l->pod->meta.uid : "",
                   r->pod->meta.uid ? r->pod->meta.uid : "");
        return c ? c : strcmp(l->name, r->name);
}

int kb_namespace_order(struct kb_session *s, const char *l, const char *r)
{
        for (size_t i = 0; i < s->namespace_order.n; i++) {
                int c = s->namespace_order.v[i].fn(s->namespace_order.v[i].arg, l, r);
                if (c)
                        return c;
        }
        return strcmp(l, r);
}

/* ---- node-level ------------------------------------------------------------ */

/* Every predicate must pass; the first failure is the answer. */
const char *kb_predicate(struct kb_session *s, const struct kb_task *t,
                         const struct kb_node_info *n)
{
        for (size_t i = 0; i < s->predicate.n; i++) {
                const char *why = s->predicate.v[i].fn(s->predicate.v[i].arg, t, n);
                if (why)
                        return why;
        }
        return NULL;
}

/* Scores add up across every plugin and tier (weights are applied by the
 * plugins themselves from their arguments). */
double kb_node_order(struct kb_session *s, const struct kb_task *t, const struct kb_node_info *n)
{
        double score = 0;
        for (size_t i = 0; i < s->node_order.n; i++)
                score += s->node_order.v[i].fn(s->node_order.v[i].arg, t, n);
        return score;
}

/* ---- jobs ------------------------------------------------------------------ */

/* Every job-ready answer must be true. */
bool kb_job_ready(struct kb_session *s, const struct kb_job *j)
{
        for (size_t i = 0; i < s->job_ready.n; i++)
                if (!s->job_ready.v[i].fn(s->job_ready.v[i].arg, j))
                        return false;
        return true;
}

/* Votes: any reject is final; at the end of a tier in which some plugin
 * permitted, the answer is yes; when every plugin abstains, yes. */
static bool vote(struct kb_session *s, const struct kb_cbl_job_vote *list, const struct kb_job *j)
{
        bool permitted = false;
        for (size_t i = 0; i < list->n; i++) {
                int v = list->v[i].fn(list->v[i].arg, j);
                if (v < 0)
                        return false;
                if (v > 0)
                        permitted = true;
                bool tier_end = i + 1 == list->n || list->v[i + 1].tier != list->v[i].tier;
                if (tier_end && permitted)
                        return true;
        }
        (void)s;
        return true;
}

bool kb_job_pipelined(struct kb_session *s, const struct kb_job *j)
{
        return vote(s, &s->job_pipelined, j);
}

bool kb_job_enqueueable(struct kb_session *s, const struct kb_job *j)
{
        return vote(s, &s->job_enqueueable, j);
}

/* The first plugin that finds the job invalid gives the reason. */
const char *kb_job_valid(struct kb_session *s, const struct kb_job *j)
{
        if (j->invalid)
                return j->invalid;
        for (size_t i = 0; i < s->job_valid.n; i++) {
                const char *why = s->job_valid.v[i].fn(s->job_valid.v[i].arg, j);
                if (why)
                        return why;
        }
        return NULL;
}

void kb_job_enqueued(struct kb_session *s, const struct kb_job *j)
{
        for (size_t i = 0; i < s->job_enqueued.n; i++)
                s->job_enqueued.v[i].fn(s->job_enqueued.v[i].arg, j);
}

/* Every answer must be true, and a tier must have answered: false when no
 * plugin has an opinion. */
bool kb_job_starving(struct kb_session *s, const struct kb_job *j)
{
        for (size_t i = 0; i < s->job_starving.n; i++)
                if (!s->job_starving.v[i].fn(s->job_starving.v[i].arg, j))
                        return false;
        return s->job_starving.n > 0;
}

/* ---- queues ---------------------------------------------------------------- */

/* Any plugin finding the queue overused is enough. */
bool kb_overused(struct kb_session *s, const struct kb_queue_info *q)
{
        for (size_t i = 0; i < s->overused.n; i++)
                if (s->overused.v[i].fn(s->overused.v[i].arg, q))
                        return true;
        return false;
}

/* Every answer must be true. */
bool kb_allocatable(struct kb_session *s, const struct kb_queue_info *q, const struct kb_task *t)
{
        for (size_t i = 0; i < s->allocatable.n; i++)
                if (!s->allocatable.v[i].fn(s->allocatable.v[i].arg, q, t))
                        return false;
        return true;
}

bool kb_preemptive(struct kb_session *s, const struct kb_queue_info *q, const struct kb_task *t)
{
        for (size_t i = 0; i < s->preemptive.n; i++)
                if (!s->preemptive.v[i].fn(s->preemptive.v[i].arg, q, t))
                        return false;
        return true;
}

/* ---- victims --------------------------------------------------------------- */

/*
 * Within a tier, the victim sets of the plugins that have an opinion
 * intersect; the first tier in which some plugin has an opinion decides.
 * Membership is tracked by a mark per candidate: a candidate survives the
 * tier when every opinionated plugin of the tier included it.
 */
static size_t victims(struct kb_session *s, const struct kb_cbl_victims *list,
                      const struct kb_task *preemptor, struct kb_task *const *cand, size_t n,
                      struct kb_task **out)
{
        (void)s;
        if (n == 0 || list->n == 0)
                return 0;
        struct kb_task **buf = kb_xmalloc(n * sizeof(*buf));
        unsigned *hits = kb_xcalloc(n, sizeof(*hits));
        size_t result = 0;
        size_t i = 0;
        while (i < list->n) {
                int tier = list->v[i].tier;
                unsigned opinions = 0;
                memset(hits, 0, n * sizeof(*hits));
                for (; i < list->n && list->v[i].tier == tier; i++) {
                        int k = list->v[i].fn(list->v[i].arg, preemptor, cand, n, buf);
                        if (k < 0)
                                continue;
                        opinions++;
                        /* Mark each returned victim (they are candidates). */
                        for (int a = 0; a < k; a++)
                                for (size_t c = 0; c < n; c++)
                                        if (cand[c] == buf[a]) {
                                                hits[c]++;
                                                break;
                                        }
                }
                if (opinions) {
                        for (size_t c = 0; c < n; c++)
                                if (hits[c] == opinions)
                                        out[result++] = cand[c];
                        break;
                }
        }
        free(buf);
        free(hits);
        return result;
}

size_t kb_preemptable(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *candidates, size_t n, struct kb_task **out)
{
        return victims(s, &s->preemptable, preemptor, candidates, n, out);
}

size_t kb_reclaimable(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *candidates, size_t n, struct kb_task **out)
{
        return victims(s, &s->reclaimable, preemptor, candidates, n, out);
}

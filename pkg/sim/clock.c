/*
 * Simulated time for kbatch-sim --until-done: sessions on a clock, pods
 * that run for their runtime, arrivals from creationTimestamps.
 *
 * The clock counts nanoseconds from time 0, the earliest creationTimestamp
 * among the input's pods and PodGroups.  Sessions fall on multiples of the
 * schedule period.  Between two sessions the cluster changes only through
 * events, kept in one heap with the arrivals beside it:
 *
 *   arrival  a pod or PodGroup whose creationTimestamp the clock reached
 *            joins the cluster;
 *   end      a running pod's runtime is over: it Succeeded and its room is
 *            free;
 *   reap     an evicted pod's grace period is over: it is deleted (and a
 *            pod of a PodGroup or Job comes back Pending, as its controller
 *            recreates it).
 *
 * A session that changes nothing (no bind, eviction, nomination, phase or
 * queue state) would decide the same again on the same cluster, since a
 * session reads nothing else that changes (conditions and the wall clock
 * are only written), so the clock jumps to the first period at or after
 * the next event; a session that changed something is followed by one a
 * period later, unless it left nothing to do (no pod of ours waiting or
 * being evicted, every PodGroup Running or Completed, no queue Closing).  Example, period 1 s: gang
 * A (runtime 30m) arrives at 0 and binds in session 1 at 0:00:00; session 2 at 0:00:01 changes
 * nothing; the next event is A's end at 0:30:01, so session 3 runs at 0:30:01 (A is Completed there
 * and leaves the cluster).  Three sessions for half an hour.
 *
 * What stays cheap per session: the cluster arrays hold only what has
 * arrived and not finished (a Completed PodGroup and its pods, and a
 * finished pod without one, leave them), pods are found from a session's
 * result through a pointer table, and the figures (room in use, each
 * queue's allocation) change by the events and binds alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

#define NS_PER_S 1000000000LL

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

void kb_sim_opts_init(struct kb_sim_opts *o)
{
        o->period = NS_PER_S;
        o->default_runtime = 3600 * NS_PER_S;
        o->time_limit = 30LL * 86400 * NS_PER_S;
        o->max_sessions = 0;
}

double kb_sim_percentile(const double *sorted, size_t n, double p)
{
        if (!n)
                return 0;
        /* The smallest rank whose share of the values reaches p percent;
         * the epsilon keeps 95/100*20 = 19 from becoming 19.000000000004. */
        double rank = ceil(p / 100.0 * (double)n - 1e-9);
        size_t r = rank < 1 ? 1 : (size_t)rank;
        return sorted[KB_MIN(r, n) - 1];
}

/* ---- the run's state -------------------------------------------------------------- */

/* A pointer table: pods and PodGroups to their records, filled once. */
struct ptrmap {
        const void **keys;
        uint32_t *vals;
        size_t cap;
};

static uint64_t ptr_hash(const void *p)
{
        uint64_t x = (uint64_t)(uintptr_t)p;
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        return x;
}

static void map_init(struct ptrmap *m, size_t n)
{
        m->cap = 64;
        while (m->cap < 2 * n + 1)
                m->cap *= 2;
        m->keys = kb_xcalloc(m->cap, sizeof(*m->keys));
        m->vals = kb_xcalloc(m->cap, sizeof(*m->vals));
}

static void map_put(struct ptrmap *m, const void *key, uint32_t val)
{
        size_t k = ptr_hash(key) & (m->cap - 1);
        while (m->keys[k] && m->keys[k] != key)
                k = (k + 1) & (m->cap - 1);
        m->keys[k] = key;
        m->vals[k] = val;
}

static bool map_get(const struct ptrmap *m, const void *key, uint32_t *val)
{
        for (size_t k = ptr_hash(key) & (m->cap - 1); m->keys[k]; k = (k + 1) & (m->cap - 1))
                if (m->keys[k] == key) {
                        *val = m->vals[k];
                        return true;
                }
        return false;
}

struct spod {
        struct kb_pod *pod;
        int64_t arrival;
        int64_t runtime; /* -1: runs until deleted (another scheduler's pod) */
        uint32_t gen;    /* bumped at each start and recreation: older events are stale */
        int32_t gang;    /* -1: not tracked (another scheduler's, or finished at load) */
        int32_t queue;   /* for shares; -1 */
        bool ours, recreate, on_node, finished, retired;
};

enum ev_kind { EV_END, EV_REAP };

struct event {
        int64_t t;
        uint32_t pod, gen;
        enum ev_kind kind;
};

struct arrival {
        int64_t t;
        size_t seq;
        struct kb_pod *pod; /* or */
        struct kb_podgroup *pg;
};

struct run {
        struct kb_cluster *c;
        const struct kb_conf *conf;
        const struct kb_sim_opts *o;
        struct kb_sim_report *rep;
        struct spod *pods;
        size_t npods;
        struct ptrmap podmap, pgmap;      /* pod -> pods[], PodGroup -> gang */
        uint32_t *gang_first, *gang_pods; /* each gang's pods: gang_pods[first[g]..first[g+1]) */
        bool *gang_retired;
        struct event *heap;
        size_t nheap, capheap;
        struct arrival *future;
        size_t nfuture, nextfuture;
        /* What left the cluster, given back at the end. */
        struct kb_pod **gone_pods;
        size_t ngone_pods, capgone_pods;
        struct kb_podgroup **gone_pgs;
        size_t ngone_pgs, capgone_pgs;
        bool compact;
        struct kb_res used;
        struct kb_res *qalloc, *qdeserved;
        size_t unfinished;
};

static int64_t offset_of(double origin, double when)
{
        if (when <= 0 || when <= origin)
                return 0;
        return (int64_t)llround((when - origin) * 1e9);
}

/* ---- the event heap -------------------------------------------------------------- */

static bool ev_before(const struct event *a, const struct event *b)
{
        if (a->t != b->t)
                return a->t < b->t;
        if (a->kind != b->kind)
                return a->kind < b->kind;
        return a->pod < b->pod;
}

static void ev_push(struct run *r, int64_t t, uint32_t pod, enum ev_kind kind)
{
        struct event e = {t, pod, r->pods[pod].gen, kind};
        KB_PUSH(r->heap, r->nheap, r->capheap, e);
        for (size_t i = r->nheap - 1; i > 0;) {
                size_t up = (i - 1) / 2;
                if (!ev_before(&r->heap[i], &r->heap[up]))
                        break;
                struct event tmp = r->heap[i];
                r->heap[i] = r->heap[up];
                r->heap[up] = tmp;
                i = up;
        }
}

static struct event ev_pop(struct run *r)
{
        struct event top = r->heap[0];
        r->heap[0] = r->heap[--r->nheap];
        for (size_t i = 0;;) {
                size_t l = 2 * i + 1, m = i;
                if (l < r->nheap && ev_before(&r->heap[l], &r->heap[m]))
                        m = l;
                if (l + 1 < r->nheap && ev_before(&r->heap[l + 1], &r->heap[m]))
                        m = l + 1;
                if (m == i)
                        break;
                struct event tmp = r->heap[i];
                r->heap[i] = r->heap[m];
                r->heap[m] = tmp;
                i = m;
        }
        return top;
}

/* ---- figures ------------------------------------------------------------------------ */

/* Appends (t, v) to a step series: a point at the same time is replaced,
 * one equal to the previous value is not added. */
static void series_note(struct kb_sim_series *s, int64_t t, const struct kb_res *v)
{
        if (s->n && s->v[s->n - 1].t == t) {
                s->v[s->n - 1].v = *v;
                if (s->n > 1 && memcmp(&s->v[s->n - 2].v, v, sizeof(*v)) == 0)
                        s->n--;
                return;
        }
        if (s->n && memcmp(&s->v[s->n - 1].v, v, sizeof(*v)) == 0)
                return;
        struct kb_sim_point p = {t, *v};
        KB_PUSH(s->v, s->n, s->cap, p);
}

/* A pod takes (sign 1) or gives back (-1) its room on a node. */
static void hold(struct run *r, struct spod *sp, int sign, int64_t t)
{
        struct kb_res req = sp->pod->requests;
        req.q[KB_RES_PODS] = 0;
        if (sign < 0)
                for (int i = 0; i < KB_RES_MAX; i++)
                        req.q[i] = -req.q[i];
        sp->on_node = sign > 0;
        kb_res_add(&r->used, &req);
        series_note(&r->rep->used, t, &r->used);
        if (sp->queue >= 0) {
                kb_res_add(&r->qalloc[sp->queue], &req);
                series_note(&r->rep->queues[sp->queue].allocated, t, &r->qalloc[sp->queue]);
        }
}

/* A pod is done: finished and, when its gang's last, the gang ends. */
static void pod_finished(struct run *r, struct spod *sp, int64_t t)
{
        sp->finished = true;
        if (sp->gang < 0)
                return;
        struct kb_sim_gang *g = &r->rep->gangs[sp->gang];
        if (++g->finished == g->pods) {
                g->end = t;
                r->unfinished--;
                r->rep->makespan = KB_MAX(r->rep->makespan, t);
        }
        if (g->lone) {
                /* Nothing reports on it any more: it leaves the cluster. */
                sp->retired = true;
                r->compact = true;
        }
}

static void start_pod(struct run *r, uint32_t i, int64_t t)
{
        struct spod *sp = &r->pods[i];
        sp->gen++;
        sp->pod->start_time = r->rep->origin + (double)t / 1e9; /* as the kubelet's status.startTime */
        hold(r, sp, 1, t);
        if (sp->gang >= 0 && r->rep->gangs[sp->gang].start < 0)
                r->rep->gangs[sp->gang].start = t;
        if (sp->runtime >= 0)
                ev_push(r, t + sp->runtime, i, EV_END);
}

/* ---- events ------------------------------------------------------------------------- */

static void on_end(struct run *r, const struct event *e)
{
        struct spod *sp = &r->pods[e->pod];
        if (sp->gen != e->gen || sp->finished || !sp->on_node)
                return;
        sp->pod->phase = KB_POD_SUCCEEDED;
        hold(r, sp, -1, e->t);
        pod_finished(r, sp, e->t);
}

static void on_reap(struct run *r, const struct event *e)
{
        struct spod *sp = &r->pods[e->pod];
        struct kb_pod *p = sp->pod;
        if (sp->gen != e->gen || sp->finished)
                return;
        if (sp->on_node)
                hold(r, sp, -1, e->t);
        if (!sp->recreate) {
                pod_finished(r, sp, e->t);
                sp->retired = true;
                r->compact = true;
                return;
        }
        /* Its controller makes it again: Pending, its whole runtime ahead. */
        free(p->node_name);
        p->node_name = NULL;
        free(p->nominated_node_name);
        p->nominated_node_name = NULL;
        p->phase = KB_POD_PENDING;
        p->start_time = 0;
        p->meta.deletion = 0;
        sp->gen++;
}

static void arrive(struct run *r, const struct arrival *a)
{
        struct kb_cluster *c = r->c;
        if (a->pod)
                KB_PUSH(c->pods, c->npods, c->cappods, a->pod);
        else
                KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, a->pg);
}

/* Time of the next event or arrival, or -1 when there is none. */
/* The next event after now: an arrival, a pod's end or reaping, or a
 * PodGroup's Inqueue timeout or backoff, or a Pending one's sla waiting
 * time, running out (sessions depend on the clock there); -1 when none. */
static int64_t next_event(const struct run *r, int64_t now)
{
        int64_t t = -1;
        if (r->nextfuture < r->nfuture)
                t = r->future[r->nextfuture].t;
        if (r->nheap && (t < 0 || r->heap[0].t < t))
                t = r->heap[0].t;
        for (size_t i = 0; i < r->c->npodgroups; i++) {
                const struct kb_podgroup *pg = r->c->podgroups[i];
                double ds[2] = {kb_inqueue_deadline(r->conf, pg), kb_sla_deadline(r->conf, pg)};
                for (int k = 0; k < 2; k++) {
                        int64_t off = ds[k] > 0 ? offset_of(r->rep->origin, ds[k]) : -1;
                        if (off > now && (t < 0 || off < t))
                                t = off;
                }
        }
        return t;
}

/* Everything that happens up to and including time `to`, in time order. */
static void advance(struct run *r, int64_t to)
{
        for (;;) {
                bool arr = r->nextfuture < r->nfuture && r->future[r->nextfuture].t <= to;
                bool ev = r->nheap && r->heap[0].t <= to;
                if (!arr && !ev)
                        break;
                if (arr && (!ev || r->future[r->nextfuture].t <= r->heap[0].t)) {
                        arrive(r, &r->future[r->nextfuture++]);
                        continue;
                }
                struct event e = ev_pop(r);
                if (e.kind == EV_END)
                        on_end(r, &e);
                else
                        on_reap(r, &e);
        }
}

/* Drops what finished from the cluster's arrays (kept aside until the end). */
static void compact(struct run *r)
{
        struct kb_cluster *c = r->c;
        size_t w = 0;
        uint32_t i;
        for (size_t k = 0; k < c->npods; k++) {
                struct kb_pod *p = c->pods[k];
                if (map_get(&r->podmap, p, &i) && r->pods[i].retired)
                        KB_PUSH(r->gone_pods, r->ngone_pods, r->capgone_pods, p);
                else
                        c->pods[w++] = p;
        }
        c->npods = w;
        w = 0;
        for (size_t k = 0; k < c->npodgroups; k++) {
                struct kb_podgroup *pg = c->podgroups[k];
                if (map_get(&r->pgmap, pg, &i) && r->gang_retired[i])
                        KB_PUSH(r->gone_pgs, r->ngone_pgs, r->capgone_pgs, pg);
                else
                        c->podgroups[w++] = pg;
        }
        c->npodgroups = w;
        r->compact = false;
}

/* ---- setting up ---------------------------------------------------------------------- */

struct gang_key {
        const char *name; /* from the gang entry */
        bool lone;
        struct kb_podgroup *pg;
        size_t seq;
};

static int cmp_gang_key(const void *a, const void *b)
{
        const struct gang_key *x = a, *y = b;
        if (x->lone != y->lone)
                return x->lone ? 1 : -1;
        int c = strcmp(x->name, y->name);
        if (c)
                return c;
        /* The PodGroup's own entry first among equal names. */
        if (!x->pg != !y->pg)
                return x->pg ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_arrival(const void *a, const void *b)
{
        const struct arrival *x = a, *y = b;
        if (x->t != y->t)
                return x->t < y->t ? -1 : 1;
        /* A PodGroup before the pods that arrive with it. */
        if (!x->pod != !y->pod)
                return x->pod ? 1 : -1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_str_ptr(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *gang_name_of(const struct kb_pod *p)
{
        const char *ns = p->meta.namespace ? p->meta.namespace : "default";
        if (p->group_name && *p->group_name)
                return kb_xasprintf("%s/%s", ns, p->group_name);
        return kb_xasprintf("%s/%s", ns, p->meta.name);
}

static int32_t find_gang(const struct kb_sim_report *rep, const char *name, bool lone)
{
        size_t lo = 0, hi = rep->ngangs;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                const struct kb_sim_gang *g = &rep->gangs[mid];
                int c = g->lone != lone ? (g->lone ? 1 : -1) : strcmp(g->name, name);
                if (c == 0)
                        return (int32_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static int32_t find_queue(const struct kb_sim_report *rep, const char *name)
{
        for (size_t lo = 0, hi = rep->nqueues; lo < hi;) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(rep->queues[mid].name, name);
                if (c == 0)
                        return (int32_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* The gangs: one per PodGroup, per missing PodGroup pods name, and per pod
 * of ours without one; PodGroups first, each part by name. */
static void build_gangs(struct run *r)
{
        struct kb_cluster *c = r->c;
        struct kb_sim_report *rep = r->rep;
        struct gang_key *keys = kb_xmalloc((c->npodgroups + c->npods + 1) * sizeof(*keys));
        char **names = kb_xmalloc((c->npodgroups + c->npods + 1) * sizeof(*names));
        size_t nkeys = 0;
        for (size_t i = 0; i < c->npodgroups; i++) {
                const struct kb_podgroup *pg = c->podgroups[i];
                names[nkeys] = kb_xasprintf(
                    "%s/%s", pg->meta.namespace ? pg->meta.namespace : "default", pg->meta.name);
                keys[nkeys] = (struct gang_key){names[nkeys], false, c->podgroups[i], nkeys};
                nkeys++;
        }
        for (size_t i = 0; i < r->npods; i++) {
                const struct kb_pod *p = r->pods[i].pod;
                if (!r->pods[i].ours)
                        continue;
                names[nkeys] = gang_name_of(p);
                keys[nkeys] = (struct gang_key){names[nkeys], !(p->group_name && *p->group_name),
                                                NULL, nkeys};
                nkeys++;
        }
        if (nkeys)
                qsort(keys, nkeys, sizeof(*keys), cmp_gang_key);
        rep->gangs = kb_xcalloc(nkeys + 1, sizeof(*rep->gangs));
        for (size_t i = 0; i < nkeys; i++) {
                if (i && keys[i].lone == keys[i - 1].lone &&
                    strcmp(keys[i].name, keys[i - 1].name) == 0)
                        continue;
                struct kb_sim_gang *g = &rep->gangs[rep->ngangs++];
                const struct kb_podgroup *pg = keys[i].pg;
                g->name = kb_xstrdup(keys[i].name);
                g->lone = keys[i].lone;
                g->has_pg = pg != NULL;
                g->min_member = pg ? pg->min_member : 1;
                g->queue = kb_xstrdup(pg && pg->queue ? pg->queue : c->default_queue);
                g->arrival = pg ? offset_of(rep->origin, pg->meta.creation) : -1;
                g->start = g->end = -1;
                if (pg)
                        map_put(&r->pgmap, pg, (uint32_t)(rep->ngangs - 1));
        }
        for (size_t i = 0; i < nkeys; i++)
                free(names[i]);
        free(names);
        free(keys);
}

/* Each pod's gang and queue, the gangs' pod lists and arrivals. */
static void join_gangs(struct run *r)
{
        struct kb_sim_report *rep = r->rep;
        size_t ng = rep->ngangs;
        r->gang_first = kb_xcalloc(ng + 2, sizeof(*r->gang_first));
        r->gang_pods = kb_xmalloc((r->npods + 1) * sizeof(*r->gang_pods));
        r->gang_retired = kb_xcalloc(ng + 1, sizeof(*r->gang_retired));
        for (size_t i = 0; i < r->npods; i++) {
                struct spod *sp = &r->pods[i];
                sp->gang = -1;
                sp->queue = -1;
                if (!sp->ours)
                        continue;
                char *name = gang_name_of(sp->pod);
                sp->gang = find_gang(rep, name, !(sp->pod->group_name && *sp->pod->group_name));
                free(name);
                struct kb_sim_gang *g = &rep->gangs[sp->gang];
                sp->queue = find_queue(rep, g->queue);
                g->pods++;
                kb_res_add(&g->requests, &sp->pod->requests);
                r->gang_first[sp->gang + 1]++;
        }
        for (size_t g = 0; g < ng; g++)
                r->gang_first[g + 1] += r->gang_first[g];
        uint32_t *fill = kb_xcalloc(ng + 1, sizeof(*fill));
        for (size_t i = 0; i < r->npods; i++)
                if (r->pods[i].gang >= 0) {
                        int32_t g = r->pods[i].gang;
                        r->gang_pods[r->gang_first[g] + fill[g]++] = (uint32_t)i;
                }
        free(fill);
}

/*
 * Each pod's runtime and arrival, and the state at time 0: bound pods run
 * from 0 (with every pod of their gang, PodGroup included, there at 0),
 * finished ones are done, the rest arrive at their creationTimestamp's
 * offset (a pod without one with its PodGroup).
 */
static int place_in_time(struct run *r, char *err, size_t errlen)
{
        struct kb_cluster *c = r->c;
        struct kb_sim_report *rep = r->rep;
        for (size_t i = 0; i < r->npods; i++) {
                struct spod *sp = &r->pods[i];
                struct kb_pod *p = sp->pod;
                int64_t rt;
                int rc = kb_pod_runtime(p, &rt, err, errlen);
                if (rc < 0)
                        return rc;
                if (rc == 0 && sp->ours) {
                        rt = r->o->default_runtime;
                        rep->default_runtime_pods++;
                }
                sp->runtime = rc == 0 && !sp->ours ? -1 : rt;
                sp->recreate = (p->group_name && *p->group_name) ||
                               kb_meta_label(&p->meta, "job-name") ||
                               kb_meta_label(&p->meta, "batch.kubernetes.io/job-name");
                sp->on_node = p->node_name && *p->node_name && !kb_pod_terminal(p);
                if (sp->on_node && sp->gang >= 0)
                        rep->gangs[sp->gang].arrival = 0;
        }
        for (size_t i = 0; i < r->npods; i++) {
                struct spod *sp = &r->pods[i];
                const struct kb_pod *p = sp->pod;
                struct kb_sim_gang *g = sp->gang >= 0 ? &rep->gangs[sp->gang] : NULL;
                if (sp->on_node)
                        sp->arrival = 0;
                else if (p->meta.creation > 0)
                        sp->arrival = offset_of(rep->origin, p->meta.creation);
                else
                        sp->arrival = g && g->has_pg ? g->arrival : 0;
                /* A gang without its PodGroup arrives with its first pod. */
                if (g && !g->has_pg && (g->arrival < 0 || sp->arrival < g->arrival))
                        g->arrival = sp->arrival;
        }
        for (size_t g = 0; g < rep->ngangs; g++)
                if (rep->gangs[g].arrival < 0)
                        rep->gangs[g].arrival = 0;

        /* Time 0: what runs holds its room; what is over is done. */
        r->unfinished = rep->ngangs;
        for (size_t i = 0; i < r->npods; i++) {
                struct spod *sp = &r->pods[i];
                if (kb_pod_terminal(sp->pod)) {
                        pod_finished(r, sp, 0);
                } else if (sp->on_node) {
                        start_pod(r, (uint32_t)i, 0);
                        if (sp->pod->meta.deletion > 0)
                                ev_push(r, offset_of(rep->origin, sp->pod->meta.deletion),
                                        (uint32_t)i, EV_REAP);
                }
        }
        /* A gang finished before time 0 is no part of the run. */
        for (size_t g = 0; g < rep->ngangs; g++) {
                struct kb_sim_gang *gg = &rep->gangs[g];
                gg->prior = gg->pods && gg->finished == gg->pods;
                if (gg->prior)
                        gg->end = -1;
        }
        rep->makespan = 0;

        /* Later arrivals wait outside the cluster. */
        r->future = kb_xmalloc((c->npods + c->npodgroups + 1) * sizeof(*r->future));
        size_t w = 0;
        for (size_t k = 0; k < c->npodgroups; k++) {
                uint32_t g;
                struct kb_podgroup *pg = c->podgroups[k];
                int64_t t = map_get(&r->pgmap, pg, &g) ? rep->gangs[g].arrival : 0;
                if (t > 0) {
                        size_t seq = r->nfuture++; /* the order of arrival among equals */
                        r->future[seq] = (struct arrival){t, seq, NULL, pg};
                } else {
                        c->podgroups[w++] = pg;
                }
        }
        c->npodgroups = w;
        w = 0;
        for (size_t k = 0; k < c->npods; k++) {
                uint32_t i;
                struct kb_pod *p = c->pods[k];
                int64_t t = map_get(&r->podmap, p, &i) ? r->pods[i].arrival : 0;
                if (t > 0) {
                        size_t seq = r->nfuture++;
                        r->future[seq] = (struct arrival){t, seq, p, NULL};
                } else {
                        c->pods[w++] = p;
                }
        }
        c->npods = w;
        if (r->nfuture)
                qsort(r->future, r->nfuture, sizeof(*r->future), cmp_arrival);
        return 0;
}

static int setup(struct run *r, char *err, size_t errlen)
{
        struct kb_cluster *c = r->c;
        struct kb_sim_report *rep = r->rep;
        double origin = 0;
        for (size_t i = 0; i < c->npods; i++)
                if (c->pods[i]->meta.creation > 0 &&
                    (origin == 0 || c->pods[i]->meta.creation < origin))
                        origin = c->pods[i]->meta.creation;
        for (size_t i = 0; i < c->npodgroups; i++)
                if (c->podgroups[i]->meta.creation > 0 &&
                    (origin == 0 || c->podgroups[i]->meta.creation < origin))
                        origin = c->podgroups[i]->meta.creation;
        rep->origin = origin > 0 ? origin : c->now;
        rep->period = r->o->period;
        rep->default_runtime = r->o->default_runtime;
        for (size_t i = 0; i < c->nnodes; i++)
                kb_res_add(&rep->total, &c->nodes[i]->allocatable);
        rep->total.q[KB_RES_PODS] = 0;

        /* Queues by name (they neither come nor go during a run). */
        const char **qnames = kb_xmalloc((c->nqueues + 1) * sizeof(*qnames));
        for (size_t i = 0; i < c->nqueues; i++)
                qnames[i] = c->queues[i]->meta.name;
        if (c->nqueues)
                qsort(qnames, c->nqueues, sizeof(*qnames), cmp_str_ptr);
        rep->queues = kb_xcalloc(c->nqueues + 1, sizeof(*rep->queues));
        for (size_t i = 0; i < c->nqueues; i++)
                if (!i || strcmp(qnames[i], qnames[i - 1]))
                        rep->queues[rep->nqueues++].name = kb_xstrdup(qnames[i]);
        free(qnames);
        r->qalloc = kb_xcalloc(rep->nqueues + 1, sizeof(*r->qalloc));
        r->qdeserved = kb_xcalloc(rep->nqueues + 1, sizeof(*r->qdeserved));

        r->npods = c->npods;
        r->pods = kb_xcalloc(c->npods + 1, sizeof(*r->pods));
        map_init(&r->podmap, c->npods);
        map_init(&r->pgmap, c->npodgroups);
        for (size_t i = 0; i < c->npods; i++) {
                r->pods[i].pod = c->pods[i];
                r->pods[i].ours = kb__cluster_ours(c, c->pods[i]);
                map_put(&r->podmap, c->pods[i], (uint32_t)i);
        }
        build_gangs(r);
        join_gangs(r);
        series_note(&rep->used, 0, &r->used);
        for (size_t q = 0; q < rep->nqueues; q++) {
                series_note(&rep->queues[q].allocated, 0, &r->qalloc[q]);
                series_note(&rep->queues[q].deserved, 0, &r->qdeserved[q]);
        }
        return place_in_time(r, err, errlen);
}

/* ---- a session ---------------------------------------------------------------------- */

static enum kb_pg_phase phase_of(const struct kb_podgroup *pg)
{
        for (int p = KB_PG_PENDING; pg->phase && p <= KB_PG_COMPLETED; p++)
                if (strcmp(pg->phase, kb_pg_phase_name((enum kb_pg_phase)p)) == 0)
                        return (enum kb_pg_phase)p;
        return KB_PG_PENDING;
}

static bool condition_differs(const struct kb_podgroup *pg, const struct kb_pg_status *st)
{
        if (!st->cond_type)
                return false;
        for (size_t k = 0; k < pg->nconditions; k++) {
                const struct kb_condition *c = &pg->conditions[k];
                if (kb_streq(c->type, st->cond_type))
                        return !kb_streq(c->status, st->cond_status) ||
                               !kb_streq(c->reason, st->cond_reason) ||
                               !kb_streq(c->message, st->cond_message);
        }
        return true;
}

static void set_why(struct kb_sim_gang *g, const struct kb_pg_status *st)
{
        if (!st->cond_type || strcmp(st->cond_type, "Unschedulable") ||
            strcmp(st->cond_status, "True") || kb_streq(g->why, st->cond_message))
                return;
        free(g->why);
        g->why = kb_xstrdup(st->cond_message);
}

/* What the session would change, per PodGroup entry and as a whole. */
static bool diff(struct run *r, const struct kb_result *res, bool *pg_changed)
{
        bool changed = res->nbinds || res->nevictions;
        for (size_t i = 0; i < res->nnominations && !changed; i++)
                changed = !kb_streq(res->nominations[i].pod->nominated_node_name,
                                    res->nominations[i].node);
        for (size_t i = 0; i < res->nqueues && !changed; i++)
                for (size_t k = 0; res->queues[i].state_changed && k < r->c->nqueues; k++)
                        if (strcmp(r->c->queues[k]->meta.name, res->queues[i].name) == 0 &&
                            r->c->queues[k]->state != res->queues[i].state)
                                changed = true;
        for (size_t i = 0; i < res->npodgroups; i++) {
                const struct kb_pg_status *st = &res->podgroups[i];
                if (!st->pg) {
                        int32_t g = find_gang(r->rep, st->name, false);
                        pg_changed[i] = g >= 0 && st->cond_message &&
                                        !kb_streq(r->rep->gangs[g].why, st->cond_message);
                        continue;
                }
                bool phase = phase_of(st->pg) != st->phase;
                pg_changed[i] = phase || condition_differs(st->pg, st);
                /* A Completed group leaves the cluster: it changes no
                 * later session. */
                changed |= phase && st->phase != KB_PG_COMPLETED;
        }
        return changed;
}

static void apply(struct run *r, const struct kb_result *res, int64_t t)
{
        struct kb_sim_report *rep = r->rep;
        uint32_t i;
        for (size_t k = 0; k < res->nbinds; k++) {
                struct kb_pod *p = (struct kb_pod *)res->binds[k].pod;
                kb__cluster_bind(p, res->binds[k].node);
                if (map_get(&r->podmap, p, &i))
                        start_pod(r, i, t);
        }
        for (size_t k = 0; k < res->nevictions; k++) {
                struct kb_pod *p = (struct kb_pod *)res->evictions[k].pod;
                if (p->meta.deletion > 0 || !map_get(&r->podmap, p, &i))
                        continue;
                /* Kubernetes' default grace period is 30 s. */
                int64_t grace = (p->grace_period >= 0 ? p->grace_period : 30) * NS_PER_S;
                p->meta.deletion = rep->origin + (double)(t + grace) / 1e9;
                ev_push(r, t + grace, i, EV_REAP);
                if (r->pods[i].gang >= 0)
                        rep->gangs[r->pods[i].gang].evictions++;
        }
        for (size_t k = 0; k < res->nnominations; k++) {
                struct kb_pod *p = (struct kb_pod *)res->nominations[k].pod;
                if (kb_streq(p->nominated_node_name, res->nominations[k].node))
                        continue;
                free(p->nominated_node_name);
                p->nominated_node_name = kb_xstrdup(res->nominations[k].node);
        }
        kb__cluster_apply_statuses(r->c, res);
        for (size_t k = 0; k < res->npodgroups; k++) {
                const struct kb_pg_status *st = &res->podgroups[k];
                int32_t g = -1;
                if (st->pg && map_get(&r->pgmap, st->pg, &i))
                        g = (int32_t)i;
                else if (!st->pg)
                        g = find_gang(rep, st->name, false);
                if (g < 0)
                        continue;
                struct kb_sim_gang *gang = &rep->gangs[g];
                set_why(gang, st);
                if (st->phase == KB_PG_COMPLETED && st->pg && gang->finished == gang->pods &&
                    !r->gang_retired[g]) {
                        r->gang_retired[g] = true;
                        for (uint32_t x = r->gang_first[g]; x < r->gang_first[g + 1]; x++)
                                r->pods[r->gang_pods[x]].retired = true;
                        r->compact = true;
                }
        }
        /* Pods without a PodGroup left Pending say why too. */
        for (size_t k = 0; k < res->nunschedulable; k++) {
                const struct kb_pod_status *ps = &res->unschedulable[k];
                if (!map_get(&r->podmap, ps->pod, &i) || r->pods[i].gang < 0)
                        continue;
                struct kb_sim_gang *gang = &rep->gangs[r->pods[i].gang];
                if (ps->message && !kb_streq(gang->why, ps->message)) {
                        free(gang->why);
                        gang->why = kb_xstrdup(ps->message);
                }
        }
        for (size_t k = 0; k < res->nqueues; k++) {
                int32_t q = find_queue(rep, res->queues[k].name);
                if (q < 0)
                        continue;
                r->qdeserved[q] = res->queues[k].deserved;
                for (int x = 0; x < KB_RES_MAX; x++)
                        if (r->qdeserved[q].q[x] == KB_RES_UNLIMITED)
                                r->qdeserved[q].q[x] = 0;
                r->qdeserved[q].q[KB_RES_PODS] = 0;
                series_note(&rep->queues[q].deserved, t, &r->qdeserved[q]);
        }
}

/*
 * Whether the scheduler has nothing to do: every pod of ours is running or
 * finished (none waits, none is being evicted), every PodGroup is Running
 * or Completed, no queue is Closing.  A session would then bind, evict and
 * change nothing (enqueue looks at Pending groups, the others at pending
 * pods), so after a session that bound the last waiting gang the clock
 * need not look again a period later: it goes to the next event.
 */
static bool quiet(const struct run *r)
{
        const struct kb_cluster *c = r->c;
        uint32_t i;
        for (size_t k = 0; k < c->nqueues; k++)
                if (c->queues[k]->state == KB_QUEUE_CLOSING)
                        return false;
        for (size_t k = 0; k < c->npodgroups; k++) {
                enum kb_pg_phase ph = phase_of(c->podgroups[k]);
                if (ph != KB_PG_RUNNING && ph != KB_PG_COMPLETED)
                        return false;
        }
        for (size_t k = 0; k < c->npods; k++) {
                const struct kb_pod *p = c->pods[k];
                if (!map_get(&r->podmap, p, &i) || r->pods[i].finished)
                        continue;
                if (p->meta.deletion > 0 || (r->pods[i].ours && !r->pods[i].on_node))
                        return false;
        }
        return true;
}

/* The first period boundary at or after t. */
static int64_t on_grid(int64_t t, int64_t period)
{
        return (t + period - 1) / period * period;
}

/* Gives every object that left the cluster, or never arrived, back. */
static void restore(struct run *r)
{
        struct kb_cluster *c = r->c;
        if (r->compact)
                compact(r);
        for (size_t i = 0; i < r->ngone_pods; i++)
                KB_PUSH(c->pods, c->npods, c->cappods, r->gone_pods[i]);
        for (size_t i = 0; i < r->ngone_pgs; i++)
                KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, r->gone_pgs[i]);
        for (size_t i = r->nextfuture; i < r->nfuture; i++)
                arrive(r, &r->future[i]);
        r->nextfuture = r->nfuture;
}

int kb_sim_run(struct kb_cluster *c, const struct kb_conf *conf, const struct kb_sim_opts *opts,
               kb_sim_step_fn fn, void *arg, struct kb_sim_report *rep, char *err, size_t errlen)
{
        struct run r = {.c = c, .conf = conf, .o = opts, .rep = rep};
        double t0 = kb_now_mono();
        bool *changed_pg = NULL;
        size_t capchanged = 0;
        int rc;

        memset(rep, 0, sizeof(*rep));
        rc = setup(&r, err, errlen);
        int64_t t = 0;
        while (rc == 0) {
                struct kb_snapshot snap;
                struct kb_result res;
                if (r.compact)
                        compact(&r);
                c->now = rep->origin + (double)t / 1e9;
                kb_cluster_snapshot(c, &snap);
                if (kb_session_run(&snap, conf, &res) != 0) {
                        snprintf(err, errlen,
                                 "session %ld: the conf names a missing action or plugin",
                                 rep->sessions + 1);
                        rc = KB_EBADCONF;
                }
                rep->sessions++;
                rep->clock = t;
                if (res.npodgroups > capchanged) {
                        capchanged = res.npodgroups * 2;
                        free(changed_pg);
                        changed_pg = kb_xmalloc(capchanged * sizeof(*changed_pg));
                }
                struct kb_sim_step step = {rep->sessions, t, &res, changed_pg,
                                           diff(&r, &res, changed_pg)};
                if (fn)
                        fn(arg, &step);
                apply(&r, &res, t);
                kb_result_release(&res);
                if (rc)
                        break;
                if (!r.unfinished) {
                        rep->stop = KB_SIM_DONE;
                        break;
                }
                if (opts->max_sessions && rep->sessions >= opts->max_sessions) {
                        rep->stop = KB_SIM_SESSION_LIMIT;
                        break;
                }
                int64_t next = t + opts->period;
                if (!step.changed || quiet(&r)) {
                        int64_t e = next_event(&r, t);
                        if (e < 0) {
                                rep->stop = KB_SIM_STUCK;
                                break;
                        }
                        next = KB_MAX(next, on_grid(e, opts->period));
                }
                if (next > opts->time_limit) {
                        rep->stop = KB_SIM_TIME_LIMIT;
                        break;
                }
                advance(&r, next);
                t = next;
        }
        restore(&r);
        free(changed_pg);
        free(r.pods);
        free(r.podmap.keys);
        free(r.podmap.vals);
        free(r.pgmap.keys);
        free(r.pgmap.vals);
        free(r.gang_first);
        free(r.gang_pods);
        free(r.gang_retired);
        free(r.heap);
        free(r.future);
        free(r.gone_pods);
        free(r.gone_pgs);
        free(r.qalloc);
        free(r.qdeserved);
        rep->wall = kb_now_mono() - t0;
        if (rc)
                kb_sim_report_release(rep);
        return rc;
}

void kb_sim_report_release(struct kb_sim_report *rep)
{
        for (size_t i = 0; i < rep->ngangs; i++) {
                free(rep->gangs[i].name);
                free(rep->gangs[i].queue);
                free(rep->gangs[i].why);
        }
        for (size_t i = 0; i < rep->nqueues; i++) {
                free(rep->queues[i].name);
                free(rep->queues[i].allocated.v);
                free(rep->queues[i].deserved.v);
        }
        free(rep->gangs);
        free(rep->queues);
        free(rep->used.v);
        memset(rep, 0, sizeof(*rep));
}

/*
 * The start of a kbatch-sim --until-done run: time 0, the queues and gangs
 * of the report, each pod's runtime and arrival, what runs or is over at
 * time 0, and the arrivals kept outside the cluster until their time.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

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

int32_t kb__sim_find_gang(const struct kb_sim_report *rep, const char *name, bool lone)
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

int32_t kb__sim_find_queue(const struct kb_sim_report *rep, const char *name)
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
                g->arrival = pg ? kb__sim_offset(rep->origin, pg->meta.creation) : -1;
                g->start = g->end = -1;
                if (pg)
                        kb__ptrmap_put(&r->pgmap, pg, (uint32_t)(rep->ngangs - 1));
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
                sp->gang =
                    kb__sim_find_gang(rep, name, !(sp->pod->group_name && *sp->pod->group_name));
                free(name);
                struct kb_sim_gang *g = &rep->gangs[sp->gang];
                sp->queue = kb__sim_find_queue(rep, g->queue);
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
                        sp->default_rt = true;
                        r->default_runtimes = true;
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
                        sp->arrival = kb__sim_offset(rep->origin, p->meta.creation);
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
                        kb__sim_pod_finished(r, sp, 0);
                } else if (sp->on_node) {
                        kb__sim_start_pod(r, (uint32_t)i, 0);
                        if (sp->pod->meta.deletion > 0)
                                kb__sim_ev_push(r,
                                                kb__sim_offset(rep->origin, sp->pod->meta.deletion),
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
                int64_t t = kb__ptrmap_get(&r->pgmap, pg, &g) ? rep->gangs[g].arrival : 0;
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
                int64_t t = kb__ptrmap_get(&r->podmap, p, &i) ? r->pods[i].arrival : 0;
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

int kb__sim_setup(struct run *r, char *err, size_t errlen)
{
        kb_cluster_changed(r->c);
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
        kb__ptrmap_init(&r->podmap, c->npods);
        kb__ptrmap_init(&r->pgmap, c->npodgroups);
        for (size_t i = 0; i < c->npods; i++) {
                r->pods[i].pod = c->pods[i];
                r->pods[i].ours = kb__cluster_ours(c, c->pods[i]);
                kb__ptrmap_put(&r->podmap, c->pods[i], (uint32_t)i);
        }
        build_gangs(r);
        join_gangs(r);
        kb__sim_series_note(&rep->used, 0, &r->used);
        for (size_t q = 0; q < rep->nqueues; q++) {
                kb__sim_series_note(&rep->queues[q].allocated, 0, &r->qalloc[q]);
                kb__sim_series_note(&rep->queues[q].deserved, 0, &r->qdeserved[q]);
        }
        return place_in_time(r, err, errlen);
}

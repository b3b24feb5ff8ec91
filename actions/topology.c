/*
 * allocate's network topology path: a gang whose PodGroup sets
 * spec.networkTopology goes within one topology domain (a HyperNode, or a
 * domain of the conf's node-label tiers), as Volcano master's allocate
 * places a hard-mode job (allocateForJob over the HyperNode gradients and
 * scores of the network-topology-aware plugin):
 *
 *   - candidates: the domains of tier <= highestTierAllowed (with
 *     highestTierName instead, those at or below a domain of that
 *     tierName; with neither, every domain).  A gang with tasks on nodes
 *     already stays within the highest allowed domain above them, except
 *     that a domain with no common ancestor with theirs at all (another
 *     tree of HyperNodes) is a candidate too, as in Volcano master, whose
 *     allocate limits a rescheduled job by the tier of the lowest common
 *     HyperNode and sets no limit when there is none (allocate_test.go,
 *     "... tasks in job rescheduled, can allocate job when LCAHyperNode is
 *     empty");
 *   - a domain whose free room (future idle) is short of the least the
 *     gang still needs — per resource, the sum of the smallest requests of
 *     as many tasks as it lacks — cannot take it and is not tried; nor is
 *     one short of the PodGroup's minResources (Volcano's pre-filter);
 *   - order: the lowest tier first (Volcano's gradients); within a tier
 *     the tightest fit first: Volcano's HyperNode binpack score, the
 *     weighted mean over the resources the gang asks for of (used +
 *     request) / allocatable, 0 when the gang would overflow the domain;
 *     then the share of the gang's tasks already in the domain; then the
 *     name (Volcano picks at random among ties);
 *   - the gang's turn is played in each candidate in that order, on that
 *     domain's nodes only (select.c answers per domain from the same
 *     caches, a range query), and the first domain where the gang becomes
 *     ready or pipelined keeps it.  Volcano plays every domain of the
 *     first tier that has a solution and keeps the best-scored one; the
 *     score does not depend on the play, so the first solution in score
 *     order is that one, found at a fraction of the cost.
 *
 * A hard gang no candidate takes is not placed at all — never split — and
 * its condition says so, with the largest allowed domain's free room; a
 * soft gang falls back to every node.
 *
 * Example: block b1 holds racks r1, r2, r3 of two 4-cpu nodes each, with
 * 4, 2 and 6 cpu free; a gang of two 1-cpu tasks, hard, highestTierAllowed
 * 2.  Every rack can hold it (tier 1 before b1, tier 2).  Scores, cpu
 * (used + 2) / 8 and memory alike: r2 (6+2)/8 = 1, r1 (4+2)/8 = 0.75, r3
 * (2+2)/8 = 0.5: the gang lands in r2, the fullest rack that holds it,
 * and r3's room stays whole for a bigger gang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

struct cand {
        const struct kb_domain *d;
        double score, share;
};

static int cmp_cand(const void *a, const void *b)
{
        const struct cand *x = a, *y = b;
        if (x->d->tier != y->d->tier)
                return x->d->tier < y->d->tier ? -1 : 1;
        if (x->score != y->score)
                return x->score > y->score ? -1 : 1;
        if (x->share != y->share)
                return x->share > y->share ? -1 : 1;
        return strcmp(x->d->name, y->d->name);
}

bool kb__domain_allowed(const struct kb_domain *doms, const struct kb_domain *d, int32_t tier,
                        const char *tier_name)
{
        if (tier >= 0)
                return d->tier <= tier;
        if (!tier_name)
                return true;
        for (const struct kb_domain *a = d;; a = &doms[a->parent]) {
                if (kb_streq(a->tier_name, tier_name))
                        return true;
                if (a->parent < 0)
                        return false;
        }
}

bool kb__tier_name_unknown(struct kb_session *s, int32_t tier, const char *tier_name)
{
        if (tier >= 0 || !tier_name)
                return false;
        size_t nd;
        const struct kb_domain *doms = kb_session_topology_domains(s, &nd);
        for (size_t i = 0; i < nd; i++)
                if (kb_streq(doms[i].tier_name, tier_name))
                        return false;
        return true;
}

/* Whether spec.networkTopology lets j span d. */
static bool allowed(const struct kb_podgroup *pg, const struct kb_domain *doms,
                    const struct kb_domain *d)
{
        return kb__domain_allowed(doms, d, pg->highest_tier, pg->highest_tier_name);
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return x < y ? -1 : x > y;
}

/* What j's pending tasks ask for in all (*request), and at least (*need:
 * per resource the smallest requests of as many tasks as j lacks, at
 * least one); returns that number of tasks. */
static uint32_t gang_need(const struct kb_job *j, const struct kb_heap *tasks,
                          struct kb_res *request, struct kb_res *need)
{
        int64_t lack = (int64_t)j->min_available - kb_job_ready_count(j) - j->pending_best_effort;
        uint32_t k = (uint32_t)KB_MAX(lack, 1);
        if (k > tasks->n)
                k = (uint32_t)tasks->n;
        memset(request, 0, sizeof(*request));
        memset(need, 0, sizeof(*need));
        int64_t *v = kb_xmalloc((tasks->n + 1) * sizeof(*v));
        for (int r = 0; r < kb_res_count(); r++) {
                for (size_t i = 0; i < tasks->n; i++) {
                        v[i] = ((const struct kb_task *)tasks->v[i])->resreq->q[r];
                        request->q[r] += v[i];
                }
                qsort(v, tasks->n, sizeof(*v), cmp_i64);
                for (uint32_t i = 0; i < k; i++)
                        need->q[r] += v[i];
        }
        free(v);
        return k;
}

/* Volcano's HyperNode binpack score of the gang's request in d. */
static inline double binpack(struct kb_session *s, const struct kb_domain_room *room,
                             const struct kb_res *request)
{
        const struct kb_topology_conf *conf = kb_topology_config(s);
        double sum = 0, wsum = 0;
        for (int r = 0; r < KB_RES_MAX; r++) {
                if (!conf->weighted[r] || request->q[r] <= 0)
                        continue;
                double alloc = (double)room->allocatable.q[r];
                double used = (double)room->used.q[r] + (double)request->q[r];
                if (used > alloc)
                        return 0;
                sum += (double)conf->weight[r] * used / alloc;
                wsum += (double)conf->weight[r];
        }
        return wsum > 0 ? sum / wsum : 0;
}

double kb__domain_binpack(struct kb_session *s, const struct kb_domain *d,
                          const struct kb_res *request)
{
        const struct kb_domain_room *room = kb_domain_room(s, d);
        return binpack(s, room, request);
}

/* The share of j's tasks on nodes of d. */
static double share(struct kb_session *s, const struct kb_job *j, const struct kb_domain *d)
{
        size_t nn;
        const struct kb_node_info *nodes = kb_session_nodes(s, &nn);
        uint32_t in = 0;
        for (uint32_t i = 0; i < j->ntasks; i++) {
                const struct kb_task *t = j->tasks[i];
                if (t->node >= 0 && t->status != KB_TASK_RELEASING &&
                    kb_domain_has(s, d, &nodes[t->node]))
                        in++;
        }
        return j->ntasks ? (double)in / j->ntasks : 0;
}

/* How much of need d's free room covers: the least ratio over the
 * resources needed. */
static double coverage(const struct kb_domain_room *room, const struct kb_res *need)
{
        double c = 1e300;
        for (int r = 0; r < KB_RES_MAX; r++)
                if (need->q[r] > 0) {
                        double x = (double)room->future_idle.q[r] / (double)need->q[r];
                        c = x < c ? x : c;
                }
        return c;
}


/* Why no candidate took j: the largest allowed domain's free room. */
static void explain(struct kb_session *s, struct kb_job *j, const struct cand *all, size_t n,
                    const struct kb_res *need, uint32_t k)
{
        char bound[300], needs[256], room[256], msg[1024];
        kb_topology_bound_text(j->pg, bound, sizeof(bound));
        if (!n) {
                snprintf(msg, sizeof(msg),
                         "no network topology domain%s exists to hold the gang (define "
                         "HyperNodes, or node-label tiers with network-topology-aware's "
                         "hypernode.tier<N>.label)",
                         bound);
                j->fit_error = kb_session_intern(s, msg);
                return;
        }
        const struct cand *best = &all[0];
        double bc = -1;
        for (size_t i = 0; i < n; i++) {
                const struct kb_domain_room *r = kb_domain_room(s, all[i].d);
                double c = coverage(r, need);
                if (c > bc || (c == bc && strcmp(all[i].d->name, best->d->name) < 0)) {
                        best = &all[i];
                        bc = c;
                }
        }
        kb_res_format(need, true, needs, sizeof(needs));
        kb_res_format(&kb_domain_room(s, best->d)->future_idle, true, room, sizeof(room));
        snprintf(msg, sizeof(msg),
                 "no network topology domain%s can hold the whole gang (%u more task(s) need at "
                 "least %s); the largest, %s (tier %d), has %s free",
                 bound, k, needs, best->d->name, (int)best->d->tier, room[0] ? room : "nothing");
        j->fit_error = kb_session_intern(s, msg);
}

/*
 * The domain j's tasks on nodes already pin it to: the highest allowed
 * domain above them (*root), or, when they are not within an allowed one,
 * the reason in *why.  Neither: j has nothing on nodes.
 */
static void anchor(struct kb_session *s, const struct kb_job *j, const struct kb_domain *doms,
                   const struct kb_domain **root, const char **why)
{
        bool split = false;
        const struct kb_domain *d = kb_job_domain(s, j, &split);
        char msg[512];
        *root = NULL;
        *why = NULL;
        if (split) {
                *why = "its tasks on nodes are not all within one network topology domain";
                return;
        }
        if (!d)
                return;
        if (!allowed(j->pg, doms, d)) {
                char bound[300];
                kb_topology_bound_text(j->pg, bound, sizeof(bound));
                snprintf(msg, sizeof(msg),
                         "its tasks on nodes already span %s (tier %d), wider than a domain%s",
                         d->name, (int)d->tier, bound);
                *why = kb_session_intern(s, msg);
                return;
        }
        while (d->parent >= 0 && allowed(j->pg, doms, &doms[d->parent]))
                d = &doms[d->parent];
        *root = d;
}

/* The topmost domain above d (d itself when it has no parent). */
static const struct kb_domain *top_of(const struct kb_domain *doms, const struct kb_domain *d)
{
        while (d->parent >= 0)
                d = &doms[d->parent];
        return d;
}

static void heap_copy(struct kb_heap *dst, const struct kb_heap *src)
{
        *dst = *src;
        dst->cap = src->n + 1;
        dst->v = kb_xmalloc(dst->cap * sizeof(*dst->v));
        memcpy(dst->v, src->v, src->n * sizeof(*src->v));
}

/*
 * The domains j may take (actions-int.h's kb__allocate_in_domain): all
 * allowed ones in *all (*nall of them, the caller frees), those that could
 * take the gang at the front in order (*n); false, with j->fit_error set,
 * when j's tasks on nodes already break the bound.
 */
static inline bool candidates(struct kb_session *s, struct kb_job *j, const struct kb_heap *tasks,
                              struct cand **out, size_t *nall_out, size_t *n_out,
                              struct kb_res *need, uint32_t *k)
{
        const struct kb_podgroup *pg = j->pg;
        size_t nd;
        const struct kb_domain *doms = kb_session_topology_domains(s, &nd);
        const struct kb_domain *root;
        const char *why;

        anchor(s, j, doms, &root, &why);
        if (why) {
                if (!j->fit_error)
                        j->fit_error = why;
                return false;
        }
        struct kb_res request, lneed;
        *k = gang_need(j, tasks, &request, &lneed);
        bool fresh = !root;
        struct cand *all = kb_xmalloc((nd + 1) * sizeof(*all));
        size_t nall = 0, n = 0;
        const struct kb_domain *tree = root ? top_of(doms, root) : NULL;
        for (size_t i = 0; i < nd; i++) {
                const struct kb_domain *d = &doms[i];
                if (d->hi == d->lo || !allowed(pg, doms, d) ||
                    (root && (d->lo < root->lo || d->hi > root->hi) && top_of(doms, d) == tree))
                        continue;
                all[nall++] = (struct cand){d, 0, 0};
        }
        /* The candidates that could take the gang, at the front. */
        for (size_t i = 0; i < nall; i++) {
                const struct kb_domain_room *room = kb_domain_room(s, all[i].d);
                if (!kb_res_le(&lneed, &room->future_idle) ||
                    (fresh && pg->has_min_resources &&
                     !kb_res_le(&pg->min_resources, &room->idle) &&
                     !kb_res_le(&pg->min_resources, &room->future_idle)))
                        continue;
                struct cand cd = all[i];
                cd.score = binpack(s, room, &request);
                cd.share = fresh ? 0 : share(s, j, cd.d);
                all[i] = all[n];
                all[n++] = cd;
        }
        qsort(all, n, sizeof(*all), cmp_cand);
        *need = lneed;
        *out = all;
        *nall_out = nall;
        *n_out = n;
        return true;
}

const struct kb_domain **kb__topology_candidates(struct kb__alloc *c, struct kb_job *j,
                                                 const struct kb_heap *tasks, size_t *n)
{
        struct cand *all;
        size_t nall;
        struct kb_res need;
        uint32_t k;
        *n = 0;
        if (!candidates(c->s, j, tasks, &all, &nall, n, &need, &k))
                return NULL;
        if (!*n) {
                explain(c->s, j, all, nall, &need, k);
                free(all);
                return NULL;
        }
        const struct kb_domain **doms = kb_xmalloc((*n + 1) * sizeof(*doms));
        for (size_t i = 0; i < *n; i++)
                doms[i] = all[i].d;
        free(all);
        return doms;
}

bool kb__allocate_in_domain(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                            struct kb_heap *tasks, struct kb_statement *st)
{
        struct kb_session *s = c->s;
        struct kb__alloc_job *js = &c->jobs[j->index];
        const struct kb_podgroup *pg = j->pg;
        struct cand *all;
        size_t nall, n;
        struct kb_res need;
        uint32_t k;

        if (!candidates(s, j, tasks, &all, &nall, &n, &need, &k))
                return false;
        for (size_t i = 0; i < n; i++) {
                struct kb_heap copy;
                size_t mark = kb_statement_mark(st), nfailed = js->nfailed;
                heap_copy(&copy, tasks);
                kb__allocate_tasks(c, q, j, &copy, all[i].d, st);
                if (kb_statement_mark(st) > mark &&
                    (kb_job_ready(s, j) || kb_job_pipelined(s, j))) {
                        KB_V(4, "allocate: job %s in domain %s (tier %d)", j->name, all[i].d->name,
                             (int)all[i].d->tier);
                        kb_heap_release(tasks);
                        *tasks = copy;
                        free(all);
                        return true;
                }
                kb_statement_rollback(st, mark);
                js->nfailed = nfailed;
                kb_heap_release(&copy);
        }
        if (pg->topology_mode == KB_TOPOLOGY_HARD && !j->fit_error)
                explain(s, j, all, nall, &need, k);
        free(all);
        return false;
}

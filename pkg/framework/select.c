/*
 * Node selection: the best node for a task, fast and exact.
 *
 * Volcano's allocate checks every node for every task: the request must fit
 * the node's future idle resources and every predicate must pass; among
 * those, the nodes where it fits the idle resources come first (a task is
 * pipelined onto room being released only when no node has it free now),
 * and the node with the highest score wins.  At 5,000 nodes and 100,000 tasks that is
 * 5e8 predicate and score calls a session.  kbatch gets the same answer
 * from per-class caches:
 *
 *   - Tasks whose placement specs are equal (requests, nodeSelector, node
 *     affinity, tolerations, images) form a placement class (class.c).
 *     The tasks of one job nearly always share one.
 *   - For a class, the cache keeps per node: the static predicate verdict
 *     (computed once: labels and taints do not change in a session), which
 *     resources are short, and a max-tree (a segment tree over nodes) of
 *     (gradient, score): gradient 2 where the task fits idle resources, 1
 *     where it fits only future idle ones, 0 where the node is infeasible.
 *     The root is the answer.
 *   - Every change to a node's accounting appends the node to the session's
 *     change log.  Before answering, a cache replays the log from where it
 *     last stopped and recomputes those nodes' leaves: O(log N) each.
 *
 * Example: 3 nodes, scores 50 / 70 / 70 for class C, all feasible.  The tree
 * holds max(50,70)=70 at node 1 and 70 at node 2; ties go to the lower
 * index, so the root says node 1.  Placing a task on node 1 logs "1"; the
 * next query for C recomputes node 1 (now 40), and the root says node 2.
 *
 * Correctness rests on purity (KB_PURE in framework.h): a cached callback's
 * answer depends only on the class and the node.  Anything else (a
 * non-pure predicate or node order, or conf.full_scan) makes every query
 * a full scan, which is also what the tests compare the caches against.
 * What depends on other pods — placement filters (pod affinity, topology
 * spread, host ports) and batch scores (normalised over the candidates) —
 * is never cached: search.c evaluates it per task on the cached tree.
 *
 * The reasons a task fits nowhere are counted per class as the leaves
 * change, so "0/5000 nodes are available: ..." costs nothing extra.
 *
 * With a network topology (topology.c) the leaves follow its node order,
 * in which every domain is a range of positions: the best node of one
 * domain (kb_select_node_in) is then a range query on the same tree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

#define MAX_CACHES 64

#define cache kb__cache

struct kb_select {
        struct cache *caches[MAX_CACHES];
        size_t ncaches;
        uint64_t clock;
};

void kb__select_init(struct kb_session *s)
{
        s->select = kb_xcalloc(1, sizeof(*s->select));
}

static void cache_free(struct cache *c)
{
        if (!c)
                return;
        free(c->tree);
        free(c->static_why);
        free(c->short_mask);
        free(c->reasons);
        free(c->reason_count);
        kb__search_cache_free(c);
        free(c);
}

void kb__select_release(struct kb_session *s)
{
        struct kb_select *sel = s->select;
        for (size_t i = 0; i < sel->ncaches; i++)
                cache_free(sel->caches[i]);
        free(sel);
        s->select = NULL;
}

/* ---- the cache ------------------------------------------------------------- */

static void tree_pull(struct cache *c, uint32_t k)
{
        const struct kb__entry *l = &c->tree[2 * k], *r = l + 1;
        c->tree[k] = kb__entry_better(r, l) ? *r : *l;
}

static void count_node(struct cache *c, uint32_t i, int sign)
{
        uint16_t m = c->short_mask[i];
        if (m) {
                for (int d = 0; d < KB_RES_MAX; d++)
                        if (m & (1u << d))
                                c->short_count[d] += (uint32_t)sign;
        } else if (c->static_why[i]) {
                c->reason_count[c->static_why[i] - 1] += (uint32_t)sign;
        }
}

/* kb_res_le(t->resreq, &n->idle) over the interned slots only: the others
 * are zero in both (model.c's account). */
static bool fits_idle(const struct kb_task *t, const struct kb_node_info *n)
{
        for (int i = 0, nres = kb_res_count(); i < nres; i++)
                if (t->resreq->q[i] > n->idle.q[i])
                        return false;
        return true;
}

/* Recomputes leaf i (short resources, score) without touching the tree. */
static void leaf_compute(struct kb_session *s, struct cache *c, uint32_t i)
{
        const struct kb_node_info *n = &s->nodes[i];
        c->short_mask[i] = kb__short_mask(c->proto, n);
        uint32_t leaf = KB__LEAF(c, s, i);
        c->tree[leaf].best = i;
        if (c->short_mask[i] || c->static_why[i]) {
                c->tree[leaf].score = -INFINITY;
                c->tree[leaf].grad = 0;
        } else {
                c->tree[leaf].score = kb_node_order(s, c->proto, n);
                c->tree[leaf].grad = fits_idle(c->proto, n) ? 2 : 1;
        }
}

static struct cache *cache_build(struct kb_session *s, struct kb_task *t)
{
        struct cache *c = kb_xcalloc(1, sizeof(*c));
        size_t nn = s->nnodes;
        c->eclass = t->eclass;
        c->proto = t;
        c->size = 1;
        while (c->size < nn)
                c->size *= 2;
        c->tree = kb_xcalloc(2 * c->size, sizeof(*c->tree));
        c->static_why = kb_xcalloc(nn + 1, sizeof(*c->static_why));
        c->short_mask = kb_xcalloc(nn + 1, sizeof(*c->short_mask));
        size_t capreasons = 0;
        for (uint32_t i = 0; i < nn; i++) {
                const char *why = kb__predicate_static(s, t, &s->nodes[i]);
                if (why) {
                        size_t r;
                        for (r = 0; r < c->nreasons; r++)
                                if (c->reasons[r] == why || strcmp(c->reasons[r], why) == 0)
                                        break;
                        if (r == c->nreasons) {
                                if (c->nreasons >= 65535)
                                        r = 0; /* absurdly many distinct texts: share one */
                                else {
                                        KB_PUSH(c->reasons, c->nreasons, capreasons, why);
                                        c->reason_count = kb_xrealloc(
                                            c->reason_count, c->nreasons * sizeof(uint32_t));
                                        c->reason_count[r] = 0;
                                }
                        }
                        c->static_why[i] = (uint16_t)(r + 1);
                }
                leaf_compute(s, c, i);
                count_node(c, i, +1);
        }
        for (uint32_t i = (uint32_t)nn; i < c->size; i++) {
                c->tree[c->size + i].score = -INFINITY;
                c->tree[c->size + i].grad = 0;
                c->tree[c->size + i].best = UINT32_MAX;
        }
        for (uint32_t k = c->size - 1; k >= 1; k--)
                tree_pull(c, k);
        if (c->size == 1 && nn == 0) {
                c->tree[1].score = -INFINITY;
                c->tree[1].grad = 0;
                c->tree[1].best = UINT32_MAX;
        }
        c->log_pos = s->nchanges;
        return c;
}

static void cache_catch_up(struct kb_session *s, struct cache *c)
{
        for (; c->log_pos < s->nchanges; c->log_pos++) {
                uint32_t i = s->changes[c->log_pos];
                count_node(c, i, -1);
                leaf_compute(s, c, i);
                count_node(c, i, +1);
                /* Up to the root, or to the first entry the change leaves
                 * as it was: the ones above it cannot change either. */
                struct kb__entry *tree = c->tree;
                for (uint32_t k = KB__LEAF(c, s, i) / 2; k >= 1; k /= 2) {
                        const struct kb__entry *l = &tree[2 * k], *r = l + 1;
                        const struct kb__entry *w = kb__entry_better(r, l) ? r : l;
                        if (w->best == tree[k].best && w->grad == tree[k].grad &&
                            w->score == tree[k].score)
                                break;
                        tree[k] = *w;
                }
        }
}

static struct cache *cache_get(struct kb_session *s, struct kb_task *t)
{
        struct kb_select *sel = s->select;
        uint32_t ec = kb__class_of(s, t);
        struct cache *c = NULL;
        for (size_t i = 0; i < sel->ncaches; i++)
                if (sel->caches[i]->eclass == ec) {
                        c = sel->caches[i];
                        break;
                }
        if (!c) {
                c = cache_build(s, t);
                if (sel->ncaches < MAX_CACHES) {
                        sel->caches[sel->ncaches++] = c;
                } else {
                        /* Evict the least recently used class. */
                        size_t lru = 0;
                        for (size_t i = 1; i < sel->ncaches; i++)
                                if (sel->caches[i]->last_use < sel->caches[lru]->last_use)
                                        lru = i;
                        cache_free(sel->caches[lru]);
                        sel->caches[lru] = c;
                }
        } else {
                cache_catch_up(s, c);
        }
        c->last_use = ++sel->clock;
        return c;
}

static const char *cache_reasons(struct kb_session *s, struct cache *c)
{
        return kb__fit_error(s, s->nnodes, c->short_count, c->reasons, c->reason_count,
                             c->nreasons);
}

/* ---- the full scan ----------------------------------------------------------- */

/*
 * Every node of positions [lo, hi) of the topology order (node indices
 * without one) for t, as Volcano's allocate does it: the request must fit
 * the node's future idle resources, every predicate and placement filter
 * must pass; the candidates are the feasible nodes of the best gradient
 * (idle room, else future idle room); batch scores are computed over the
 * candidates (so normalised ones see exactly them), added to the node
 * orders, and the highest total wins, ties to the lower index.
 */
static struct kb_node_info *full_scan(struct kb_session *s, struct kb_task *t, uint32_t lo,
                                      uint32_t hi, const char **why)
{
        size_t nn = hi - lo, nreasons = 0, cap = 0, ncand = 0;
        const char **reasons = NULL;
        uint32_t *counts = NULL, short_count[KB_RES_MAX] = {0};
        struct kb_node_info **cand = kb_xmalloc((nn + 1) * sizeof(*cand));
        uint8_t top = 0;

        for (size_t k = 0; k < nn; k++) {
                size_t i = s->topo_order ? s->topo_order[lo + k] : lo + k;
                struct kb_node_info *node = &s->nodes[i];
                uint16_t m = kb__short_mask(t, node);
                if (m) {
                        for (int d = 0; d < KB_RES_MAX; d++)
                                if (m & (1u << d))
                                        short_count[d]++;
                        continue;
                }
                const char *w = kb_predicate(s, t, node);
                if (w) {
                        size_t r;
                        for (r = 0; r < nreasons; r++)
                                if (reasons[r] == w || strcmp(reasons[r], w) == 0)
                                        break;
                        if (r == nreasons) {
                                size_t capc = cap;
                                KB_PUSH(reasons, nreasons, cap, w);
                                if (cap != capc)
                                        counts = kb_xrealloc(counts, cap * sizeof(*counts));
                                counts[r] = 0;
                        }
                        counts[r]++;
                        continue;
                }
                uint8_t grad = kb_res_le(t->resreq, &node->idle) ? 2 : 1;
                if (grad < top)
                        continue;
                if (grad > top) {
                        top = grad;
                        ncand = 0;
                }
                cand[ncand++] = node;
        }
        struct kb_node_info *best = NULL;
        double *batch = kb_xcalloc(ncand + 1, sizeof(*batch)), best_score = -INFINITY;
        if (ncand && s->cb[KB_POINT_BATCH_NODE_ORDER].n)
                kb_batch_node_order(s, t, cand, ncand, batch);
        for (size_t k = 0; k < ncand; k++) {
                double score = kb_node_order(s, t, cand[k]) + batch[k];
                if (!best || kb__better(top, score, cand[k]->index, top, best_score, best->index)) {
                        best = cand[k];
                        best_score = score;
                }
        }
        if (!best && why)
                *why = kb__fit_error(s, nn, short_count, reasons, counts, nreasons);
        free(reasons);
        free(counts);
        free(batch);
        free(cand);
        return best;
}

/* Batch scorers and placement filters do not stop the caches (search.c
 * handles them); an impure predicate or node order does. */
static bool use_cache(struct kb_session *s)
{
        if (s->conf->full_scan)
                return false;
        static const enum kb_point cached[] = {KB_POINT_PREDICATE, KB_POINT_NODE_ORDER};
        for (size_t p = 0; p < KB_ARRAY_SIZE(cached); p++)
                for (size_t i = 0; i < s->cb[cached[p]].n; i++)
                        if (!(s->cb[cached[p]].v[i].flags & KB_PURE))
                                return false;
        return true;
}

/* ---- the purity contract, checked in test builds ------------------------------ */

#ifdef KB_TESTING
#include <stdarg.h>

unsigned kb__purity_violations;
bool kb__purity_abort = true;

KB_PRINTF(1, 2) static void violation(const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        KB_ERROR("purity contract broken: %s", msg);
        kb__purity_violations++;
        if (kb__purity_abort)
                abort();
}

static bool same_reason(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * Whether the cache that answered for t could have answered honestly: on
 * the chosen node and a few others, every pure callback must answer for t
 * as for the task the cache was built from (same placement class), the
 * predicates' verdict must still be the one cached when the cache was built
 * (static node attributes only), and a feasible node's cached score must be
 * what the node orders say now (nothing outside the node's accounting).
 */
static void check_purity(struct kb_session *s, struct cache *c, const struct kb_task *t,
                         const struct kb_node_info *chosen, const char *why, uint32_t lo,
                         uint32_t hi)
{
        size_t nn = s->nnodes;
        if (!nn)
                return;
        uint32_t sample[4] = {chosen ? chosen->index : 0};
        for (uint32_t k = 1; k < 4; k++)
                sample[k] = (uint32_t)(((uint64_t)t->index * 2654435761u + k * 40503u) % nn);
        for (size_t k = 0; k < 4; k++) {
                uint32_t i = sample[k];
                const struct kb_node_info *n = &s->nodes[i];
                EACH_CB (s, KB_POINT_PREDICATE, e)
                        if (!same_reason(e->fn.predicate(e->arg, t, n),
                                         e->fn.predicate(e->arg, c->proto, n)))
                                violation("predicate of %s answers %s and %s differently on node "
                                          "%s, though they share a placement class",
                                          e->plugin ? e->plugin : "(none)", t->name, c->proto->name,
                                          n->name);
                EACH_CB (s, KB_POINT_NODE_ORDER, e)
                        if (e->fn.node_order(e->arg, t, n) != e->fn.node_order(e->arg, c->proto, n))
                                violation("node order of %s scores %s and %s differently on node "
                                          "%s, though they share a placement class",
                                          e->plugin ? e->plugin : "(none)", t->name, c->proto->name,
                                          n->name);
                const char *now = kb__predicate_static(s, t, n);
                const char *then = c->static_why[i] ? c->reasons[c->static_why[i] - 1] : NULL;
                if (!same_reason(now, then))
                        violation("the predicates' verdict on node %s changed during the session "
                                  "(\"%s\", was \"%s\"): a pure predicate may read only the "
                                  "node's static attributes",
                                  n->name, now ? now : "fits", then ? then : "fits");
                double leaf = c->tree[KB__LEAF(c, s, i)].score;
                if (c->tree[KB__LEAF(c, s, i)].grad && leaf != kb_node_order(s, t, n))
                        violation("node %s's cached score %g is not its score now %g: a pure "
                                  "node order may read only the task's placement spec and the "
                                  "node",
                                  n->name, leaf, kb_node_order(s, t, n));
        }
        /* On small clusters, the whole answer: what a full scan chooses
         * now, with the same reasons when nothing fits. */
        if (nn > 64)
                return;
        const char *scan_why = NULL;
        struct kb_node_info *scan = full_scan(s, (struct kb_task *)t, lo, hi, &scan_why);
        /* A domain's query (a range of the topology order) keeps no reasons. */
        bool whole = lo == 0 && hi == nn;
        if (scan != chosen || (whole && !chosen && why && !same_reason(scan_why, why)))
                violation("the cache chose %s for %s where a full scan chooses %s (%s / %s)",
                          chosen ? chosen->name : "no node", t->name, scan ? scan->name : "no node",
                          why ? why : "", scan_why ? scan_why : "");
}
#endif

/* ---- the answer ----------------------------------------------------------------- */

struct kb_node_info *kb_select_node(struct kb_session *s, struct kb_task *t, const char **why)
{
        if (why)
                *why = NULL;
        /* The nominated node first, when it is feasible (Volcano allocate). */
        const char *nom = t->pod->nominated_node_name;
        if (nom && *nom) {
                struct kb_node_info *n = kb_session_node(s, nom);
                if (n && !kb__short_mask(t, n) && !kb_predicate(s, t, n))
                        return n;
        }
        if (!use_cache(s))
                return full_scan(s, t, 0, (uint32_t)s->nnodes, why);
        struct cache *c = cache_get(s, t);
        const char *reason = NULL;
        bool plain = false;
        uint32_t nn = (uint32_t)s->nnodes;
        struct kb_node_info *n = kb__search(s, c, t, 0, nn, &reason, &plain);
        if (plain) {
                n = c->tree[1].grad == 0 ? NULL : &s->nodes[c->tree[1].best];
                if (!n)
                        reason = cache_reasons(s, c);
        }
#ifdef KB_TESTING
        check_purity(s, c, t, n, reason, 0, nn);
#endif
        if (why)
                *why = n ? NULL : reason;
        return n;
}

/* ---- within a network topology domain ------------------------------------------ */

/* Keeps in *best the better of tree entries *best and k (0: none yet). */
static void take_better(const struct cache *c, uint32_t *best, uint32_t k)
{
        if (!*best || kb__entry_better(&c->tree[k], &c->tree[*best]))
                *best = k;
}

/* The best tree entry over the leaves of positions [lo, hi), 0 when the
 * range is empty: the usual bottom-up range query, O(log N). */
static uint32_t range_best(const struct cache *c, uint32_t lo, uint32_t hi)
{
        uint32_t best = 0;
        for (uint32_t l = lo + c->size, r = hi + c->size; l < r; l /= 2, r /= 2) {
                if (l & 1)
                        take_better(c, &best, l++);
                if (r & 1)
                        take_better(c, &best, --r);
        }
        return best;
}

struct kb_node_info *kb_select_node_in(struct kb_session *s, struct kb_task *t,
                                       const struct kb_domain *d)
{
        const char *nom = t->pod->nominated_node_name;
        if (nom && *nom) {
                struct kb_node_info *n = kb_session_node(s, nom);
                uint32_t pos = n && s->topo_pos ? s->topo_pos[n->index] : UINT32_MAX;
                if (pos >= d->lo && pos < d->hi && !kb__short_mask(t, n) && !kb_predicate(s, t, n))
                        return n;
        }
        if (!use_cache(s))
                return full_scan(s, t, d->lo, d->hi, NULL);
        struct cache *c = cache_get(s, t);
        const char *reason = NULL;
        bool plain = false;
        struct kb_node_info *n = kb__search(s, c, t, d->lo, d->hi, &reason, &plain);
        if (plain) {
                uint32_t k = range_best(c, d->lo, d->hi);
                n = !k || c->tree[k].grad == 0 ? NULL : &s->nodes[c->tree[k].best];
        }
#ifdef KB_TESTING
        check_purity(s, c, t, n, NULL, d->lo, d->hi);
#endif
        return n;
}

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
 *   - Tasks whose placement specs are equal (requests, nodeSelector,
 *     affinity, tolerations) form a placement class (class.c).  The tasks
 *     of one job nearly always share one.
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
 * non-pure callback, batch node orders, or conf.full_scan) makes every query
 * a full scan, which is also what the tests compare the caches against.
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

/* Node i's leaf: its position in the topology order when the session has a
 * network topology (each domain's nodes then form a range of leaves, which
 * kb_select_node_in queries), else i.  Ties still go by node index. */
#define LEAF(c, s, i) ((c)->size + ((s)->topo_pos ? (s)->topo_pos[i] : (i)))

struct cache {
        uint32_t eclass;
        const struct kb_task *proto;
        size_t log_pos;
        uint64_t last_use;
        uint32_t size; /* leaves, a power of two >= nnodes */
        double *score; /* 2*size, [1] is the root */
        uint8_t *grad; /* 2*size: 2 fits idle, 1 fits future idle, 0 infeasible */
        uint32_t *best;
        /* Per node: index+1 into reasons[] of the static verdict (0 passes),
         * and the mask of resources short. */
        uint16_t *static_why;
        uint16_t *short_mask;
        /* Reason counts: per resource slot, and per static reason (counted
         * only for nodes where nothing is short, as Volcano checks resources
         * before predicates). */
        uint32_t short_count[KB_RES_MAX];
        const char **reasons;
        uint32_t *reason_count;
        size_t nreasons;
};

struct kb_select {
        bool cached;
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
        free(c->score);
        free(c->grad);
        free(c->best);
        free(c->static_why);
        free(c->short_mask);
        free(c->reasons);
        free(c->reason_count);
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

/* ---- fit --------------------------------------------------------------------- */

/* Mask of resource slots where t does not fit n's future idle resources. */
static uint16_t short_mask(const struct kb_task *t, const struct kb_node_info *n)
{
        uint16_t mask = 0;
        for (int i = 0; i < KB_RES_MAX; i++)
                if (t->resreq.q[i] > n->idle.q[i] + n->releasing.q[i] - n->pipelined.q[i])
                        mask |= (uint16_t)(1u << i);
        return mask;
}

/* The kube-scheduler wording for a short resource. */
static void short_reason(int slot, char *buf, size_t n)
{
        if (slot == KB_RES_PODS)
                snprintf(buf, n, "Too many pods");
        else
                snprintf(buf, n, "Insufficient %s", kb_res_name(slot));
}

static int cmp_reason_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The fit error, worded as kube-scheduler's FitError: "0/N nodes are
 * available: <count> <reason>, ... ." with the entries sorted as strings.
 * short_count[d] counts the nodes short of resource d; reasons[i] the
 * nodes that failed a predicate with that text (equal texts from
 * different sources are folded).  Both the caches and the full scan word
 * their answers here.
 */
static const char *fit_error(struct kb_session *s, size_t nnodes,
                             const uint32_t short_count[KB_RES_MAX], const char *const *reasons,
                             const uint32_t *counts, size_t nreasons)
{
        char **items = kb_xmalloc((KB_RES_MAX + nreasons + 1) * sizeof(*items));
        size_t k = 0;
        for (int d = 0; d < KB_RES_MAX; d++) {
                if (!short_count[d])
                        continue;
                char why[160];
                short_reason(d, why, sizeof(why));
                items[k++] = kb_xasprintf("%u %s", short_count[d], why);
        }
        for (size_t i = 0; i < nreasons; i++) {
                uint32_t n = counts[i];
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = counts[j] && strcmp(reasons[j], reasons[i]) == 0;
                if (seen || !n)
                        continue;
                for (size_t j = i + 1; j < nreasons; j++)
                        if (strcmp(reasons[j], reasons[i]) == 0)
                                n += counts[j];
                items[k++] = kb_xasprintf("%u %s", n, reasons[i]);
        }
        qsort(items, k, sizeof(*items), cmp_reason_str);
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_printf(&b, "0/%zu nodes are available", nnodes);
        for (size_t i = 0; i < k; i++) {
                kb_buf_adds(&b, i ? ", " : ": ");
                kb_buf_adds(&b, items[i]);
                free(items[i]);
        }
        kb_buf_addc(&b, '.');
        free(items);
        const char *msg = kb_session_intern(s, b.data);
        kb_buf_release(&b);
        return msg;
}

/* ---- the cache ------------------------------------------------------------- */

/* (gradient, score, index) a beats b: the higher gradient, then the higher
 * score, then the lower index (the name that sorts first). */
static inline bool better(uint8_t ga, double sa, uint32_t ia, uint8_t gb, double sb, uint32_t ib)
{
        if (ga != gb)
                return ga > gb;
        return sa > sb || (sa == sb && ia < ib);
}

static void tree_pull(struct cache *c, uint32_t k)
{
        uint32_t l = 2 * k, r = 2 * k + 1;
        uint32_t w =
            better(c->grad[r], c->score[r], c->best[r], c->grad[l], c->score[l], c->best[l]) ? r
                                                                                             : l;
        c->score[k] = c->score[w];
        c->grad[k] = c->grad[w];
        c->best[k] = c->best[w];
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

/* Recomputes leaf i (short resources, score) without touching the tree. */
static void leaf_compute(struct kb_session *s, struct cache *c, uint32_t i)
{
        const struct kb_node_info *n = &s->nodes[i];
        c->short_mask[i] = short_mask(c->proto, n);
        uint32_t leaf = LEAF(c, s, i);
        c->best[leaf] = i;
        if (c->short_mask[i] || c->static_why[i]) {
                c->score[leaf] = -INFINITY;
                c->grad[leaf] = 0;
        } else {
                c->score[leaf] = kb_node_order(s, c->proto, n);
                c->grad[leaf] = kb_res_le(&c->proto->resreq, &n->idle) ? 2 : 1;
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
        c->score = kb_xmalloc(2 * c->size * sizeof(*c->score));
        c->best = kb_xmalloc(2 * c->size * sizeof(*c->best));
        c->grad = kb_xmalloc(2 * c->size * sizeof(*c->grad));
        c->static_why = kb_xcalloc(nn + 1, sizeof(*c->static_why));
        c->short_mask = kb_xcalloc(nn + 1, sizeof(*c->short_mask));
        size_t capreasons = 0;
        for (uint32_t i = 0; i < nn; i++) {
                const char *why = kb_predicate(s, t, &s->nodes[i]);
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
                c->score[c->size + i] = -INFINITY;
                c->grad[c->size + i] = 0;
                c->best[c->size + i] = UINT32_MAX;
        }
        for (uint32_t k = c->size - 1; k >= 1; k--)
                tree_pull(c, k);
        if (c->size == 1 && nn == 0) {
                c->score[1] = -INFINITY;
                c->grad[1] = 0;
                c->best[1] = UINT32_MAX;
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
                for (uint32_t k = LEAF(c, s, i) / 2; k >= 1; k /= 2)
                        tree_pull(c, k);
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
        return fit_error(s, s->nnodes, c->short_count, c->reasons, c->reason_count, c->nreasons);
}

/* ---- the full scan ----------------------------------------------------------- */

/* Positions [lo, hi) of the topology order (node indices without one). */
static struct kb_node_info *full_scan(struct kb_session *s, struct kb_task *t, uint32_t lo,
                                      uint32_t hi, const char **why)
{
        struct kb_node_info *best = NULL;
        double best_score = -INFINITY;
        uint8_t best_grad = 0;
        size_t nn = hi - lo, nreasons = 0, cap = 0;
        const char **reasons = NULL;
        uint32_t *counts = NULL, short_count[KB_RES_MAX] = {0};

        /* Batch scores for every node (Volcano computes them over the
         * feasible list; infeasible nodes' scores are never read). */
        double *batch = NULL;
        if (s->cb[KB_POINT_BATCH_NODE_ORDER].n) {
                struct kb_node_info **list = kb_xmalloc((nn + 1) * sizeof(*list));
                batch = kb_xcalloc(nn + 1, sizeof(*batch));
                for (size_t k = 0; k < nn; k++)
                        list[k] = &s->nodes[s->topo_order ? s->topo_order[lo + k] : lo + k];
                kb_batch_node_order(s, t, list, nn, batch);
                free(list);
        }
        for (size_t k = 0; k < nn; k++) {
                size_t i = s->topo_order ? s->topo_order[lo + k] : lo + k;
                struct kb_node_info *node = &s->nodes[i];
                uint16_t m = short_mask(t, node);
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
                double score = kb_node_order(s, t, node) + (batch ? batch[k] : 0);
                uint8_t grad = kb_res_le(&t->resreq, &node->idle) ? 2 : 1;
                if (!best || better(grad, score, (uint32_t)i, best_grad, best_score, best->index)) {
                        best = node;
                        best_score = score;
                        best_grad = grad;
                }
        }
        if (!best && why)
                *why = fit_error(s, nn, short_count, reasons, counts, nreasons);
        free(reasons);
        free(counts);
        free(batch);
        return best;
}

static bool use_cache(struct kb_session *s)
{
        if (s->conf->full_scan || s->cb[KB_POINT_BATCH_NODE_ORDER].n)
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
                         const struct kb_node_info *chosen)
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
                const char *now = kb_predicate(s, t, n);
                const char *then = c->static_why[i] ? c->reasons[c->static_why[i] - 1] : NULL;
                if (!same_reason(now, then))
                        violation("the predicates' verdict on node %s changed during the session "
                                  "(\"%s\", was \"%s\"): a pure predicate may read only the "
                                  "node's static attributes",
                                  n->name, now ? now : "fits", then ? then : "fits");
                double leaf = c->score[LEAF(c, s, i)];
                if (c->grad[LEAF(c, s, i)] && leaf != kb_node_order(s, t, n))
                        violation("node %s's cached score %g is not its score now %g: a pure "
                                  "node order may read only the task's placement spec and the "
                                  "node",
                                  n->name, leaf, kb_node_order(s, t, n));
        }
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
                if (n && !short_mask(t, n) && !kb_predicate(s, t, n))
                        return n;
        }
        if (!use_cache(s))
                return full_scan(s, t, 0, (uint32_t)s->nnodes, why);
        struct cache *c = cache_get(s, t);
        struct kb_node_info *n = c->grad[1] == 0 ? NULL : &s->nodes[c->best[1]];
#ifdef KB_TESTING
        check_purity(s, c, t, n);
#endif
        if (!n && why)
                *why = cache_reasons(s, c);
        return n;
}

/* ---- within a network topology domain ------------------------------------------ */

/* Keeps in *best the better of tree entries *best and k (0: none yet). */
static void take_better(const struct cache *c, uint32_t *best, uint32_t k)
{
        if (!*best || better(c->grad[k], c->score[k], c->best[k], c->grad[*best], c->score[*best],
                             c->best[*best]))
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
                if (pos >= d->lo && pos < d->hi && !short_mask(t, n) && !kb_predicate(s, t, n))
                        return n;
        }
        if (!use_cache(s))
                return full_scan(s, t, d->lo, d->hi, NULL);
        struct cache *c = cache_get(s, t);
        uint32_t k = range_best(c, d->lo, d->hi);
        struct kb_node_info *n = !k || c->grad[k] == 0 ? NULL : &s->nodes[c->best[k]];
#ifdef KB_TESTING
        check_purity(s, c, t, n);
#endif
        return n;
}

/*
 * The scores nodeorder computes over the candidates, as Volcano master's
 * nodeorder runs kube-scheduler's InterPodAffinity, TaintToleration and
 * PodTopologySpread score plugins (PreScore, Score, NormalizeScore, then
 * times the weight).  Each is normalised over the candidate nodes, so it is
 * a batch score (struct kb_batch_scorer):
 *
 *   podaffinity.weight (2)  InterPodAffinity.  raw(node) = the sum over
 *       topology keys of the weights met in the node's domain: + weight per
 *       pod matching one of the pod's preferred affinity terms, - weight per
 *       pod matching a preferred anti-affinity term, + / - the weights of
 *       existing pods' preferred affinity / anti-affinity terms that match
 *       this pod.  (Existing pods' required affinity counts with
 *       hardPodAffinityWeight, which Volcano leaves at 0.)  Normalised:
 *       100 * (raw - min) / (max - min), 0 when all are equal.
 *   tainttoleration.weight (3)  TaintToleration.  raw = the node's
 *       PreferNoSchedule taints the pod does not tolerate; normalised
 *       100 - 100 * raw / max (integer division), 100 everywhere when max
 *       is 0.
 *   podtopologyspread.weight (2)  PodTopologySpread, ScheduleAnyway
 *       constraints.  Candidates lacking a constraint's key are ignored (0);
 *       per constraint, w = ln(domains among the other candidates + 2) (for
 *       kubernetes.io/hostname: the number of those candidates) and raw +=
 *       matching pods in the node's domain (eligible nodes only; on the
 *       node itself for the hostname) * w + maxSkew - 1, rounded;
 *       normalised 100 * (max + min - raw) / max, 100 everywhere when max
 *       is 0.
 *
 * Worked example (taint toleration, weight 3): candidates a, b, c with 0,
 * 1, 2 untolerated PreferNoSchedule taints: max 2; a 100, b 100 - 50 = 50,
 * c 0; times 3: 300, 150, 0.
 *
 * For node selection, varies() says when a score is the same on every node
 * (no candidate can differ: nothing to compute), or lists the few nodes
 * where it may differ (nodes with such taints; the domains holding pods
 * the preferred terms see).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

#define MAX_NODE_SCORE 100
#define HOSTNAME       "kubernetes.io/hostname"

/* A counter and what it weighs for the pod (sign included). */
struct weighed {
        struct kb__ctr *c;
        int32_t weight;
};

struct soft_rule {
        struct kb__ctr *c; /* per domain (eligible nodes), or per node for the hostname */
        const char *key;
        int32_t max_skew;
        bool hostname;
};

struct prefs {
        struct weighed *aff; /* the pod's preferred terms */
        uint32_t naff;
        struct soft_rule *soft;
        uint32_t nsoft;
};

struct kb__podscore {
        struct kb_session *s;
        int64_t w_aff, w_taint, w_spread;
        struct kb__ipod *ix;
        struct prefs **prefs; /* per task index */
        size_t ntasks, nnodes;
        const struct kb_node_info *nodes;
        /* Nodes with any PreferNoSchedule taint, and per placement class the
         * ones its pods do not tolerate. */
        uint32_t *soft_tainted;
        size_t nsoft_tainted, capsoft;
        struct taint_memo {
                uint32_t eclass;
                uint32_t *nodes;
                size_t n;
        } * memo;
        size_t nmemo, capmemo;
        uint32_t *list; /* varies() answer */
        size_t caplist;
        uint32_t *mark; /* per node: == stamp when listed */
        uint32_t stamp;
        uint32_t *doms; /* domains with a count, for varies() */
        size_t capdoms;
        uint32_t *dstamp; /* per domain: == stamp when seen, for score_spread() */
        size_t capdstamp;
};

/* ---- building ---------------------------------------------------------------------- */

static struct prefs *build_prefs(struct kb__podscore *p, const struct kb_task *t)
{
        struct kb_pool *pool = kb_session_pool(p->s);
        const struct kb_pod *pod = t->pod;
        const struct kb_pod_rules *pr = kb_pod_rules(pod);
        size_t naff = p->w_aff ? pr->npref_affinity + pr->npref_anti_affinity : 0;
        size_t nsoft = 0;
        for (size_t i = 0; p->w_spread && i < pr->nspread; i++)
                nsoft += pr->spread[i].schedule_anyway;
        if (!naff && !nsoft)
                return NULL;
        struct prefs *r = kb_pool_alloc(pool, sizeof(*r));
        r->aff = kb_pool_alloc(pool, (naff + 1) * sizeof(*r->aff));
        for (size_t k = 0; k < 2 && naff; k++) {
                const struct kb_pod_term *terms = k ? pr->pref_anti_affinity : pr->pref_affinity;
                size_t n = k ? pr->npref_anti_affinity : pr->npref_affinity;
                for (size_t i = 0; i < n; i++) {
                        const struct kb_pod_term *term = &terms[i];
                        r->aff[r->naff++] = (struct weighed){
                            kb__ipod_matching(p->ix, &term, 1, term->topology_key, false, NULL),
                            k ? -term->weight : term->weight};
                }
        }
        r->soft = kb_pool_alloc(pool, (nsoft + 1) * sizeof(*r->soft));
        for (size_t i = 0; i < pr->nspread; i++) {
                const struct kb_spread *c = &pr->spread[i];
                if (!c->schedule_anyway || !nsoft)
                        continue;
                const struct kb_pod_term *tp = kb__ipod_spread_term(p->ix, pod, c);
                struct soft_rule *sr = &r->soft[r->nsoft++];
                sr->key = c->topology_key;
                sr->max_skew = c->max_skew;
                sr->hostname = strcmp(c->topology_key, HOSTNAME) == 0;
                sr->c = sr->hostname ? kb__ipod_matching(p->ix, &tp, 1, NULL, true, NULL)
                                     : kb__ipod_matching(p->ix, &tp, 1, c->topology_key, true,
                                                         kb__ipod_eligible(p->ix, pod, c, true));
        }
        return r;
}

/* ---- inter-pod affinity ------------------------------------------------------------- */

static int64_t affinity_raw(const struct prefs *r, struct kb__ctr *const *carriers[2],
                            const size_t ncarriers[2], uint32_t node)
{
        int64_t raw = 0;
        for (uint32_t i = 0; r && i < r->naff; i++)
                raw += (int64_t)r->aff[i].weight *
                       kb__ctr_get(r->aff[i].c, kb__ctr_domain(r->aff[i].c, node));
        for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < ncarriers[k]; i++)
                        raw += (k ? -1 : 1) *
                               (int64_t)kb__ctr_get(carriers[k][i],
                                                    kb__ctr_domain(carriers[k][i], node));
        return raw;
}

static void carriers_of(struct kb__podscore *p, const struct kb_task *t,
                        struct kb__ctr *const *carriers[2], size_t ncarriers[2])
{
        ncarriers[0] = kb__ipod_carriers(p->ix, t, KB__CARRY_PREF_AFF, &carriers[0]);
        ncarriers[1] = kb__ipod_carriers(p->ix, t, KB__CARRY_PREF_ANTI, &carriers[1]);
}

static void score_affinity(struct kb__podscore *p, const struct kb_task *t,
                           struct kb_node_info *const *nodes, size_t n, double *scores)
{
        const struct prefs *r = p->prefs && t->index < p->ntasks ? p->prefs[t->index] : NULL;
        struct kb__ctr *const *carriers[2];
        size_t ncarriers[2];
        carriers_of(p, t, carriers, ncarriers);
        if (!(r && r->naff) && !ncarriers[0] && !ncarriers[1])
                return;
        int64_t *raw = kb_xmalloc((n + 1) * sizeof(*raw)), min = INT64_MAX, max = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
                raw[i] = affinity_raw(r, carriers, ncarriers, nodes[i]->index);
                min = KB_MIN(min, raw[i]);
                max = KB_MAX(max, raw[i]);
        }
        for (size_t i = 0; i < n && max > min; i++) {
                double f = (double)MAX_NODE_SCORE * ((double)(raw[i] - min) / (double)(max - min));
                scores[i] += (double)((int64_t)f * p->w_aff);
        }
        free(raw);
}

/* ---- taint toleration ---------------------------------------------------------------- */

static void score_taints(struct kb__podscore *p, const struct kb_task *t,
                         struct kb_node_info *const *nodes, size_t n, double *scores)
{
        uint32_t *raw = kb_xmalloc((n + 1) * sizeof(*raw)), max = 0;
        for (size_t i = 0; i < n; i++) {
                raw[i] = kb__plugins_intolerable_soft(t->pod, nodes[i]->node);
                max = KB_MAX(max, raw[i]);
        }
        for (size_t i = 0; i < n; i++) {
                int64_t s =
                    max ? MAX_NODE_SCORE - (int64_t)MAX_NODE_SCORE * raw[i] / max : MAX_NODE_SCORE;
                scores[i] += (double)(s * p->w_taint);
        }
        free(raw);
}

/* ---- topology spread ------------------------------------------------------------------- */

static void score_spread(struct kb__podscore *p, const struct kb_task *t,
                         struct kb_node_info *const *nodes, size_t n, double *scores)
{
        const struct prefs *r = p->prefs && t->index < p->ntasks ? p->prefs[t->index] : NULL;
        if (!r || !r->nsoft)
                return;
        bool *ignored = kb_xcalloc(n + 1, sizeof(*ignored));
        size_t nignored = 0;
        for (size_t i = 0; i < n; i++) {
                for (uint32_t k = 0; k < r->nsoft && !ignored[i]; k++)
                        ignored[i] = !kb_meta_label(&nodes[i]->node->meta, r->soft[k].key);
                nignored += ignored[i];
        }
        /* The normalising weight per constraint: ln(size + 2). */
        double *w = kb_xcalloc(r->nsoft + 1, sizeof(*w));
        for (uint32_t k = 0; k < r->nsoft; k++) {
                size_t size = n - nignored;
                if (!r->soft[k].hostname) {
                        const struct kb_domains *dm = kb_session_domains(p->s, r->soft[k].key);
                        if (++p->stamp == 0)
                                p->stamp = 1;
                        size = 0;
                        for (size_t i = 0; i < n; i++) {
                                uint32_t d = dm->of[nodes[i]->index];
                                if (ignored[i] || d == KB_NO_DOMAIN)
                                        continue;
                                if (p->capdstamp < dm->ndomains + 1) {
                                        p->capdstamp = dm->ndomains + 1;
                                        p->dstamp = kb_xrealloc(p->dstamp,
                                                                p->capdstamp * sizeof(*p->dstamp));
                                        memset(p->dstamp, 0, p->capdstamp * sizeof(*p->dstamp));
                                }
                                if (p->dstamp[d] != p->stamp) {
                                        p->dstamp[d] = p->stamp;
                                        size++;
                                }
                        }
                }
                w[k] = log((double)size + 2);
        }
        int64_t *raw = kb_xmalloc((n + 1) * sizeof(*raw)), min = INT64_MAX, max = 0;
        for (size_t i = 0; i < n; i++) {
                if (ignored[i])
                        continue;
                double sum = 0;
                for (uint32_t k = 0; k < r->nsoft; k++) {
                        const struct soft_rule *sr = &r->soft[k];
                        int64_t cnt = kb__ctr_get(sr->c, kb__ctr_domain(sr->c, nodes[i]->index));
                        sum += (double)cnt * w[k] + (double)(sr->max_skew - 1);
                }
                raw[i] = (int64_t)round(sum);
                min = KB_MIN(min, raw[i]);
                max = KB_MAX(max, raw[i]);
        }
        for (size_t i = 0; i < n; i++) {
                int64_t s = 0;
                if (!ignored[i])
                        s = max == 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE * (max + min - raw[i]) / max;
                scores[i] += (double)(s * p->w_spread);
        }
        free(raw);
        free(w);
        free(ignored);
}

/* ---- the scorer ------------------------------------------------------------------------ */

static void score(void *arg, const struct kb_task *t, struct kb_node_info *const *nodes, size_t n,
                  double *scores)
{
        struct kb__podscore *p = arg;
        if (p->w_aff)
                score_affinity(p, t, nodes, n, scores);
        if (p->w_taint)
                score_taints(p, t, nodes, n, scores);
        if (p->w_spread)
                score_spread(p, t, nodes, n, scores);
}

static void list_add(struct kb__podscore *p, size_t *n, uint32_t node)
{
        if (p->mark[node] == p->stamp)
                return;
        p->mark[node] = p->stamp;
        if (*n == p->caplist) {
                p->caplist = p->caplist ? 2 * p->caplist : 64;
                p->list = kb_xrealloc(p->list, p->caplist * sizeof(*p->list));
        }
        p->list[(*n)++] = node;
}

/* The nodes t's class does not tolerate a PreferNoSchedule taint of. */
static const struct taint_memo *taint_nodes(struct kb__podscore *p, struct kb_task *t)
{
        uint32_t ec = kb_task_class(p->s, t);
        for (size_t i = 0; i < p->nmemo; i++)
                if (p->memo[i].eclass == ec)
                        return &p->memo[i];
        struct taint_memo m = {ec, NULL, 0};
        for (size_t i = 0; i < p->nsoft_tainted; i++) {
                uint32_t node = p->soft_tainted[i];
                if (!kb__plugins_intolerable_soft(t->pod, p->nodes[node].node))
                        continue;
                m.nodes = kb_xrealloc(m.nodes, (m.n + 1) * sizeof(*m.nodes));
                m.nodes[m.n++] = node;
        }
        KB_PUSH(p->memo, p->nmemo, p->capmemo, m);
        return &p->memo[p->nmemo - 1];
}

/* Adds the nodes of the domains where c counts something; false when
 * that is too many to list. */
static bool list_domains(struct kb__podscore *p, const struct kb__ctr *c, size_t *n)
{
        size_t nd = kb__ctr_nonzero(c, p->doms, p->capdoms);
        if (nd > p->capdoms) {
                p->capdoms = nd + 1;
                p->doms = kb_xrealloc(p->doms, p->capdoms * sizeof(*p->doms));
                kb__ctr_nonzero(c, p->doms, p->capdoms);
        }
        const struct kb_domains *dm = kb__ctr_domains(c);
        for (size_t k = 0; k < nd; k++) {
                uint32_t d = p->doms[k];
                if (!dm) {
                        list_add(p, n, d);
                        continue;
                }
                if (dm->start[d + 1] - dm->start[d] > p->nnodes / 4 + 16)
                        return false;
                for (uint32_t j = dm->start[d]; j < dm->start[d + 1]; j++)
                        list_add(p, n, dm->nodes[j]);
        }
        return *n <= p->nnodes / 4 + 16;
}

static bool varies(void *arg, const struct kb_task *t, const uint32_t **nodes, size_t *n)
{
        struct kb__podscore *p = arg;
        const struct prefs *r = p->prefs && t->index < p->ntasks ? p->prefs[t->index] : NULL;
        *nodes = NULL;
        *n = 0;
        if (r && r->nsoft)
                return true; /* spread: everywhere */
        /* The stamp must differ from the one score_spread leaves. */
        if (++p->stamp == 0)
                p->stamp = 1;
        bool listed = false;
        if (p->w_taint && p->nsoft_tainted) {
                const struct taint_memo *m = taint_nodes(p, (struct kb_task *)t);
                for (size_t i = 0; i < m->n; i++)
                        list_add(p, n, m->nodes[i]);
                listed = m->n > 0;
        }
        if (p->w_aff) {
                struct kb__ctr *const *carriers[2];
                size_t ncarriers[2];
                carriers_of(p, t, carriers, ncarriers);
                for (uint32_t i = 0; r && i < r->naff; i++) {
                        if (!kb__ctr_nonzero(r->aff[i].c, NULL, 0))
                                continue;
                        if (!list_domains(p, r->aff[i].c, n))
                                return true;
                        listed = true;
                }
                for (int k = 0; k < 2; k++)
                        for (size_t i = 0; i < ncarriers[k]; i++) {
                                if (!kb__ctr_nonzero(carriers[k][i], NULL, 0))
                                        continue;
                                if (!list_domains(p, carriers[k][i], n))
                                        return true;
                                listed = true;
                        }
        }
        *nodes = p->list;
        return listed;
}

/* ---- life ------------------------------------------------------------------------------ */

struct kb__podscore *kb__podscore_open(struct kb_session *s, int64_t w_aff, int64_t w_taint,
                                       int64_t w_spread)
{
        if ((!w_aff && !w_taint && !w_spread) || !kb__any_pending(s))
                return NULL;
        struct kb__podscore *p = kb_xcalloc(1, sizeof(*p));
        p->s = s;
        p->w_aff = w_aff;
        p->w_taint = w_taint;
        p->w_spread = w_spread;
        p->ix = kb__ipod_get(s);
        size_t asked = kb__ipod_requests(p->ix);
        p->nodes = kb_session_nodes(s, &p->nnodes);
        p->mark = kb_xcalloc(p->nnodes + 1, sizeof(*p->mark));
        for (size_t i = 0; i < p->nnodes; i++)
                for (size_t k = 0; k < p->nodes[i].node->ntaints; k++)
                        if (p->nodes[i].node->taints[k].effect == KB_TAINT_PREFER_NO_SCHEDULE) {
                                KB_PUSH(p->soft_tainted, p->nsoft_tainted, p->capsoft, (uint32_t)i);
                                break;
                        }
        struct kb_task *tasks = kb_session_tasks(s, &p->ntasks);
        for (size_t i = 0; i < p->ntasks; i++) {
                const struct kb_task *t = &tasks[i];
                /* Every task of every session: most pods have no rules,
                 * and the task says so without reading the pod. */
                if (!t->has_rules)
                        continue;
                const struct kb_pod_rules *pr = kb_pod_rules(t->pod);
                if (!pr->npref_affinity && !pr->npref_anti_affinity && !pr->nspread)
                        continue;
                for (int k = 0; w_aff && k < 2; k++) {
                        const struct kb_pod_term *terms =
                            k ? pr->pref_anti_affinity : pr->pref_affinity;
                        size_t n = k ? pr->npref_anti_affinity : pr->npref_affinity;
                        for (size_t j = 0; j < n; j++)
                                kb__ipod_carries(
                                    p->ix, t,
                                    kb__ipod_carrying(p->ix,
                                                      k ? KB__CARRY_PREF_ANTI : KB__CARRY_PREF_AFF,
                                                      &terms[j]),
                                    terms[j].weight);
                }
                if (!t->job || t->status != KB_TASK_PENDING)
                        continue;
                struct prefs *r = build_prefs(p, t);
                if (r && !p->prefs)
                        p->prefs = kb_xcalloc(p->ntasks + 1, sizeof(*p->prefs));
                if (r)
                        p->prefs[i] = r;
        }
        /* Nothing to score differently anywhere (no preferred terms, no
         * soft spread, no PreferNoSchedule taint): every node would get
         * the same score, which changes no choice; not registered. */
        if (kb__ipod_requests(p->ix) == asked && (!w_taint || !p->nsoft_tainted)) {
                kb__podscore_close(p);
                return NULL;
        }
        kb_on_batch_node_order(s, (struct kb_batch_scorer){varies, score}, p);
        return p;
}

void kb__podscore_close(struct kb__podscore *p)
{
        if (!p)
                return;
        free(p->prefs);
        free(p->soft_tainted);
        for (size_t i = 0; i < p->nmemo; i++)
                free(p->memo[i].nodes);
        free(p->memo);
        free(p->list);
        free(p->mark);
        free(p->doms);
        free(p->dstamp);
        free(p);
}

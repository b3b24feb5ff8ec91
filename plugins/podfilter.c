/*
 * The placement filters predicates registers: kube-scheduler's NodePorts,
 * InterPodAffinity and PodTopologySpread (DoNotSchedule) Filter plugins,
 * as Volcano's predicates plugin runs them, on the counts of the inter-pod
 * index (interpod.c), in this order, each answer in kube-scheduler's words:
 *
 *   host ports   "node(s) didn't have free ports for the requested pod ports"
 *                (a wanted hostPort in use on the node, same protocol, the
 *                same hostIP or either 0.0.0.0)
 *   affinity     "node(s) didn't match pod affinity rules"
 *                the node must have every term's topology key, and for each
 *                term a pod matching all of the pod's terms must be in the
 *                node's domain of that key; when no such pod is anywhere and
 *                the pod matches its own terms, any node with the keys will
 *                do (the first pod of a series)
 *   anti-affinity  "node(s) didn't match pod anti-affinity rules"
 *                no pod matching a term in the node's domain of its key
 *   symmetry     "node(s) didn't satisfy existing pods anti-affinity rules"
 *                no pod whose own required anti-affinity term matches this
 *                pod in the node's domain of that term's key
 *   spread       "node(s) didn't match pod topology spread constraints"
 *                per DoNotSchedule constraint: matching pods in the node's
 *                domain + 1 if the pod matches its own selector - the least
 *                count over the eligible domains (0 when fewer than
 *                minDomains) must not exceed maxSkew; "... (missing required
 *                label)" for a node without the key.  Eligible nodes have
 *                every constraint's key and pass the inclusion policies
 *                (nodeAffinityPolicy Honor: the pod's node affinity;
 *                nodeTaintsPolicy Honor: its tolerations); pods being
 *                deleted do not count.
 *
 * Worked example (spread): zones a, b, c; pods of app=web: 2 in a, 1 in b,
 * 0 in c; a new app=web pod with maxSkew 1 on zone: the least count is 0
 * (c), so a gives 2+1-0 = 3 > 1 (fails), b gives 2 > 1 (fails), c gives 1
 * (passes).  With minDomains 4 only three zones are eligible, the least
 * count is taken as 0 all the same.
 *
 * Every count includes this session's assumed and pipelined tasks, so the
 * members of one gang see each other, and a rolled-back gang is gone again.
 * For node selection, scope() tells which domains of one key can pass
 * (spread, affinity or anti-affinity on a key with few domains) or which
 * few nodes can (affinity on a key with many, such as the hostname).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

#define REASON_PORTS    "node(s) didn't have free ports for the requested pod ports"
#define REASON_AFFINITY "node(s) didn't match pod affinity rules"
#define REASON_ANTI     "node(s) didn't match pod anti-affinity rules"
#define REASON_EXISTING "node(s) didn't satisfy existing pods anti-affinity rules"
#define REASON_SPREAD   "node(s) didn't match pod topology spread constraints"
#define REASON_SPREAD_LABEL                                                                        \
        "node(s) didn't match pod topology spread constraints (missing required label)"

/* A node list hint is given for affinity when at most this many domains
 * hold matching pods. */
#define HINT_DOMAINS 256
/* A key's domains are hinted when it has at most this many (zones, racks);
 * beyond that (hostnames) computing the hint per task costs more than the
 * pruning saves. */
#define HINT_KEY_DOMAINS 128

struct spread_rule {
        struct kb__ctr *c;
        int32_t max_skew, min_domains;
        bool self; /* the pod matches the constraint's selector */
};

/* What restricts one pending task (built at open). */
struct rules {
        struct kb__ctr **aff; /* one per topology key of the affinity terms */
        uint32_t naff;
        bool aff_self; /* the pod matches all its own affinity terms */
        struct kb__ctr **anti;
        uint32_t nanti;
        struct spread_rule *spread;
        uint32_t nspread;
};

struct kb__podfilter {
        struct kb_session *s;
        bool ports, affinity, spread;
        struct kb__ipod *ix;
        struct rules **rules; /* per task index; NULL: none of its own */
        size_t ntasks;
        /* scope() scratch, the plugin's until its next call */
        uint8_t *allowed;
        size_t capallowed;
        uint32_t *hint;
        size_t caphint;
};

/* ---- building ---------------------------------------------------------------------- */

static bool has_key(const char *const *keys, size_t n, const char *k)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(keys[i], k) == 0)
                        return true;
        return false;
}

static struct rules *build_rules(struct kb__podfilter *f, const struct kb_task *t)
{
        struct kb_pool *pool = kb_session_pool(f->s);
        const struct kb_pod *pod = t->pod;
        const struct kb_pod_rules *pr = kb_pod_rules(pod);
        size_t naff = f->affinity ? pr->naffinity : 0;
        size_t nanti = f->affinity ? pr->nanti_affinity : 0;
        size_t nspread = 0;
        for (size_t i = 0; f->spread && i < pr->nspread; i++)
                nspread += !pr->spread[i].schedule_anyway;
        if (!naff && !nanti && !nspread)
                return NULL;
        struct rules *r = kb_pool_alloc(pool, sizeof(*r));
        if (naff) {
                const struct kb_pod_term **terms = kb_pool_alloc(pool, naff * sizeof(*terms));
                const char **keys = kb_pool_alloc(pool, naff * sizeof(*keys));
                size_t nkeys = 0;
                r->aff_self = true;
                for (size_t i = 0; i < naff; i++) {
                        terms[i] = &pr->affinity[i];
                        r->aff_self &= kb__term_matches(f->ix, terms[i], pod);
                        if (!has_key(keys, nkeys, terms[i]->topology_key))
                                keys[nkeys++] = terms[i]->topology_key;
                }
                r->aff = kb_pool_alloc(pool, nkeys * sizeof(*r->aff));
                for (size_t k = 0; k < nkeys; k++)
                        r->aff[r->naff++] =
                            kb__ipod_matching(f->ix, terms, naff, keys[k], false, NULL);
        }
        if (nanti) {
                r->anti = kb_pool_alloc(pool, nanti * sizeof(*r->anti));
                for (size_t i = 0; i < nanti; i++) {
                        const struct kb_pod_term *term = &pr->anti_affinity[i];
                        r->anti[r->nanti++] =
                            kb__ipod_matching(f->ix, &term, 1, term->topology_key, false, NULL);
                }
        }
        if (nspread) {
                r->spread = kb_pool_alloc(pool, nspread * sizeof(*r->spread));
                for (size_t i = 0; i < pr->nspread; i++) {
                        const struct kb_spread *c = &pr->spread[i];
                        if (c->schedule_anyway)
                                continue;
                        struct spread_rule *sr = &r->spread[r->nspread++];
                        const struct kb_pod_term *tp = kb__ipod_spread_term(f->ix, pod, c);
                        sr->c = kb__ipod_matching(f->ix, &tp, 1, c->topology_key, true,
                                                  kb__ipod_eligible(f->ix, pod, c, false));
                        sr->max_skew = c->max_skew;
                        sr->min_domains = c->min_domains;
                        sr->self = kb_label_selector_matches(&c->selector, &pod->meta);
                }
        }
        return r;
}

/* ---- host ports ------------------------------------------------------------------------- */

/* HostPortInfo.CheckConflict: a wildcard address conflicts with every
 * address on the same protocol and port, any address with itself and the
 * wildcard. */
static bool port_conflict(const struct kb_host_port *a, const struct kb_host_port *b)
{
        if (a->port != b->port || strcmp(a->protocol, b->protocol) != 0)
                return false;
        return strcmp(a->ip, "0.0.0.0") == 0 || strcmp(b->ip, "0.0.0.0") == 0 ||
               strcmp(a->ip, b->ip) == 0;
}

/* Whether a task on a node counts there: not when this session evicted it
 * (Releasing without a deletion timestamp). */
static bool present(const struct kb_task *x)
{
        return !(x->status == KB_TASK_RELEASING && !x->pod->meta.deletion);
}

static bool ports_free(const struct kb_pod *pod, const struct kb_node_info *n)
{
        const struct kb_pod_rules *pr = kb_pod_rules(pod);
        for (const struct kb_task *x = n->tasks; x; x = x->node_next) {
                const struct kb_pod_rules *xr = kb_pod_rules(x->pod);
                if (!xr->nhost_ports || !present(x))
                        continue;
                for (size_t i = 0; i < pr->nhost_ports; i++)
                        for (size_t k = 0; k < xr->nhost_ports; k++)
                                if (port_conflict(&pr->host_ports[i], &xr->host_ports[k]))
                                        return false;
        }
        return true;
}

/* ---- the filter ------------------------------------------------------------------------ */

static bool affinity_exception(const struct rules *r)
{
        if (!r->aff_self)
                return false;
        for (uint32_t i = 0; i < r->naff; i++)
                if (kb__ctr_total(r->aff[i]))
                        return false;
        return true;
}

/* The least count the skew is measured from (int64: the count may be
 * taken as INT32_MAX when no domain is eligible, as kube-scheduler's
 * criticalPaths start). */
static int64_t spread_min(const struct spread_rule *sr)
{
        int32_t min;
        uint32_t ndomains;
        if (!kb__ctr_min(sr->c, &min, &ndomains))
                return sr->min_domains > 0 ? 0 : INT32_MAX;
        return ndomains < (uint32_t)sr->min_domains ? 0 : min;
}

static const char *check(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        struct kb__podfilter *f = arg;
        const struct kb_pod *pod = t->pod;
        uint32_t node = n->index;
        if (f->ports && kb_pod_rules(pod)->nhost_ports && !ports_free(pod, n))
                return REASON_PORTS;
        const struct rules *r = f->rules && t->index < f->ntasks ? f->rules[t->index] : NULL;
        if (r && r->naff) {
                bool exist = true, keys = true;
                for (uint32_t i = 0; i < r->naff && keys; i++) {
                        uint32_t d = kb__ctr_domain(r->aff[i], node);
                        keys = d != KB_NO_DOMAIN;
                        exist &= keys && kb__ctr_get(r->aff[i], d) > 0;
                }
                if (!keys || (!exist && !affinity_exception(r)))
                        return REASON_AFFINITY;
        }
        for (uint32_t i = 0; r && i < r->nanti; i++)
                if (kb__ctr_get(r->anti[i], kb__ctr_domain(r->anti[i], node)) > 0)
                        return REASON_ANTI;
        if (f->affinity) {
                struct kb__ctr *const *carriers;
                size_t nc = kb__ipod_carriers(f->ix, t, KB__CARRY_ANTI, &carriers);
                for (size_t i = 0; i < nc; i++)
                        if (kb__ctr_get(carriers[i], kb__ctr_domain(carriers[i], node)) > 0)
                                return REASON_EXISTING;
        }
        for (uint32_t i = 0; r && i < r->nspread; i++) {
                const struct spread_rule *sr = &r->spread[i];
                uint32_t d = kb__ctr_domain(sr->c, node);
                if (d == KB_NO_DOMAIN)
                        return REASON_SPREAD_LABEL;
                int64_t skew = (int64_t)kb__ctr_get(sr->c, d) + sr->self - spread_min(sr);
                if (skew > sr->max_skew)
                        return REASON_SPREAD;
        }
        return NULL;
}

/* ---- where passing nodes can be ------------------------------------------------------- */

static uint8_t *allowed_for(struct kb__podfilter *f, const struct kb_domains *dm)
{
        if (f->capallowed < dm->ndomains + 1) {
                f->capallowed = dm->ndomains + 1;
                f->allowed = kb_xrealloc(f->allowed, f->capallowed);
        }
        memset(f->allowed, 1, dm->ndomains + 1);
        return f->allowed;
}

/* The nodes of the domains where the affinity counter c has pods, when
 * few: into the hint. */
static bool affinity_nodes(struct kb__podfilter *f, const struct kb__ctr *c,
                           struct kb_filter_hint *h)
{
        uint32_t doms[HINT_DOMAINS];
        size_t nd = kb__ctr_nonzero(c, doms, HINT_DOMAINS);
        if (nd > HINT_DOMAINS)
                return false;
        const struct kb_domains *dm = kb__ctr_domains(c);
        size_t n = 0;
        for (size_t k = 0; k < nd; k++)
                n += dm->start[doms[k] + 1] - dm->start[doms[k]];
        /* A long list is slower than the tree search it replaces. */
        if ((h->nodes && n >= h->nnodes) || n > 1024)
                return false;
        if (f->caphint < n + 1) {
                f->caphint = n + 1;
                f->hint = kb_xrealloc(f->hint, f->caphint * sizeof(*f->hint));
        }
        n = 0;
        for (size_t k = 0; k < nd; k++)
                for (uint32_t j = dm->start[doms[k]]; j < dm->start[doms[k] + 1]; j++)
                        f->hint[n++] = dm->nodes[j];
        h->nodes = f->hint;
        h->nnodes = n;
        return true;
}

static const struct kb_domains *few_domains(const struct kb__ctr *c)
{
        const struct kb_domains *dm = kb__ctr_domains(c);
        return dm && dm->ndomains <= HINT_KEY_DOMAINS ? dm : NULL;
}

static bool scope(void *arg, const struct kb_task *t, struct kb_filter_hint *h)
{
        struct kb__podfilter *f = arg;
        const struct rules *r = f->rules && t->index < f->ntasks ? f->rules[t->index] : NULL;
        struct kb__ctr *const *carriers = NULL;
        size_t nc = f->affinity ? kb__ipod_carriers(f->ix, t, KB__CARRY_ANTI, &carriers) : 0;
        bool ports = f->ports && kb_pod_rules(t->pod)->nhost_ports;
        if (!r && !nc && !ports)
                return false;
        if (!r && !nc)
                return true;

        /* One key's domains: the first rule's key that has few domains. */
        const struct kb_domains *dm = NULL;
        for (uint32_t i = 0; r && i < r->nspread && !dm; i++)
                dm = few_domains(r->spread[i].c);
        for (uint32_t i = 0; r && i < r->naff && !dm; i++)
                dm = few_domains(r->aff[i]);
        for (uint32_t i = 0; r && i < r->nanti && !dm; i++)
                dm = few_domains(r->anti[i]);
        for (size_t i = 0; i < nc && !dm; i++)
                dm = few_domains(carriers[i]);
        bool exception = r && r->naff && affinity_exception(r);
        if (dm) {
                uint8_t *allowed = allowed_for(f, dm);
                bool keyless = true;
                for (uint32_t i = 0; r && i < r->nspread; i++) {
                        const struct spread_rule *sr = &r->spread[i];
                        if (kb__ctr_domains(sr->c) != dm)
                                continue;
                        int64_t min = spread_min(sr);
                        for (uint32_t d = 0; d < dm->ndomains; d++)
                                allowed[d] &=
                                    (int64_t)kb__ctr_get(sr->c, d) + sr->self - min <= sr->max_skew;
                        keyless = false;
                }
                for (uint32_t i = 0; r && i < r->naff; i++) {
                        if (kb__ctr_domains(r->aff[i]) != dm)
                                continue;
                        keyless = false;
                        for (uint32_t d = 0; d < dm->ndomains && !exception; d++)
                                allowed[d] &= kb__ctr_get(r->aff[i], d) > 0;
                }
                for (uint32_t i = 0; r && i < r->nanti; i++)
                        if (kb__ctr_domains(r->anti[i]) == dm)
                                for (uint32_t d = 0; d < dm->ndomains; d++)
                                        allowed[d] &= kb__ctr_get(r->anti[i], d) == 0;
                for (size_t i = 0; i < nc; i++)
                        if (kb__ctr_domains(carriers[i]) == dm)
                                for (uint32_t d = 0; d < dm->ndomains; d++)
                                        allowed[d] &= kb__ctr_get(carriers[i], d) == 0;
                h->domains = dm;
                h->allowed = allowed;
                h->keyless = keyless;
        }
        /* Affinity to pods in few domains: only those domains' nodes. */
        for (uint32_t i = 0; r && !exception && i < r->naff; i++)
                affinity_nodes(f, r->aff[i], h);
        return true;
}

/* ---- life ------------------------------------------------------------------------------ */

struct kb__podfilter *kb__podfilter_open(struct kb_session *s, bool ports, bool affinity,
                                         bool spread)
{
        if ((!ports && !affinity && !spread) || !kb__any_pending(s))
                return NULL;
        struct kb__podfilter *f = kb_xcalloc(1, sizeof(*f));
        f->s = s;
        f->ports = ports;
        f->affinity = affinity;
        f->spread = spread;
        f->ix = kb__ipod_get(s);
        size_t asked = kb__ipod_requests(f->ix);
        struct kb_task *tasks = kb_session_tasks(s, &f->ntasks);
        bool any_ports = false;
        for (size_t i = 0; i < f->ntasks; i++) {
                const struct kb_task *t = &tasks[i];
                /* Every task of every session: most pods have no rules,
                 * and the task says so without reading the pod. */
                if (!t->has_rules)
                        continue;
                const struct kb_pod_rules *pr = kb_pod_rules(t->pod);
                if (!pr->nanti_affinity && !pr->naffinity && !pr->nspread && !pr->nhost_ports)
                        continue;
                /* What existing pods carry: their required anti-affinity. */
                for (size_t k = 0; affinity && k < pr->nanti_affinity; k++)
                        kb__ipod_carries(
                            f->ix, t,
                            kb__ipod_carrying(f->ix, KB__CARRY_ANTI, &pr->anti_affinity[k]), 1);
                if (!t->job || t->status != KB_TASK_PENDING)
                        continue;
                any_ports |= ports && pr->nhost_ports;
                struct rules *r = build_rules(f, t);
                if (r && !f->rules)
                        f->rules = kb_xcalloc(f->ntasks + 1, sizeof(*f->rules));
                if (r)
                        f->rules[i] = r;
        }
        /* A session where no pod asks anything of these filters (most
         * batch sessions) does not register them at all. */
        if (kb__ipod_requests(f->ix) == asked && !any_ports) {
                kb__podfilter_close(f);
                return NULL;
        }
        kb_on_filter(s, (struct kb_filter){scope, check}, f);
        return f;
}

void kb__podfilter_close(struct kb__podfilter *f)
{
        if (!f)
                return;
        free(f->rules);
        free(f->allowed);
        free(f->hint);
        free(f);
}

/*
 * The reservation plugin's network topology part (plugins/reservation.c;
 * docs/scheduling.md, "Reservations"): the domains a hard-topology gang
 * may be reserved in.
 *
 * allocate places a gang whose PodGroup sets spec.networkTopology with
 * mode hard within one domain (actions/topology.c): a HyperNode, or a
 * domain of the conf's node-label tiers, of tier <= highestTierAllowed
 * (with highestTierName instead, at or below a domain of that tierName;
 * with neither, any), and a gang with tasks on nodes already within the
 * domain above them.  Its reservation is planned the same way: at each
 * candidate start, in time order, the allowed domains are tried lowest
 * tier first (allocate's order; then by name, where allocate's binpack
 * score reads the room now, not at the start), each on its own nodes
 * only, and the first that holds the whole gang is its reservation.  So
 * it blocks that domain's room alone.
 *
 * A domain whose nodes' allocatable room, summed, is short of the gang's
 * need never holds it; when every allowed domain is, the gang gets no
 * expected start, and says so.  A soft gang may spread (allocate falls
 * back to every node), and a tierName no domain has makes allocate ignore
 * the topology: both are planned as untopologied gangs.
 *
 * Example: racks r1 {n1, n2} and r2 {n3, n4} of one-cpu nodes, busy until
 * 100, 300 (r1) and 150, 200 (r2); a hard gang of two one-cpu pods,
 * highestTierAllowed 1.  At 150 only n1 and n3 are free: the gang would
 * fit across racks, but in no rack; at 200 r2 holds it: n3 and n4 are
 * reserved from 200, and n1, free from 100, stays open to any pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins-int.h"

/* Whether spec.networkTopology lets j's gang span d (actions/topology.c's
 * rule). */
static bool allowed(const struct kb_podgroup *pg, const struct kb_domain *doms,
                    const struct kb_domain *d)
{
        if (pg->highest_tier >= 0)
                return d->tier <= pg->highest_tier;
        if (!pg->highest_tier_name)
                return true;
        for (const struct kb_domain *a = d;; a = &doms[a->parent]) {
                if (kb_streq(a->tier_name, pg->highest_tier_name))
                        return true;
                if (a->parent < 0)
                        return false;
        }
}

/* Whether some domain carries tierName name. */
static bool tier_name_known(const struct kb_domain *doms, size_t nd, const char *name)
{
        for (size_t i = 0; i < nd; i++)
                if (kb_streq(doms[i].tier_name, name))
                        return true;
        return false;
}

static int cmp_domain(const void *a, const void *b)
{
        const struct kb__resv_domain *x = a, *y = b;
        if (x->d->tier != y->d->tier)
                return x->d->tier < y->d->tier ? -1 : 1;
        return strcmp(x->d->name, y->d->name);
}


bool kb__resv_domains(struct kb_session *s, const struct kb_job *j, const struct kb_res *want,
                      struct kb__resv_domain **out, size_t *nout, const char **why)
{
        const struct kb_podgroup *pg = j->pg;
        *out = NULL;
        *nout = 0;
        *why = NULL;
        if (!pg || pg->topology_mode != KB_TOPOLOGY_HARD)
                return false;
        size_t nd, nn;
        const struct kb_domain *doms = kb_session_topology_domains(s, &nd);
        if (pg->highest_tier < 0 && pg->highest_tier_name &&
            !tier_name_known(doms, nd, pg->highest_tier_name))
                return false;
        struct kb_node_info *nodes = kb_session_nodes(s, &nn);
        char bound[300], msg[1400];
        kb_topology_bound_text(pg, bound, sizeof(bound));

        /* Tasks on nodes already pin the gang under the domain above them. */
        bool split = false;
        const struct kb_domain *pin = kb_job_domain(s, j, &split);
        if (split) {
                *why = "no expected start: its tasks on nodes are not all within one network "
                       "topology domain";
                return true;
        }
        struct kb__resv_domain *v = kb_xcalloc(nd + 1, sizeof(*v));
        size_t n = 0;
        const struct kb__resv_domain *largest = NULL;
        for (size_t i = 0; i < nd; i++) {
                const struct kb_domain *d = &doms[i];
                if (d->hi == d->lo || !allowed(pg, doms, d) ||
                    (pin && (pin->lo < d->lo || pin->hi > d->hi)))
                        continue;
                struct kb__resv_domain rd = {.d = d};
                rd.nodes = kb_xmalloc((d->hi - d->lo + 1) * sizeof(*rd.nodes));
                for (size_t k = 0; k < nn; k++)
                        if (kb_domain_has(s, d, &nodes[k])) {
                                rd.nodes[rd.n++] = (uint32_t)k;
                                kb_res_add(&rd.allocatable, &nodes[k].allocatable);
                        }
                if (!largest || rd.allocatable.q[KB_RES_CPU] > largest->allocatable.q[KB_RES_CPU])
                        largest = &v[n];
                v[n++] = rd;
        }
        if (!n) {
                snprintf(msg, sizeof(msg),
                         "no expected start: no network topology domain%s can hold it", bound);
                *why = kb_session_intern(s, msg);
                free(v);
                return true;
        }
        /* The largest one, named when none can ever hold the gang. */
        char big[200], wants[200];
        const char *big_name = largest->d->name;
        kb_res_format(&largest->allocatable, true, big, sizeof(big));
        size_t keep = 0;
        for (size_t i = 0; i < n; i++) {
                if (kb_res_le(want, &v[i].allocatable))
                        v[keep++] = v[i];
                else
                        free(v[i].nodes);
        }
        if (!keep) {
                kb_res_format(want, true, wants, sizeof(wants));
                snprintf(msg, sizeof(msg),
                         "no expected start: no network topology domain%s is large enough for the "
                         "whole gang (%s) even empty; the largest, %s, has %s",
                         bound, wants, big_name, big);
                *why = kb_session_intern(s, msg);
                free(v);
                return true;
        }
        qsort(v, keep, sizeof(*v), cmp_domain);
        *out = v;
        *nout = keep;
        return true;
}

void kb__resv_domains_free(struct kb__resv_domain *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].nodes);
        free(v);
}

/*
 * The inter-pod index's node eligibility for topology spread: which nodes
 * a constraint counts pods on (its inclusion policies: node affinity,
 * taints), one array per distinct signature of what decides it.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

/* ---- eligibility (topology spread's inclusion policies) --------------------------------- */

static void sig_node_terms(struct kb_buf *b, const struct kb_pod *p)
{
        kb__ipod_key_num(b, p->nnode_selector);
        for (size_t i = 0; i < p->nnode_selector; i++) {
                kb__ipod_key_str(b, p->node_selector[i].key);
                kb__ipod_key_str(b, p->node_selector[i].value);
        }
        kb__ipod_key_num(b, p->nrequired);
        for (size_t i = 0; i < p->nrequired; i++) {
                const struct kb_node_term *t = &p->required[i];
                const struct kb_selector_req *lists[2] = {t->exprs, t->fields};
                size_t counts[2] = {t->nexprs, t->nfields};
                for (int l = 0; l < 2; l++) {
                        kb__ipod_key_num(b, counts[l]);
                        for (size_t k = 0; k < counts[l]; k++) {
                                kb__ipod_key_str(b, lists[l][k].key);
                                kb__ipod_key_num(b, (uint64_t)lists[l][k].op << 32 | lists[l][k].nvalues);
                                for (size_t v = 0; v < lists[l][k].nvalues; v++)
                                        kb__ipod_key_str(b, lists[l][k].values[v]);
                        }
                }
        }
}

const uint8_t *kb__ipod_eligible(struct kb__ipod *ix, const struct kb_pod *pod,
                                 const struct kb_spread *c, bool schedule_anyway)
{
        const struct kb_pod_rules *pr = kb_pod_rules(pod);
        struct kb_buf *sig = &ix->key;
        kb_buf_reset(sig);
        for (size_t i = 0; i < pr->nspread; i++)
                if (pr->spread[i].schedule_anyway == schedule_anyway)
                        kb__ipod_key_str(sig, pr->spread[i].topology_key);
        kb__ipod_key_num(sig, (uint64_t)c->honor_affinity << 1 | c->honor_taints);
        if (c->honor_affinity)
                sig_node_terms(sig, pod);
        if (c->honor_taints) {
                kb__ipod_key_num(sig, pod->ntolerations);
                for (size_t i = 0; i < pod->ntolerations; i++) {
                        const struct kb_toleration *t = &pod->tolerations[i];
                        kb__ipod_key_str(sig, t->key);
                        kb__ipod_key_str(sig, t->value);
                        kb__ipod_key_str(sig, t->effect);
                        kb__ipod_key_num(sig, t->op);
                }
        }
        uint64_t *known = kb_map_get_str(&ix->eligs, sig->data, sig->len);
        if (known)
                return (const uint8_t *)(uintptr_t)*known;
        size_t nn;
        struct kb_node_info *nodes = kb_session_nodes(ix->s, &nn);
        uint8_t *v = kb_xcalloc(nn + 1, 1);
        for (size_t n = 0; n < nn; n++) {
                const struct kb_node *node = nodes[n].node;
                bool ok = true;
                for (size_t i = 0; i < pr->nspread && ok; i++)
                        ok = pr->spread[i].schedule_anyway != schedule_anyway ||
                             kb_meta_label(&node->meta, pr->spread[i].topology_key);
                ok = ok && (!c->honor_affinity || kb__plugins_node_affinity(pod, node));
                ok = ok && (!c->honor_taints || !kb__plugins_untolerated(pod, node));
                v[n] = ok;
        }
        *kb_map_put_str(&ix->eligs, kb__ipod_copy_key(ix, sig), sig->len, NULL) = (uint64_t)(uintptr_t)v;
        return v;
}

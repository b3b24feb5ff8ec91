/*
 * conformance: never picks as a victim what the cluster needs to work, as
 * Volcano's plugins/conformance: pods in kube-system and pods of the
 * system-cluster-critical or system-node-critical priority classes.  The
 * verdict is computed once per task, the first time the task is a
 * candidate (victim votes run for every candidate of every node a
 * preemptor looks at; a session that evicts nothing never computes it).
 * The preemptable vote is a veto (KB_VETO): it protects in every tier.
 */
#include <string.h>

#include "framework/framework.h"

static void *conformance_open(struct kb_session *s, const struct kb_value *args);

const struct kb_plugin kb_plugin_conformance = {
    .name = "conformance",
    .open = conformance_open,
};

enum { UNKNOWN, PROTECTED, FREE };

struct conformance {
        unsigned char *protect; /* per task index: UNKNOWN until asked */
        size_t n;
};

static bool protected_pod(const struct kb_pod *p)
{
        const char *pc = p->priority_class_name ? p->priority_class_name : "";
        return kb_streq(p->meta.namespace, "kube-system") ||
               strcmp(pc, "system-cluster-critical") == 0 ||
               strcmp(pc, "system-node-critical") == 0;
}

static int victims(void *arg, const struct kb_task *preemptor, struct kb_task *const *cand,
                   size_t n, struct kb_task **out)
{
        const struct conformance *c = arg;
        (void)preemptor;
        int k = 0;
        for (size_t i = 0; i < n; i++) {
                uint32_t t = cand[i]->index;
                bool prot;
                if (t < c->n) {
                        if (c->protect[t] == UNKNOWN)
                                c->protect[t] = protected_pod(cand[i]->pod) ? PROTECTED : FREE;
                        prot = c->protect[t] == PROTECTED;
                } else {
                        prot = protected_pod(cand[i]->pod);
                }
                if (!prot)
                        out[k++] = cand[i];
        }
        return k;
}

static void *conformance_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        struct conformance *c = kb_pool_alloc(kb_session_pool(s), sizeof(*c));
        kb_session_tasks(s, &c->n);
        /* Zeroed: every task UNKNOWN. */
        c->protect = kb_pool_alloc(kb_session_pool(s), (c->n + 1) * sizeof(*c->protect));
        /* A protection, not an opinion: it holds in every tier. */
        kb_on_preemptable(s, victims, c, KB_VETO);
        kb_on_reclaimable(s, victims, c);
        return c;
}

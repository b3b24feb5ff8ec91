/*
 * conformance: never picks as a victim what the cluster needs to work, as
 * Volcano's plugins/conformance: pods in kube-system and pods of the
 * system-cluster-critical or system-node-critical priority classes, judged
 * for each candidate when a victim vote asks (a few string compares; a
 * session that evicts nothing asks nothing).  The preemptable vote is a
 * veto (KB_VETO): it protects in every tier.
 */
#include <string.h>

#include "framework/framework.h"

static void *conformance_open(struct kb_session *s, const struct kb_value *args);

const struct kb_plugin kb_plugin_conformance = {
    .name = "conformance",
    .open = conformance_open,
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
        (void)arg;
        (void)preemptor;
        int k = 0;
        for (size_t i = 0; i < n; i++)
                if (!protected_pod(cand[i]->pod))
                        out[k++] = cand[i];
        return k;
}

static void *conformance_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        /* A protection, not an opinion: it holds in every tier. */
        kb_on_preemptable(s, victims, NULL, KB_VETO);
        kb_on_reclaimable(s, victims, NULL);
        return NULL; /* no state of its own */
}

/*
 * conformance: never picks as a victim what the cluster needs to work, as
 * Volcano's plugins/conformance: pods in kube-system and pods of the
 * system-cluster-critical or system-node-critical priority classes.  The
 * verdict is computed once per task when the session opens (victim votes
 * run for every candidate of every node a preemptor looks at).  The
 * preemptable vote is a veto (KB_VETO): it protects in every tier.
 */
#include <string.h>

#include "framework/framework.h"

static void *conformance_open(struct kb_session *s, const struct kb_value *args);

const struct kb_plugin kb_plugin_conformance = {
    .name = "conformance",
    .open = conformance_open,
};

struct conformance {
        bool *protect; /* per task index */
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
                if (t < c->n ? !c->protect[t] : !protected_pod(cand[i]->pod))
                        out[k++] = cand[i];
        }
        return k;
}

static void *conformance_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        struct conformance *c = kb_pool_alloc(kb_session_pool(s), sizeof(*c));
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        for (size_t j = 0; j < njobs; j++)
                for (uint32_t i = 0; i < jobs[j]->ntasks; i++)
                        if (jobs[j]->tasks[i]->index >= c->n)
                                c->n = jobs[j]->tasks[i]->index + 1;
        c->protect = kb_pool_alloc(kb_session_pool(s), (c->n + 1) * sizeof(*c->protect));
        for (size_t j = 0; j < njobs; j++)
                for (uint32_t i = 0; i < jobs[j]->ntasks; i++)
                        c->protect[jobs[j]->tasks[i]->index] =
                            protected_pod(jobs[j]->tasks[i]->pod);
        /* A protection, not an opinion: it holds in every tier. */
        kb_on_preemptable(s, victims, c, KB_VETO);
        kb_on_reclaimable(s, victims, c);
        return c;
}

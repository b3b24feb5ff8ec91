/*
 * A gang's sub-groups (PodGroup spec.subGroupPolicy), as Volcano master's
 * JobInfo builds its SubJobs: a task joins the first policy whose
 * labelSelector matches its pod (every pod when unset) and whose
 * matchLabelKeys it carries, all with non-empty values; its sub-group is
 * that policy and those values.  The other tasks form the default
 * sub-group, which needs 1 task and counts for no minSubGroups.
 *
 * The counts are Volcano's (api/job_info.go): a sub-group is valid while it
 * has a task (CheckSubJobValid counts the sub-groups there are), ready when
 * its ready tasks (allocated, binding, bound, running, succeeded, and
 * pending best-effort) reach subGroupSize (SubJobInfo.IsReady), pipelined
 * when those and its pipelined tasks do (IsPipelined); a policy is met when
 * minSubGroups of its sub-groups are (checkSubJobCondition).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"

size_t kb_subgroup_of(const struct kb_podgroup *pg, const struct kb_task *t, char *id, size_t n,
                      long *match_index)
{
        const struct kb_meta *m = &t->pod->meta;
        for (size_t i = 0; i < pg->nsubgroups; i++) {
                const struct kb_subgroup_policy *sp = &pg->subgroups[i];
                if (!sp->nmatch_keys ||
                    (sp->selector.set && !kb_label_selector_matches(&sp->selector, m)))
                        continue;
                size_t k, len = (size_t)snprintf(id, n, "/%s-", sp->name);
                for (k = 0; k < sp->nmatch_keys; k++) {
                        const char *v = kb_meta_label(m, sp->match_keys[k]);
                        if (!v || !*v)
                                break;
                        if (k == 0) {
                                char *end;
                                *match_index = strtol(v, &end, 10);
                                if (*end || end == v)
                                        *match_index = 0;
                        }
                        if (len < n)
                                len += (size_t)snprintf(id + len, n - len, "%s%s", k ? "-" : "", v);
                }
                if (k == sp->nmatch_keys)
                        return i;
        }
        id[0] = '\0';
        *match_index = 0;
        return pg->nsubgroups;
}

struct kb_subgroup_layout *kb_subgroup_layout(struct kb_pool *pool, const struct kb_job *j)
{
        const struct kb_podgroup *pg = j->pg;
        struct kb_subgroup_layout *l = kb_pool_alloc(pool, sizeof(*l));
        l->group = kb_pool_alloc(pool, (j->ntasks + 1) * sizeof(*l->group));
        l->policy = kb_pool_alloc(pool, (j->ntasks + 1) * sizeof(*l->policy));
        l->min = kb_pool_alloc(pool, (j->ntasks + 1) * sizeof(*l->min));
        char **ids = kb_xcalloc(j->ntasks + 1, sizeof(*ids));
        for (uint32_t i = 0; i < j->ntasks; i++) {
                char id[512];
                long mi = 0;
                size_t pi = kb_subgroup_of(pg, j->tasks[i], id, sizeof(id), &mi);
                uint32_t g = 0;
                while (g < l->ngroups && !(l->policy[g] == pi && strcmp(ids[g], id) == 0))
                        g++;
                if (g == l->ngroups) {
                        ids[g] = kb_xstrdup(id);
                        l->policy[g] = pi;
                        l->min[g] = pi < pg->nsubgroups ? pg->subgroups[pi].size : 1;
                        l->ngroups++;
                }
                l->group[i] = g;
        }
        for (uint32_t g = 0; g < l->ngroups; g++)
                free(ids[g]);
        free(ids);
        return l;
}

long kb_subgroups_unmet(const struct kb_job *j, const struct kb_subgroup_layout *l,
                        enum kb_subgroup_count which, int32_t *have)
{
        const struct kb_podgroup *pg = j->pg;
        if (!pg || !pg->nsubgroups)
                return -1;
        int32_t *count = kb_xcalloc(l->ngroups + 1, sizeof(*count));
        for (uint32_t i = 0; i < j->ntasks; i++) {
                const struct kb_task *t = j->tasks[i];
                enum kb_task_status st = t->status;
                count[l->group[i]] += which == KB_SUBGROUPS_VALID || kb_task_status_allocated(st) ||
                                      st == KB_TASK_SUCCEEDED ||
                                      (st == KB_TASK_PENDING && t->best_effort) ||
                                      (which == KB_SUBGROUPS_PIPELINED && st == KB_TASK_PIPELINED);
        }
        long unmet = -1;
        for (size_t p = 0; p < pg->nsubgroups && unmet < 0; p++) {
                int32_t met = 0;
                for (uint32_t g = 0; g < l->ngroups; g++)
                        met += l->policy[g] == p &&
                               (which == KB_SUBGROUPS_VALID ? count[g] > 0 : count[g] >= l->min[g]);
                if (met < pg->subgroups[p].min_groups) {
                        unmet = (long)p;
                        if (have)
                                *have = met;
                }
        }
        free(count);
        return unmet;
}

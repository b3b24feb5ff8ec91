/*
 * gang's counting (gang.c's banner): which tasks count as valid, ready
 * or pipelined, per role with minTaskMember.  Shared by the gang's votes
 * (gang.c) and its conditions (gang_close.c).
 */
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

/* Whether every role with a minTaskMember has enough tasks counted. */
bool kb__gang_roles_ok(const struct kb_job *j, enum kb__gang_count which)
{
        const struct kb_podgroup *pg = j->pg;
        if (!pg || pg->nmin_task_member == 0)
                return true;
        int64_t total = 0;
        for (size_t r = 0; r < pg->nmin_task_member; r++)
                total += pg->min_task_member[r].min;
        if (j->min_available < total)
                return true;
        for (size_t r = 0; r < pg->nmin_task_member; r++) {
                const struct kb_task_member *m = &pg->min_task_member[r];
                int32_t n = 0;
                if (m->min == 0)
                        continue;
                for (uint32_t i = 0; i < j->ntasks; i++)
                        if (strcmp(j->tasks[i]->role, m->name) == 0 && kb__gang_counts(which, j->tasks[i]))
                                n++;
                if (n < m->min)
                        return false;
        }
        return true;
}

/*
 * backfill: places BestEffort tasks (no requests) of admitted jobs, which
 * allocate leaves alone, as Volcano's actions/backfill.  Such a task needs
 * only the predicates and a free pod slot; it goes to the best-scored
 * feasible node (Volcano takes the first feasible node in map order, which
 * is random; kbatch scores them, so best-effort pods spread as the node
 * order plugins say).  Each job's placements commit together when the job
 * is ready — best-effort tasks still pending count towards readiness, as in
 * Volcano, so in practice they commit as they fit.
 */
#include "framework/framework.h"

static void backfill_execute(struct kb_session *s);

const struct kb_action kb_action_backfill = {
    .name = "backfill",
    .execute = backfill_execute,
};

static void backfill_execute(struct kb_session *s)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        bool gate = kb_conf_has_action(kb_session_conf(s), "enqueue");

        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                if ((gate && j->phase == KB_PG_PENDING) || !j->queue || kb_job_valid(s, j))
                        continue;
                struct kb_statement *st = NULL;
                for (uint32_t k = 0; k < j->ntasks; k++) {
                        struct kb_task *t = j->tasks[k];
                        if (t->status != KB_TASK_PENDING || !t->best_effort)
                                continue;
                        const char *why = NULL;
                        struct kb_node_info *n = kb_select_node(s, t, &why);
                        if (!n) {
                                t->fit_error = why;
                                if (!j->fit_error)
                                        j->fit_error = why;
                                continue;
                        }
                        if (!st)
                                st = kb_statement_new(s);
                        kb_statement_allocate(st, t, n);
                }
                if (!st)
                        continue;
                if (kb_job_ready(s, j))
                        kb_statement_commit(st);
                else
                        kb_statement_discard(st);
        }
}

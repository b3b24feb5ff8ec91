/*
 * What the quota plugins share (quota.h): a job's holdings and
 * reservation, their refusals' words and numbers, publishing deserved.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"
#include "framework/quota.h"

#ifdef KB_TESTING
/* The job's kept sums against a walk over its tasks (test builds). */
static void check_sums(const struct kb_job *j)
{
        struct kb_res held = {0}, pending = {0};
        uint32_t nheld = 0;
        for (uint32_t i = 0; i < j->ntasks; i++) {
                const struct kb_task *t = j->tasks[i];
                if (kb_task_status_allocated(t->status)) {
                        kb_res_add(&held, t->resreq);
                        nheld++;
                } else if (t->status == KB_TASK_PENDING) {
                        kb_res_add(&pending, t->resreq);
                }
        }
        if (memcmp(&held, &j->allocated, sizeof(held)) != 0 ||
            memcmp(&pending, &j->pending_request, sizeof(pending)) != 0 ||
            nheld != j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_BINDING] +
                         j->count[KB_TASK_BOUND] + j->count[KB_TASK_RUNNING])
                kb_die("job %s: its kept sums differ from its tasks'", j->name);
}
#endif

void kb_job_hold(const struct kb_job *j, struct kb_job_hold *h)
{
#ifdef KB_TESTING
        check_sums(j);
#endif
        memset(h, 0, sizeof(*h));
        /* The job's sums, kept by every status change (model.c), rather
         * than a walk over its tasks (the idle W2 session: 100,000). */
        h->nheld = j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_BINDING] +
                   j->count[KB_TASK_BOUND] + j->count[KB_TASK_RUNNING];
        for (int d = 0; d < KB_RES_MAX; d++)
                h->held[d] = (double)j->allocated.q[d];
        bool has_min = j->pg && j->pg->has_min_resources;
        if (has_min)
                for (int d = 0; d < KB_RES_MAX; d++)
                        h->min[d] = (double)j->pg->min_resources.q[d];
        bool reserves =
            has_min && (j->phase == KB_PG_INQUEUE ||
                        (j->phase == KB_PG_RUNNING && h->nheld >= (uint32_t)j->min_available));
        for (int d = 0; d < KB_RES_MAX; d++) {
                h->elastic[d] = fmax(h->held[d] - h->min[d], 0);
                if (reserves && d != KB_RES_PODS)
                        h->reserved[d] = fmax(h->min[d] - h->held[d], 0);
        }
}

void kb_quota_short(struct kb_buf *b, int i, double need, double allocated, double reserved,
                    double elastic, double capability)
{
        char n[48], al[48], res[48], el[48], cap[48];
        kb_buf_printf(
            b,
            "%sinsufficient %s: the group needs %s, the queue has %s allocated, %s "
            "reserved for admitted groups, %s elastic, capability %s",
            b->len > 0 ? "; " : "", kb_res_name(i), kb_res_qty(i, need, n, sizeof(n)),
            kb_res_qty(i, allocated, al, sizeof(al)), kb_res_qty(i, reserved, res, sizeof(res)),
            kb_res_qty(i, elastic, el, sizeof(el)), kb_res_qty(i, capability, cap, sizeof(cap)));
}

void kb_quota_refusal(struct kb_session *s, const struct kb_task *t, const char *queue, int i,
                      double deserved, double allocated, double capability, double most)
{
        const struct kb_job *j = t->job;
        if (j->quota_error)
                return;
        struct kb_res need, gang, own;
        kb_job_need(j, &need, &gang, &own);
        char n[48], d[48], al[48], cap[48], min[24];
        struct kb_buf why;
        kb_buf_init(&why);
        if ((double)gang.q[i] > most) {
                kb_format_i64(j->min_available, min, sizeof(min));
                const char *parts[] = {queue,
                                       " can never hold the gang: its minMember ",
                                       min,
                                       " task(s) need ",
                                       kb_res_name(i),
                                       " ",
                                       kb_res_human(i, (double)gang.q[i], n, sizeof(n)),
                                       ", the most the queue may hold is ",
                                       kb_res_human(i, most, cap, sizeof(cap))};
                kb_buf_add_all(&why, parts, KB_ARRAY_SIZE(parts));
                kb_job_explain_quota(s, j, KB_WHY_NEVER, why.data);
        } else {
                double want = (double)(need.q[i] ? need.q[i] : t->resreq->q[i]);
                const char *parts[] = {
                    queue,
                    ": gang needs ",
                    kb_res_name(i),
                    " ",
                    kb_res_human(i, want, n, sizeof(n)),
                    ", deserved ",
                    kb_res_human(i, deserved, d, sizeof(d)),
                    ", allocated ",
                    kb_res_human(i, allocated - (double)own.q[i], al, sizeof(al)),
                    ", capability ",
                    kb_res_human(i, capability, cap, sizeof(cap))};
                kb_buf_add_all(&why, parts, KB_ARRAY_SIZE(parts));
                kb_job_explain_quota(s, j, KB_WHY_QUOTA, why.data);
        }
        kb_buf_release(&why);
}

void kb_queue_publish(struct kb_queue_info *q, const double *deserved, double share, int32_t parent)
{
        q->parent = parent;
        for (int i = 0; i < KB_RES_MAX; i++)
                q->deserved.q[i] = isfinite(deserved[i]) ? (int64_t)deserved[i] : 0;
        q->share = share;
}

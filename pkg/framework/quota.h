/*
 * What the quota plugins (proportion, capacity) share: a job's holdings and
 * reservation, and the words and numbers of their refusals.  Plugins that
 * keep per-queue quotas include it beside framework.h.
 */
#ifndef KB_PKG_FRAMEWORK_QUOTA_H
#define KB_PKG_FRAMEWORK_QUOTA_H

#include <math.h>

#include "framework/framework.h"

/*
 * What job j holds and reserves, per resource (Volcano's
 * GetInqueueResource and GetElasticResources): held, the requests of its
 * tasks in allocated states (nheld of them); elastic, what it holds beyond
 * its minResources; reserved, for a group with minResources that is
 * Inqueue, or Running and holding at least minMember tasks, the part of
 * minResources it does not hold yet (pods aside).  min is minResources
 * (zeros when it has none).
 */
struct kb_job_hold {
        double held[KB_RES_MAX], elastic[KB_RES_MAX], reserved[KB_RES_MAX], min[KB_RES_MAX];
        uint32_t nheld;
};
void kb_job_hold(const struct kb_job *j, struct kb_job_hold *h);

/* Volcano's resource epsilon: amounts closer than this are equal. */
#define KB_QUOTA_EPS 0.1

/* r as the quota plugins count: one double per slot, an unlimited slot
 * INFINITY. */
static inline void kb_quota_vec(const struct kb_res *r, double *v)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                v[i] = r->q[i] == KB_RES_UNLIMITED ? INFINITY : (double)r->q[i];
}

/* Appends (after "; " when b is not empty) why a group's minResources do
 * not fit a queue in resource i: "insufficient cpu: the group needs 3, the
 * queue has 1 allocated, 2 reserved for admitted groups, 0 elastic,
 * capability 4" (kubectl's quantities). */
void kb_quota_short(struct kb_buf *b, int i, double need, double allocated, double reserved,
                    double elastic, double capability);

/*
 * Says, once per job and session (kb_job_explain_quota), why queue `queue`
 * (a name, or "queue a (ancestor of b)") refuses t in resource i: that it
 * can never hold the gang when minMember tasks ask more than `most` (the
 * most the queue may ever hold), reason NeverFits; else "queue q: gang
 * needs cpu 2, deserved 3, allocated 2, capability 3", reason
 * QueueQuotaExceeded, where the gang's need and the queue's allocated are
 * counted before the gang's own turn (kb_job_need).  Amounts in the
 * plugins' units (milli for cpu); infinity prints as "unlimited".
 */
void kb_quota_refusal(struct kb_session *s, const struct kb_task *t, const char *queue, int i,
                      double deserved, double allocated, double capability, double most);

/* Publishes a queue's deserved (per resource; infinite counts as 0), share
 * and parent (an index into the session's queues, -1 for none) for its
 * status, at a quota plugin's close. */
void kb_queue_publish(struct kb_queue_info *q, const double *deserved, double share,
                      int32_t parent);

#endif /* KB_PKG_FRAMEWORK_QUOTA_H */

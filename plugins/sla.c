/*
 * sla: a service level for how long a job may wait, as Volcano's
 * plugins/sla (pkg/scheduler/plugins/sla/sla.go).
 *
 * A job's waiting time is its PodGroup's annotation
 * volcano.sh/sla-waiting-time, else its annotation sla-waiting-time (as
 * Volcano's JobInfo.SetPodGroup reads them, in pkg/scheduler/api/
 * job_info.go), else the plugin's argument sla-waiting-time; a Go duration
 * ("30m", "1h2m3s") above zero.  A job with none has no service level.
 *
 *   jobOrder     jobs with a waiting time before those without; between
 *                two with one, the earlier deadline (creation + waiting
 *                time) first; otherwise no opinion.
 *   enqueueable  a job whose deadline has passed is permitted; any other
 *                abstains.  A permit ends the vote at the end of its tier
 *                (Volcano's rule, pkg/framework/points.c): with sla in a
 *                tier before proportion or capacity, a job past its
 *                deadline is admitted whatever its queue's room (its
 *                reservation is still charged), while a quota plugin in
 *                sla's own tier that rejects it still keeps it out.
 *   pipelined    the same vote, for allocate (gang's reject still wins).
 *
 * Example: global waiting time 5m, now 08:00.  Group g was created at
 * 07:50 (deadline 07:55, passed) and asks minResources beyond what its
 * queue has left; h was created at 07:59 (deadline 08:04).  In a conf with
 * sla in the first tier and proportion in the second, g is admitted (sla
 * permits and the second tier is not asked) and placed as far as the
 * queue's deserved share lets allocate place it; h waits for room.
 *
 * A waiting time that is no positive duration: as an argument the conf is
 * refused (Volcano logs it and runs without one); as an annotation it is
 * ignored, as Volcano does, with a warning on the PodGroup.  The reading
 * is pkg/framework/waiting.c's, shared with kbatch-sim's clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"

static void *sla_open(struct kb_session *s, const struct kb_value *args);
static int sla_check(const struct kb_value *args, char *err, size_t errlen);

static const char *const sla_args[] = {KB_SLA_ARGUMENT, NULL};

const struct kb_plugin kb_plugin_sla = {
    .name = "sla",
    .open = sla_open,
    .arguments = sla_args,
    .check = sla_check,
};

struct sla {
        struct kb_session *s;
        /* Per job index: whether it has a waiting time, and its deadline
         * (creation + waiting time, wall-clock seconds). */
        double *deadline;
        bool *has;
};

static int sla_check(const struct kb_value *args, char *err, size_t errlen)
{
        const struct kb_value *v = kb_value_get(args, KB_SLA_ARGUMENT);
        char why[200];
        double secs;
        if (v && kb_sla_parse(kb_value_str(v), &secs, why, sizeof(why))) {
                snprintf(err, errlen, "%s: %s", KB_SLA_ARGUMENT, why);
                return KB_EBADCONF;
        }
        return 0;
}

static int job_order(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        const struct sla *p = arg;
        bool lh = p->has[l->index], rh = p->has[r->index];
        if (!lh || !rh)
                return lh == rh ? 0 : lh ? -1 : 1;
        double ld = p->deadline[l->index], rd = p->deadline[r->index];
        return ld < rd ? -1 : ld > rd ? 1 : 0;
}

/* Volcano's permitableFn: permit once the deadline has passed (waited at
 * least the waiting time), else abstain. */
static int permit(void *arg, const struct kb_job *j)
{
        const struct sla *p = arg;
        if (!p->has[j->index])
                return 0;
        if (kb_session_clock(p->s) < p->deadline[j->index]) {
                /* Permitted from its deadline on (repeat.c). */
                kb_session_clock_until(p->s, p->deadline[j->index]);
                return 0;
        }
        return 1;
}

static void *sla_open(struct kb_session *s, const struct kb_value *args)
{
        struct sla *p = kb_pool_alloc(kb_session_pool(s), sizeof(*p));
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        p->s = s;
        p->deadline = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*p->deadline));
        p->has = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*p->has));
        for (size_t i = 0; i < njobs; i++) {
                const struct kb_job *j = jobs[i];
                double wait = 0;
                const char *bad;
                char why[200];
                p->has[j->index] = kb_sla_waiting(args, j->pg, &wait, &bad, why, sizeof(why));
                p->deadline[j->index] = j->creation + wait;
                if (bad) {
                        char *msg = kb_xasprintf("metadata.annotations.%s: %s; ignored (the sla "
                                                 "plugin's waiting time applies, if any)",
                                                 bad, why);
                        kb_job_warn(s, j, "InvalidAnnotation", msg);
                        free(msg);
                }
        }
        kb_on_job_order(s, job_order, p);
        kb_on_job_enqueueable(s, permit, p);
        kb_on_job_pipelined(s, permit, p);
        return p;
}

/*
 * Why a PodGroup or a pod waits, read from what the scheduler wrote.
 *
 * kbatch-scheduler writes a waiting PodGroup's Unschedulable condition with
 * a reason (NeverFits, QueueQuotaExceeded, ...) and a message that names
 * the blocker with numbers and ends with the group's place in its queue:
 *
 *   reason   QueueQuotaExceeded
 *   message  queue prioq: gang needs cpu 21, deserved 9.3, allocated 0,
 *            capability unlimited; 2nd of 5 waiting in queue prioq
 *
 * The report puts the blocker and the place on lines of their own:
 *
 *   PodGroup:   default/big
 *   Queue:      prioq
 *   Phase:      Inqueue
 *   MinMember:  3
 *   Pods:       0 running, 3 pending
 *   Scheduled:  no, waiting for 2m3s (since 2026-01-02T03:04:05Z)
 *   Reason:     QueueQuotaExceeded
 *   Blocker:    queue prioq: gang needs cpu 21, deserved 9.3, allocated 0, ...
 *   Position:   2nd of 5 waiting in queue prioq
 *
 * A message without that ending (another scheduler's) is shown whole.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"

#include "api/api.h"

#define LABEL "%-12s"

static void line(struct kb_buf *out, const char *label, const char *fmt, ...) KB_PRINTF(3, 4);

static void line(struct kb_buf *out, const char *label, const char *fmt, ...)
{
        va_list ap;
        kb_buf_printf(out, LABEL, label);
        va_start(ap, fmt);
        kb_buf_vprintf(out, fmt, ap);
        va_end(ap);
        kb_buf_addc(out, '\n');
}

const char *kb_ctl_pod_group(const struct kb_value *pod)
{
        const struct kb_value *ann = kb_value_dig(pod, "metadata", "annotations");
        const char *g = kb_value_str(kb_value_get(ann, KB_GROUP_ANNOTATION));
        if (!g || !*g)
                g = kb_value_str(kb_value_get(ann, KB_GROUP_ANNOTATION_VOLCANO));
        if (!g || !*g)
                g = kb_value_str(
                    kb_value_dig(pod, "metadata", "labels", KB_GROUP_LABEL_COSCHEDULING));
        return g && *g ? g : NULL;
}

char *kb_ctl_pod_workload_group(const struct kb_value *pod)
{
        if (kb_ctl_pod_group(pod))
                return NULL;
        struct kb_pod *p = NULL;
        char err[256];
        if (kb_pod_decode(pod, &p, err, sizeof(err)))
                return NULL;
        char *g = p->workload_group ? kb_xstrdup(p->workload_group) : NULL;
        kb_pod_free(p);
        return g;
}

/* Whether pod (naming no group) is in the group kbatch makes for its
 * workload, group: decoded only when group has that group's form. */
static bool workload_of(const struct kb_value *pod, const char *group)
{
        if (!kb_has_prefix(group, KB_WORKLOAD_GROUP_PREFIX))
                return false;
        char *g = kb_ctl_pod_workload_group(pod);
        bool in = kb_streq(g, group);
        free(g);
        return in;
}

void kb_ctl_count_pods(const struct kb_value *list, const char *group, struct kb_ctl_pods *out)
{
        memset(out, 0, sizeof(*out));
        const struct kb_value *items = kb_value_get(list, "items");
        if (!kb_value_is(items, KB_VARRAY))
                return;
        for (size_t i = 0; i < items->arr.n; i++) {
                const struct kb_value *p = items->arr.v[i];
                if (!kb_value_is(p, KB_VOBJECT))
                        continue;
                const char *named = kb_ctl_pod_group(p);
                if (named ? !kb_streq(named, group) : !workload_of(p, group))
                        continue;
                const char *phase = kb_value_str(kb_value_dig(p, "status", "phase"));
                const char *node = kb_value_str(kb_value_dig(p, "spec", "nodeName"));
                if (kb_streq(phase, "Running"))
                        out->running++;
                else if (kb_streq(phase, "Succeeded"))
                        out->succeeded++;
                else if (kb_streq(phase, "Failed"))
                        out->failed++;
                else if (phase && !kb_streq(phase, "Pending"))
                        out->unknown++;
                else if (node && *node)
                        out->starting++;
                else
                        out->pending++;
        }
}

/* The condition of type type, or NULL. */
static const struct kb_value *condition(const struct kb_value *obj, const char *type)
{
        const struct kb_value *cs = kb_value_dig(obj, "status", "conditions");
        if (!kb_value_is(cs, KB_VARRAY))
                return NULL;
        for (size_t i = 0; i < cs->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(cs->arr.v[i], "type")), type))
                        return cs->arr.v[i];
        return NULL;
}

static const char *cond_field(const struct kb_value *c, const char *key)
{
        const char *s = kb_value_str(kb_value_get(c, key));
        return s ? s : "";
}

/* How long ago the condition last changed ("2m3s"), and when (its
 * lastTransitionTime as written); false when it has no readable time. */
static bool age_of(const struct kb_value *c, double now, char *age, size_t n, const char **ts)
{
        *ts = kb_value_str(kb_value_get(c, "lastTransitionTime"));
        double t;
        if (!*ts || kb_parse_time(*ts, &t))
                return false;
        kb_human_duration(now - t, age, n);
        return true;
}

static void pods_line(struct kb_buf *out, const struct kb_value *pg, const struct kb_ctl_pods *p)
{
        if (!p) {
                int64_t r = 0, s = 0, f = 0;
                kb_value_int(kb_value_dig(pg, "status", "running"), &r);
                kb_value_int(kb_value_dig(pg, "status", "succeeded"), &s);
                kb_value_int(kb_value_dig(pg, "status", "failed"), &f);
                line(out, "Pods:",
                     "%lld running, %lld succeeded, %lld failed (from its status; pods not listed)",
                     (long long)r, (long long)s, (long long)f);
                return;
        }
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_printf(&b, "%d running, %d pending", p->running, p->pending);
        if (p->starting)
                kb_buf_printf(&b, ", %d bound and starting", p->starting);
        if (p->succeeded)
                kb_buf_printf(&b, ", %d succeeded", p->succeeded);
        if (p->failed)
                kb_buf_printf(&b, ", %d failed", p->failed);
        if (p->unknown)
                kb_buf_printf(&b, ", %d unknown", p->unknown);
        line(out, "Pods:", "%s", b.data);
        kb_buf_release(&b);
}

/* A waiting condition: since when, its reason, and its message split into
 * the blocker and the place in the queue. */
static void waiting_lines(struct kb_buf *out, const struct kb_value *c, double now)
{
        char age[32];
        const char *ts;
        if (age_of(c, now, age, sizeof(age), &ts))
                line(out, "Scheduled:", "no, waiting for %s (since %s)", age, ts);
        else
                line(out, "Scheduled:", "no");
        const char *reason = cond_field(c, "reason");
        const char *msg = cond_field(c, "message");
        const char *pos;
        size_t n = kb_position_split(msg, &pos);
        if (*reason)
                line(out, "Reason:", "%s", reason);
        if (n)
                line(out, "Blocker:", "%.*s", (int)n, msg);
        else if (!pos)
                line(out, "Blocker:", "not given");
        if (pos)
                line(out, "Position:", "%s", pos);
}

/* The reservation plugin's expected start, with how far off it is (the
 * written status holds only the time: a relative one would change every
 * session). */
static void expected_line(struct kb_buf *out, const struct kb_value *status, double now)
{
        const char *ts = kb_value_str(kb_value_get(status, "expectedStartTime"));
        double t;
        if (!ts || kb_parse_time(ts, &t))
                return;
        char d[32];
        kb_human_duration(fabs(t - now), d, sizeof(d));
        line(out, "Expected:", "%s (%s %s)", ts, t >= now ? "in" : "overdue by", d);
}

void kb_ctl_why_podgroup(const struct kb_value *pg, const struct kb_ctl_pods *pods, double now,
                         struct kb_buf *out)
{
        const char *ns = kb_value_str(kb_value_dig(pg, "metadata", "namespace"));
        const char *name = kb_value_str(kb_value_dig(pg, "metadata", "name"));
        const char *queue = kb_value_str(kb_value_dig(pg, "spec", "queue"));
        const struct kb_value *status = kb_value_get(pg, "status");
        const char *phase = kb_value_str(kb_value_get(status, "phase"));
        const char *mm = kb_value_text(kb_value_dig(pg, "spec", "minMember"));
        char age[32];
        const char *ts;

        line(out, "PodGroup:", "%s/%s", kb_ns_or_default(ns), name ? name : "?");
        line(out, "Queue:", "%s", queue && *queue ? queue : "default (none set)");
        line(out, "Phase:", "%s", phase && *phase ? phase : "none yet");
        line(out, "MinMember:", "%s", mm ? mm : "1 (none set)");
        pods_line(out, pg, pods);
        if (kb_value_dig(pg, "metadata", "deletionTimestamp"))
                line(out, "Deleting:", "yes: the PodGroup is being deleted");

        const struct kb_value *unsched = condition(pg, "Unschedulable");
        const struct kb_value *sched = condition(pg, "Scheduled");
        if (unsched && kb_streq(cond_field(unsched, "status"), "True")) {
                waiting_lines(out, unsched, now);
                expected_line(out, status, now);
        } else if ((sched && kb_streq(cond_field(sched, "status"), "True")) ||
                   kb_streq(phase, "Running") || kb_streq(phase, "Completed")) {
                const char *done = kb_streq(phase, "Completed") ? "; its pods have finished" : "";
                if (age_of(sched, now, age, sizeof(age), &ts))
                        line(out, "Scheduled:", "yes, %s ago (%s)%s", age, ts, done);
                else
                        line(out, "Scheduled:", "yes%s", done);
        } else if (!kb_value_is(status, KB_VOBJECT) || !phase) {
                line(out, "Scheduled:",
                     "not yet: no scheduler has written this PodGroup's "
                     "status (is kbatch-scheduler running?)");
        } else {
                line(out, "Scheduled:",
                     "no, and the scheduler has given no reason yet (its "
                     "next session will)");
        }
}

void kb_ctl_why_pod(const struct kb_value *pod, enum kb_ctl_group group, double now,
                    struct kb_buf *out)
{
        const char *ns = kb_value_str(kb_value_dig(pod, "metadata", "namespace"));
        const char *name = kb_value_str(kb_value_dig(pod, "metadata", "name"));
        const char *sched = kb_value_str(kb_value_dig(pod, "spec", "schedulerName"));
        const char *node = kb_value_str(kb_value_dig(pod, "spec", "nodeName"));
        const char *phase = kb_value_str(kb_value_dig(pod, "status", "phase"));
        char *made = kb_ctl_pod_workload_group(pod);
        const char *g = made ? made : kb_ctl_pod_group(pod);

        line(out, "Pod:", "%s/%s", kb_ns_or_default(ns), name ? name : "?");
        line(out, "Scheduler:", "%s", sched && *sched ? sched : "default-scheduler");
        line(out, "Phase:", "%s", phase && *phase ? phase : "none yet");
        line(out, "Node:", "%s", node && *node ? node : "none");
        if (kb_value_dig(pod, "metadata", "deletionTimestamp"))
                line(out, "Deleting:", "yes: the pod is being deleted");
        switch (group) {
        case KB_CTL_GROUP_NONE:
                line(out, "PodGroup:",
                     "none (no scheduling.k8s.io/group-name annotation: "
                     "kbatch schedules it as a group of one)");
                break;
        case KB_CTL_GROUP_FOUND: {
                line(out, "PodGroup:", "%s", g ? g : "?");
                free(made);
                /* The group's report says why it waits; a pod left
                 * pending by a gang that is scheduled says why itself,
                 * else the group's "Scheduled: yes" would be its only
                 * answer (issue 23, point 3). */
                const struct kb_value *pc = condition(pod, "PodScheduled");
                if (!(node && *node) && pc && kb_streq(cond_field(pc, "status"), "False"))
                        waiting_lines(out, pc, now);
                return;
        }
        case KB_CTL_GROUP_MISSING:
                line(out, "PodGroup:", "%s (not found: create it or fix the annotation)",
                     g ? g : "?");
                break;
        case KB_CTL_GROUP_NOT_MADE:
                line(out, "PodGroup:",
                     "%s, not made yet (kbatch-scheduler makes it for the pod's workload "
                     "unless run with --workload-podgroups=false; then the pod is a group "
                     "of one)",
                     g ? g : "?");
                break;
        }
        free(made);
        const struct kb_value *c = condition(pod, "PodScheduled");
        if (node && *node) {
                line(out, "Scheduled:", "yes, bound to %s", node);
        } else if (c && kb_streq(cond_field(c, "status"), "False")) {
                waiting_lines(out, c, now);
        } else if (kb_streq(phase, "Succeeded") || kb_streq(phase, "Failed")) {
                line(out, "Scheduled:", "it finished without a node");
        } else {
                line(out, "Scheduled:",
                     "not yet: no scheduler has written anything on this pod (is a scheduler "
                     "named %s running?)",
                     sched && *sched ? sched : "default-scheduler");
        }
}

/*
 * How long an admitted group may hold its reservation without becoming
 * ready (kbatch; Volcano has no such limit, and a gang admitted with
 * minResources it can never get holds them in its queue forever).
 *
 * A PodGroup with minResources that has been Inqueue for the enqueue
 * action's inqueueTimeout (default 10m; a PodGroup's annotation
 * kbatch.io/inqueue-timeout overrides it, "0" turns it off), with none of
 * its pods on a node, goes back to Pending when the session opens, before
 * the plugins count reservations: what it reserved is free for the others
 * in this very session.  It is not admitted again for inqueueBackoff
 * (default 1m), so that the groups behind it get the room first.
 *
 * The clock lives in the PodGroup's status: a condition of type Inqueue,
 * status True (reason Admitted) since the group was admitted, False
 * (reason InqueueTimeout) since it was sent back.  A group Inqueue without
 * that condition (admitted before kbatch ran) starts its clock now.
 */
#include <stdio.h>
#include <string.h>

#include "framework/framework-int.h"

#define DEFAULT_TIMEOUT 600.0
#define DEFAULT_BACKOFF 60.0

static const struct kb_value *enqueue_args(const struct kb_conf *conf)
{
        for (size_t a = 0; a < conf->nactions; a++)
                if (strcmp(conf->actions[a].name, "enqueue") == 0)
                        return conf->actions[a].arguments;
        return NULL;
}

/* A duration in seconds, -1 when bad (why says so). */
static double parse_seconds(const char *text, char *why, size_t whylen)
{
        int64_t ns;
        if (kb_duration_parse(text, &ns, why, whylen))
                return -1;
        if (ns < 0) {
                snprintf(why, whylen, "must not be negative, got \"%s\"", text);
                return -1;
        }
        return (double)ns / 1e9;
}

/* A duration argument in seconds: def when absent, -1 when bad. */
static double seconds(const struct kb_value *v, double def, char *why, size_t whylen)
{
        if (!v)
                return def;
        const char *text = kb_value_str(v);
        if (!text) {
                snprintf(why, whylen, "must be a duration such as \"10m\"");
                return -1;
        }
        return parse_seconds(text, why, whylen);
}

int kb_inqueue_check(const struct kb_value *args, char *err, size_t errlen)
{
        static const char *const keys[] = {"inqueueTimeout", "inqueueBackoff"};
        char why[200];
        for (size_t k = 0; k < KB_ARRAY_SIZE(keys); k++)
                if (seconds(kb_value_get(args, keys[k]), 0, why, sizeof(why)) < 0) {
                        snprintf(err, errlen, "%s: %s", keys[k], why);
                        return KB_EBADCONF;
                }
        return 0;
}

void kb_inqueue_limits(const struct kb_conf *conf, const struct kb_podgroup *pg, double *timeout,
                       double *backoff)
{
        const struct kb_value *args = enqueue_args(conf);
        char why[200];
        *timeout = seconds(kb_value_get(args, "inqueueTimeout"), DEFAULT_TIMEOUT, why, sizeof(why));
        *backoff = seconds(kb_value_get(args, "inqueueBackoff"), DEFAULT_BACKOFF, why, sizeof(why));
        if (*timeout < 0)
                *timeout = DEFAULT_TIMEOUT; /* refused when the conf loaded */
        if (*backoff < 0)
                *backoff = DEFAULT_BACKOFF;
        const char *own = pg ? kb_meta_annotation(&pg->meta, KB_INQUEUE_TIMEOUT_ANNOTATION) : NULL;
        if (own) {
                double t = parse_seconds(own, why, sizeof(why));
                if (t >= 0)
                        *timeout = t;
        }
}

const struct kb_condition *kb_pg_condition(const struct kb_podgroup *pg, const char *type)
{
        for (size_t i = 0; pg && i < pg->nconditions; i++)
                if (kb_streq(pg->conditions[i].type, type))
                        return &pg->conditions[i];
        return NULL;
}

/* Whether pg holds a reservation the timeout can take back. */
static bool reserves(const struct kb_podgroup *pg)
{
        return pg && pg->has_min_resources;
}

double kb_inqueue_deadline(const struct kb_conf *conf, const struct kb_podgroup *pg)
{
        if (!reserves(pg) || !kb_conf_has_action(conf, "enqueue"))
                return 0;
        const struct kb_condition *c = kb_pg_condition(pg, KB_INQUEUE_CONDITION);
        if (!c || !c->last_transition)
                return 0;
        double timeout, backoff;
        kb_inqueue_limits(conf, pg, &timeout, &backoff);
        if (kb_streq(pg->phase, "Inqueue") && kb_streq(c->status, "True"))
                return timeout > 0 ? c->last_transition + timeout : 0;
        if (kb_streq(pg->phase, "Pending") && kb_streq(c->status, "False") &&
            kb_streq(c->reason, KB_INQUEUE_TIMEOUT_REASON))
                return c->last_transition + backoff;
        return 0;
}

void kb__inqueue_timeouts(struct kb_session *s)
{
        if (!s->has_enqueue)
                return;
        /* Each comparison with the clock says when it turns
         * (kb__clock_until: repeat.c). */
        double now = s->snap->now;
        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                const struct kb_podgroup *pg = j->pg;
                if (!reserves(pg))
                        continue;
                const struct kb_condition *c = kb_pg_condition(pg, KB_INQUEUE_CONDITION);
                double timeout, backoff;
                kb_inqueue_limits(s->conf, pg, &timeout, &backoff);
                if (j->phase == KB_PG_PENDING && c && kb_streq(c->status, "False") &&
                    kb_streq(c->reason, KB_INQUEUE_TIMEOUT_REASON) &&
                    now < c->last_transition + backoff) {
                        j->inqueue_backoff = c->last_transition + backoff;
                        kb__clock_until(s, j->inqueue_backoff);
                        continue;
                }
                if (j->phase != KB_PG_INQUEUE || timeout <= 0 || kb_job_placed_count(j) ||
                    j->count[KB_TASK_SUCCEEDED])
                        continue;
                bool held = c && kb_streq(c->status, "True") && c->last_transition;
                j->inqueue_since = held ? c->last_transition : now;
                if (now - j->inqueue_since < timeout) {
                        kb__clock_until(s, j->inqueue_since + timeout);
                        continue;
                }
                j->phase = KB_PG_PENDING;
                j->inqueue_expired = timeout;
                j->inqueue_backoff = kb__now(s) + backoff;
        }
}

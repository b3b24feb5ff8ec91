/*
 * Declared runtimes: how long a pod says it will run at most, read from
 * the fields Kubernetes and its batch tools already have (issue 19;
 * docs/scheduling.md, "Reservations").  A field that is set but unusable
 * is kept as a message naming it and counts as unset: the gang is then
 * unbounded, and the message reaches the user (event and condition), as
 * every field kbatch reads and cannot act on does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

#define NS_PER_S 1000000000LL
/* Seconds past this (about 292 years in ns) do not fit an int64 of ns. */
#define MAX_SECONDS (INT64_MAX / NS_PER_S)

/* Keeps the first problem only: one is enough to explain a fallback. */
KB_PRINTF(4, 5)
static void invalid(char **out, const struct kb_meta *m, const char *kind, const char *fmt, ...)
{
        if (*out)
                return;
        char why[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        *out = kb_xasprintf("%s %s/%s: %s", kind, kb_meta_ns(m), m->name ? m->name : "?", why);
}

/* A whole number of seconds > 0 as ns, or 0 with *why set. */
static int64_t seconds(const char *text, char *why, size_t n)
{
        char *end = NULL;
        long long v = text ? strtoll(text, &end, 10) : 0;
        if (!text || !*text || *end || end == text) {
                snprintf(why, n, "must be a whole number of seconds, got \"%s\"", text ? text : "");
                return 0;
        }
        if (v <= 0 || v > MAX_SECONDS) {
                snprintf(why, n, "must be greater than 0 (and at most %lld), got %s",
                         (long long)MAX_SECONDS, text);
                return 0;
        }
        return (int64_t)v * NS_PER_S;
}

/* The annotation kbatch.io/runtime-limit: a Go duration > 0. */
static int64_t limit(const struct kb_meta *m, const char *kind, char **bad)
{
        const char *v = kb_meta_annotation(m, KB_RUNTIME_LIMIT_ANNOTATION);
        int64_t ns = 0;
        char why[200];
        if (!v)
                return 0;
        if (kb_duration_parse(v, &ns, why, sizeof(why)) == 0 && ns > 0)
                return ns;
        if (ns <= 0 && kb_duration_parse(v, &ns, why, sizeof(why)) == 0)
                snprintf(why, sizeof(why), "\"%s\": must be greater than 0", v);
        invalid(bad, m, kind, "annotation " KB_RUNTIME_LIMIT_ANNOTATION ": %s", why);
        return 0;
}

void kb__api_pod_runtime(const struct kb_value *spec, struct kb_pod *pod)
{
        char why[200];
        const struct kb_value *ads = kb_value_get(spec, "activeDeadlineSeconds");
        if (ads && ads->type != KB_VNULL) {
                const char *text = kb_value_text(ads);
                if (!text)
                        snprintf(why, sizeof(why), "must be a whole number of seconds");
                pod->active_deadline = text ? seconds(text, why, sizeof(why)) : 0;
                if (!pod->active_deadline)
                        invalid(&pod->runtime_invalid, &pod->meta, "pod",
                                "spec.activeDeadlineSeconds: %s", why);
        }
        const char *kl = kb_meta_label(&pod->meta, KB_KUEUE_MAX_EXEC_LABEL);
        if (kl && !(pod->kueue_limit = seconds(kl, why, sizeof(why))))
                invalid(&pod->runtime_invalid, &pod->meta, "pod",
                        "label " KB_KUEUE_MAX_EXEC_LABEL ": %s", why);
        pod->runtime_limit = limit(&pod->meta, "pod", &pod->runtime_invalid);
}

void kb__api_podgroup_runtime(struct kb_podgroup *pg)
{
        char why[200];
        const char *jd = kb_meta_annotation(&pg->meta, KB_JOB_DEADLINE_ANNOTATION);
        if (jd && !(pg->job_deadline = seconds(jd, why, sizeof(why))))
                invalid(&pg->runtime_invalid, &pg->meta, "podgroup",
                        "annotation " KB_JOB_DEADLINE_ANNOTATION ": %s", why);
        pg->runtime_limit = limit(&pg->meta, "podgroup", &pg->runtime_invalid);
}

int64_t kb_pod_declared_runtime(const struct kb_pod *p, const struct kb_podgroup *pg)
{
        if (p->active_deadline)
                return p->active_deadline;
        if (pg && pg->job_deadline)
                return pg->job_deadline;
        if (p->kueue_limit)
                return p->kueue_limit;
        if (pg && pg->runtime_limit)
                return pg->runtime_limit;
        return p->runtime_limit;
}

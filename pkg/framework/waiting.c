/*
 * A job's service-level waiting time, as Volcano's sla plugin reads it
 * (pkg/scheduler/plugins/sla/sla.go, and JobInfo.SetPodGroup in
 * pkg/scheduler/api/job_info.go): the PodGroup's annotation
 * volcano.sh/sla-waiting-time, else its annotation sla-waiting-time, else
 * the sla plugin's argument sla-waiting-time.  Here, not in plugins/sla.c,
 * because kbatch-sim's clock needs the deadlines too (a group admitted the
 * moment its waiting time runs out is a change by the clock alone).
 */
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"

int kb_sla_parse(const char *text, double *secs, char *why, size_t whylen)
{
        int64_t ns;
        if (!text) {
                snprintf(why, whylen, "must be a duration such as \"10m\"");
                return KB_EBADCONF;
        }
        if (kb_duration_parse(text, &ns, why, whylen))
                return KB_EBADCONF;
        if (ns <= 0) {
                snprintf(why, whylen, "must be above zero, got \"%s\"", text);
                return KB_EBADCONF;
        }
        *secs = (double)ns / 1e9;
        return 0;
}

bool kb_sla_waiting(const struct kb_value *args, const struct kb_podgroup *pg, double *secs,
                    const char **bad_key, char *why, size_t whylen)
{
        *bad_key = NULL;
        /* A bad first annotation falls through to the second, as
         * SetPodGroup reads them. */
        static const char *const keys[] = {KB_SLA_ANNOTATION, KB_SLA_ANNOTATION_PLAIN};
        char skip[200];
        for (size_t k = 0; pg && k < KB_ARRAY_SIZE(keys); k++) {
                const char *text = kb_meta_annotation(&pg->meta, keys[k]);
                if (!text)
                        continue;
                if (kb_sla_parse(text, secs, *bad_key ? skip : why,
                                 *bad_key ? sizeof(skip) : whylen) == 0)
                        return true;
                if (!*bad_key)
                        *bad_key = keys[k];
        }
        char ignored[200];
        const struct kb_value *v = kb_value_get(args, KB_SLA_ARGUMENT);
        return v && kb_sla_parse(kb_value_str(v), secs, ignored, sizeof(ignored)) == 0;
}

double kb_sla_deadline(const struct kb_conf *conf, const struct kb_podgroup *pg)
{
        if (pg->phase && *pg->phase && strcmp(pg->phase, "Pending") != 0)
                return 0;
        for (size_t t = 0; t < conf->ntiers; t++)
                for (size_t p = 0; p < conf->tiers[t].nplugins; p++) {
                        const struct kb_plugin_conf *pc = &conf->tiers[t].plugins[p];
                        if (strcmp(pc->name, "sla") != 0)
                                continue;
                        double secs;
                        const char *bad;
                        char why[200];
                        if (!kb_sla_waiting(pc->arguments, pg, &secs, &bad, why, sizeof(why)))
                                return 0;
                        return pg->meta.creation + secs;
                }
        return 0;
}

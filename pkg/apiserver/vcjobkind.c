/*
 * The batch.volcano.sh Job kind as Volcano's admission webhooks see it: what
 * the validating webhook refuses and what the mutating one fills in.  The
 * controller that runs these Jobs is pkg/kubesim/vcjobctl.c.
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "workload/workload.h"

void kb__validate_vcjob(const struct kb_value *obj, struct kb_causes *c)
{
        struct kb_vcjob *j;
        char err[512];
        if (!kb_vcjob_decode(obj, &j, err, sizeof(err))) {
                kb_vcjob_free(j);
                return;
        }
        /* "vcjob ns/name: spec.tasks: must ...": the field, then why. */
        const char *field = err, *why = err;
        const char *name = kb__meta_str(obj, "name");
        const char *ns = kb__meta_str(obj, "namespace");
        char prefix[600];
        snprintf(prefix, sizeof(prefix), "vcjob %s/%s: ", ns ? ns : "default", name ? name : "");
        if (!strncmp(err, prefix, strlen(prefix)))
                field = err + strlen(prefix);
        const char *sep = strstr(field, ": ");
        char f[256];
        if (sep) {
                snprintf(f, sizeof(f), "%.*s", (int)(sep - field), field);
                why = sep + 2;
        } else {
                snprintf(f, sizeof(f), "spec");
                why = field;
        }
        kb__cause_add(c, "FieldValueInvalid", f, "Invalid value: %s", why);
}

void kb__vcjob_defaults(struct kb_value *obj)
{
        struct kb_vcjob *j;
        char err[512];
        if (kb_vcjob_decode(obj, &j, err, sizeof(err)))
                return; /* validation says why */
        struct kb_value *spec = kb_value_ensure_object(obj, "spec");
        kb_value_set(spec, "queue", kb_value_new_string(j->queue));
        kb_value_set(spec, "schedulerName", kb_value_new_string(j->scheduler_name));
        kb_value_set(spec, "minAvailable", kb_value_new_int(j->min_available));
        int64_t retry = 0;
        if (kb_value_int(kb_value_get(spec, "maxRetry"), &retry) || retry == 0)
                kb_value_set(spec, "maxRetry", kb_value_new_int(3));
        struct kb_value *tasks = kb_value_get(spec, "tasks");
        for (size_t i = 0; i < j->ntasks && kb_value_is(tasks, KB_VARRAY); i++) {
                struct kb_value *t = tasks->arr.v[i];
                kb_value_set(t, "name", kb_value_new_string(j->tasks[i].name));
                kb_value_set(t, "minAvailable", kb_value_new_int(j->tasks[i].min_available));
        }
        kb_vcjob_free(j);
}

void kb__crd_register(struct kb_apiserver *srv, const struct kb_value *crd)
{
        kb__register_crd(srv, crd);
        /* What Volcano's admission webhook refuses of its Jobs. */
        for (size_t i = 0; i < srv->ntypes; i++)
                if (!srv->types[i]->gone && kb__is_vcjobs(srv->types[i]))
                        srv->types[i]->validate = kb__validate_vcjob;
}

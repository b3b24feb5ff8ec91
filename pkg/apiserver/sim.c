/*
 * Simulation, so a job manifest runs end to end with no kubelet and no
 * controller manager.  Runs on the simulation thread, one tick at a time,
 * with srv->mu held.  The controllers have files of their own: nodes.c
 * (simulated nodes), kubelet.c, jobctl.c (the Job controller), vcjobctl.c
 * (Volcano's Job controller); this file
 * holds the tick and the condition helpers they share.
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

struct kb_value *kb__condition(const char *type, const char *status, const char *reason,
                               const char *ts)
{
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "type", kb_value_new_string(type));
        kb_value_set(c, "status", kb_value_new_string(status));
        kb_value_set(c, "lastProbeTime", kb_value_new(KB_VNULL));
        kb_value_set(c, "lastTransitionTime", kb_value_new_string(ts));
        if (reason)
                kb_value_set(c, "reason", kb_value_new_string(reason));
        return c;
}

void kb__set_condition(struct kb_value *conds, struct kb_value *c)
{
        const char *type = kb_value_str(kb_value_get(c, "type"));
        for (size_t i = 0; i < conds->arr.n; i++) {
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), type)) {
                        kb_value_free(conds->arr.v[i]);
                        conds->arr.v[i] = c;
                        return;
                }
        }
        kb_value_append(conds, c);
}

struct kb_value *kb__conds_of(struct kb_value *st)
{
        struct kb_value *conds = kb_value_get(st, "conditions");
        if (!kb_value_is(conds, KB_VARRAY)) {
                conds = kb_value_new(KB_VARRAY);
                kb_value_set(st, "conditions", conds);
        }
        return conds;
}

void kb__sim_tick(struct kb_apiserver *srv)
{
        struct kb_rtype *pods = kb__type_find(srv, "", "v1", "pods");
        struct kb_rtype *jobs = kb__type_find(srv, "batch", "v1", "jobs");
        double now = kb__now();
        kb__sim_reap(srv, pods, now);
        if (srv->opts.kubelet)
                kb__sim_kubelet(srv, pods, now);
        if (srv->opts.job_controller) {
                kb__sim_job_controller(srv, jobs, pods);
                kb__sim_vcjob_controller(srv, pods);
        }
}

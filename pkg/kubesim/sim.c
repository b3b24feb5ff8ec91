/*
 * Simulation, so a job manifest runs end to end with no kubelet and no
 * controller manager.  Runs on the simulation thread, one tick at a time,
 * with srv->mu held.  The controllers have files of their own: nodes.c
 * (simulated nodes), kubelet.c, jobctl.c (the Job controller), vcjobctl.c
 * (Volcano's Job controller); this file
 * holds the tick (the condition helpers they share are in conditions.c).
 */
#include "kubesim/kubesim-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

void kb_kubesim_attach(struct kb_apiserver *srv)
{
        struct kb_store_observer ob = {kb__sim_observe, kb__gc_owner_gone, srv};
        kb__store_observe(srv, &ob);
}

void kb_kubesim_tick(struct kb_apiserver *srv)
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

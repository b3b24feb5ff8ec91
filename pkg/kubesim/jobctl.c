/*
 * The simulated batch/v1 Job controller: keeps min(parallelism, completions
 * - succeeded) pods active, replaces failed ones up to backoffLimit, and
 * sets Complete or Failed.
 */
#include "kubesim/kubesim-int.h"
#include "workload/workload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

static bool job_finished(const struct kb_value *job)
{
        const struct kb_value *conds = kb_value_dig(job, "status", "conditions");
        for (size_t i = 0; kb_value_is(conds, KB_VARRAY) && i < conds->arr.n; i++) {
                const char *t = kb_value_str(kb_value_get(conds->arr.v[i], "type"));
                if ((kb_streq(t, "Complete") || kb_streq(t, "Failed")) &&
                    kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "status")), "True"))
                        return true;
        }
        return false;
}

static void create_pod(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                       const struct kb_value *job)
{
        const struct kb_value *tmpl = kb_value_dig(job, "spec", "template");
        const char *ns = kb__meta_str(job, "namespace");
        const char *jname = kb__meta_str(job, "name");
        struct kb_value *pod = kb_value_new(KB_VOBJECT);
        kb_value_set(pod, "kind", kb_value_new_string("Pod"));
        kb_value_set(pod, "apiVersion", kb_value_new_string("v1"));
        struct kb_value *md = kb_value_ensure_object(pod, "metadata");
        char sfx[6];
        char *name;
        do {
                kb__name_suffix(srv, sfx);
                name = kb_xasprintf("%s-%s", jname, sfx);
                if (!kb__obj_find(pods, ns, name))
                        break;
                free(name);
        } while (1);
        kb_value_set(md, "name", kb_value_new_string(name));
        char *gen = kb_xasprintf("%s-", jname);
        kb_value_set(md, "generateName", kb_value_new_string(gen));
        free(gen);
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        const struct kb_value *tl = kb_value_dig(tmpl, "metadata", "labels");
        const struct kb_value *ta = kb_value_dig(tmpl, "metadata", "annotations");
        if (tl)
                kb_value_set(md, "labels", kb_value_clone(tl));
        if (ta)
                kb_value_set(md, "annotations", kb_value_clone(ta));
        kb_value_set(md, "ownerReferences",
                     kb_workload_owner_refs("batch/v1", "Job", jname, kb__meta_str(job, "uid")));
        const struct kb_value *spec = kb_value_get(tmpl, "spec");
        kb_value_set(pod, "spec", spec ? kb_value_clone(spec) : kb_value_new(KB_VOBJECT));
        kb__prepare_create(srv, pods, pod);
        kb__store_put(srv, pods, pod);
        kb__event_record(srv, jobs, job, "Normal", "SuccessfulCreate", "job-controller",
                         "Created pod: %s", name);
        free(name);
}

static void job_sync(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                     const struct kb_value *job)
{
        const char *uid = kb__meta_str(job, "uid");
        int64_t par = 1, comp = 1, backoff = 6, active = 0, succeeded = 0, failed = 0, ready = 0;
        bool has_comp = kb_value_int(kb_value_dig(job, "spec", "completions"), &comp) == 0;
        kb_value_int(kb_value_dig(job, "spec", "parallelism"), &par);
        kb_value_int(kb_value_dig(job, "spec", "backoffLimit"), &backoff);
        bool suspend = kb_value_bool(kb_value_dig(job, "spec", "suspend"), false);
        const struct kb_owner_counts *counts = kb__sim_owner_counts(srv, uid);
        if (counts) {
                active = counts->active;
                ready = counts->ready;
                succeeded = counts->succeeded;
                failed = counts->failed;
        }
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        const char *finish = NULL, *reason = NULL, *message = NULL;
        if (failed > backoff) {
                finish = "Failed";
                reason = "BackoffLimitExceeded";
                message = "Job has reached the specified backoff limit";
        } else if ((has_comp && succeeded >= comp) || (!has_comp && succeeded > 0 && !active)) {
                finish = "Complete";
        }
        if (finish && kb_streq(finish, "Failed")) {
                size_t n;
                char **keys = kb__sim_owned_pods(srv, uid, &n);
                for (size_t i = 0; i < n; i++) {
                        struct kb_obj *o = NULL;
                        HASH_FIND_STR(pods->objs, keys[i], o);
                        const char *phase =
                            o ? kb_value_str(kb_value_dig(o->doc->v, "status", "phase")) : NULL;
                        if (o && !kb_streq(phase, "Succeeded") && !kb_streq(phase, "Failed"))
                                kb__store_delete(srv, pods, o, 0);
                }
                kb__strv_free(keys, n);
                active = ready = 0;
        }
        if (!finish && !suspend) {
                int64_t want = has_comp ? KB_MIN(par, comp - succeeded) : (succeeded ? 0 : par);
                for (int64_t i = active; i < want; i++) {
                        create_pod(srv, jobs, pods, job);
                        active++;
                }
        }
        struct kb_value *nj = kb_value_clone(job);
        struct kb_value *st = kb_value_ensure_object(nj, "status");
        if (!kb_value_get(st, "startTime") && !suspend)
                kb_value_set(st, "startTime", kb_value_new_string(ts));
        kb_value_set(st, "active", kb_value_new_int(active));
        kb_value_set(st, "ready", kb_value_new_int(ready));
        kb_value_set(st, "succeeded", kb_value_new_int(succeeded));
        kb_value_set(st, "failed", kb_value_new_int(failed));
        kb_value_set(st, "terminating", kb_value_new_int(0));
        if (!active)
                kb_value_del(st, "active");
        if (!failed)
                kb_value_del(st, "failed");
        if (!succeeded)
                kb_value_del(st, "succeeded");
        if (finish) {
                struct kb_value *conds = kb__conds_of(st);
                if (!strcmp(finish, "Complete")) {
                        struct kb_value *c =
                            kb__condition("SuccessCriteriaMet", "True", "CompletionsReached", ts);
                        kb_value_set(c, "lastProbeTime", kb_value_new_string(ts));
                        kb_value_set(
                            c, "message",
                            kb_value_new_string("Reached expected number of succeeded pods"));
                        kb__set_condition(conds, c);
                        kb_value_set(st, "completionTime", kb_value_new_string(ts));
                }
                struct kb_value *c = kb__condition(finish, "True", reason, ts);
                kb_value_set(c, "lastProbeTime", kb_value_new_string(ts));
                if (message)
                        kb_value_set(c, "message", kb_value_new_string(message));
                kb__set_condition(conds, c);
        }
        if (kb_value_equal(nj, job)) {
                kb_value_free(nj);
                return;
        }
        struct kb_doc *d = kb__store_put(srv, jobs, nj);
        if (finish && !strcmp(finish, "Complete"))
                kb__event_record(srv, jobs, d->v, "Normal", "Completed", "job-controller",
                                 "Job completed");
        else if (finish)
                kb__event_record(srv, jobs, d->v, "Warning", "BackoffLimitExceeded",
                                 "job-controller", "Job has reached the specified backoff limit");
}

/*
 * One Job controller tick: sync the jobs that were written, or one of whose
 * pods was, since the last tick (simindex.c keeps the set and the per-owner
 * counts), so an idle tick costs nothing however many jobs and pods exist.
 */
void kb__sim_job_controller(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods)
{
        size_t n;
        char **keys = kb__sim_take_dirty(srv, KB_SIM_JOBS, &n);
        uint64_t rv0 = srv->rv;
        for (size_t i = 0; i < n; i++) {
                if (srv->rv - rv0 >= KB_SIM_TICK_BUDGET) {
                        kb__sim_requeue(srv, KB_SIM_JOBS, keys[i]);
                        continue;
                }
                struct kb_obj *j = NULL;
                HASH_FIND_STR(jobs->objs, keys[i], j);
                if (j && !job_finished(j->doc->v) &&
                    !kb_value_dig(j->doc->v, "metadata", "deletionTimestamp"))
                        job_sync(srv, jobs, pods, j->doc->v);
        }
        kb__strv_free(keys, n);
}

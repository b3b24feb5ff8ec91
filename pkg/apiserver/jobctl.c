/*
 * The simulated batch/v1 Job controller: keeps min(parallelism, completions
 * - succeeded) pods active, replaces failed ones up to backoffLimit, and
 * sets Complete or Failed.
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

static bool owned_by(const struct kb_value *pod, const char *uid)
{
        const struct kb_value *refs = kb_value_dig(pod, "metadata", "ownerReferences");
        for (size_t i = 0; kb_value_is(refs, KB_VARRAY) && i < refs->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(refs->arr.v[i], "uid")), uid))
                        return true;
        return false;
}

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
        struct kb_value *refs = kb_value_new(KB_VARRAY);
        struct kb_value *ref = kb_value_new(KB_VOBJECT);
        kb_value_set(ref, "apiVersion", kb_value_new_string("batch/v1"));
        kb_value_set(ref, "kind", kb_value_new_string("Job"));
        kb_value_set(ref, "name", kb_value_new_string(jname));
        kb_value_set(ref, "uid", kb_value_new_string(kb__meta_str(job, "uid")));
        kb_value_set(ref, "controller", kb_value_new_bool(true));
        kb_value_set(ref, "blockOwnerDeletion", kb_value_new_bool(true));
        kb_value_append(refs, ref);
        kb_value_set(md, "ownerReferences", refs);
        const struct kb_value *spec = kb_value_get(tmpl, "spec");
        kb_value_set(pod, "spec", spec ? kb_value_clone(spec) : kb_value_new(KB_VOBJECT));
        kb__prepare_create(srv, pods, pod);
        kb__store_put(srv, pods, pod);
        kb__event_record(srv, jobs, job, "Normal", "SuccessfulCreate", "job-controller",
                         "Created pod: %s", name);
        free(name);
}

/*
 * Each tick counts every job's pods in one pass over the pods, indexed by
 * owner uid: asking every job to scan every pod was O(jobs x pods) per tick
 * and, at 1,000 jobs of 10 pods, took the whole CPU.
 */
struct owned {
        UT_hash_handle hh;
        int64_t active, ready, succeeded, failed;
        char uid[];
};

static struct owned *count_owned(struct kb_rtype *pods)
{
        struct owned *index = NULL, *e;
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, pods->objs, o, tmp)
        {
                const struct kb_value *p = o->doc->v;
                const struct kb_value *refs = kb_value_dig(p, "metadata", "ownerReferences");
                for (size_t i = 0; kb_value_is(refs, KB_VARRAY) && i < refs->arr.n; i++) {
                        const char *uid = kb_value_str(kb_value_get(refs->arr.v[i], "uid"));
                        if (!uid)
                                continue;
                        HASH_FIND_STR(index, uid, e);
                        if (!e) {
                                size_t n = strlen(uid);
                                e = kb_xcalloc(1, sizeof(*e) + n + 1);
                                memcpy(e->uid, uid, n + 1);
                                HASH_ADD_STR(index, uid, e);
                        }
                        const char *phase = kb_value_str(kb_value_dig(p, "status", "phase"));
                        if (kb_streq(phase, "Succeeded"))
                                e->succeeded++;
                        else if (kb_streq(phase, "Failed"))
                                e->failed++;
                        else if (!kb_value_dig(p, "metadata", "deletionTimestamp")) {
                                e->active++;
                                e->ready += kb_streq(phase, "Running");
                        }
                }
        }
        return index;
}

static void job_sync(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                     const struct kb_value *job, struct owned *index)
{
        const char *uid = kb__meta_str(job, "uid");
        int64_t par = 1, comp = 1, backoff = 6, active = 0, succeeded = 0, failed = 0, ready = 0;
        bool has_comp = kb_value_int(kb_value_dig(job, "spec", "completions"), &comp) == 0;
        kb_value_int(kb_value_dig(job, "spec", "parallelism"), &par);
        kb_value_int(kb_value_dig(job, "spec", "backoffLimit"), &backoff);
        bool suspend = kb_value_bool(kb_value_dig(job, "spec", "suspend"), false);
        struct kb_obj *o, *tmp;
        struct owned *counts = NULL;
        if (uid)
                HASH_FIND_STR(index, uid, counts);
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
                HASH_ITER(hh, pods->objs, o, tmp)
                {
                        const char *phase =
                            kb_value_str(kb_value_dig(o->doc->v, "status", "phase"));
                        if (owned_by(o->doc->v, uid) && !kb_streq(phase, "Succeeded") &&
                            !kb_streq(phase, "Failed"))
                                kb__store_delete(srv, pods, o, 0);
                }
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

void kb__sim_job_controller(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods)
{
        /* Work from a list of keys: syncing a job stores a new document. */
        size_t n = HASH_COUNT(jobs->objs), k = 0;
        char **keys = kb_xcalloc(n + 1, sizeof(*keys));
        struct kb_obj *o, *tmp;
        struct owned *index = count_owned(pods), *e, *etmp;
        HASH_ITER(hh, jobs->objs, o, tmp)
        keys[k++] = kb_xstrdup(o->key);
        for (size_t i = 0; i < k; i++) {
                struct kb_obj *j = NULL;
                HASH_FIND_STR(jobs->objs, keys[i], j);
                if (j && !job_finished(j->doc->v) &&
                    !kb_value_dig(j->doc->v, "metadata", "deletionTimestamp"))
                        job_sync(srv, jobs, pods, j->doc->v, index);
                free(keys[i]);
        }
        free(keys);
        HASH_ITER(hh, index, e, etmp)
        {
                HASH_DEL(index, e);
                free(e);
        }
}

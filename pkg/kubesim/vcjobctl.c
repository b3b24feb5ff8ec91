/*
 * The simulated Volcano Job controller (batch.volcano.sh/v1alpha1 Jobs), as
 * Volcano's job controller runs them beside a scheduler:
 *
 *   1. a Job gets its PodGroup, <job>-<uid> (pkg/workload makes it: minMember
 *      the Job's minAvailable, minTaskMember, queue, priorityClassName,
 *      minResources);
 *   2. once the scheduler has admitted that PodGroup (its phase is no longer
 *      Pending), the Job gets its pods, <job>-<task>-<index>, each annotated
 *      with the group and its task; a pod that goes (evicted, deleted) is
 *      made again while the Job runs;
 *   3. its status counts its pods (pending, running, succeeded, failed) and
 *      gives its phase: Pending, Running once minAvailable pods run, then
 *      Completed or Failed once they have all finished.
 *
 * What Volcano's admission webhook refuses is refused when the Job is
 * written (kb__validate_vcjob, pkg/apiserver/vcjobkind.c), with the same
 * decoder kbatch-sim uses.
 * Not simulated: lifecycle policies (restart, abort on an event), plugins
 * (ssh, svc, env), volumes, maxRetry, TTL, and changes to a running Job's
 * replicas.
 */
#include "kubesim/kubesim-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "workload/workload.h"

/* The stored PodGroup of j, or NULL. */
static struct kb_obj *find_podgroup(struct kb_rtype *pgs, const struct kb_vcjob *j)
{
        char *name = kb_vcjob_podgroup_name(j);
        struct kb_obj *o = kb__obj_find(pgs, j->meta.namespace, name);
        free(name);
        return o;
}

/* Writes st as j's status when it differs (the kubelet and scheduler
 * change nothing here, so a no-op write is never made). */
static void put_status(struct kb_apiserver *srv, struct kb_rtype *jobs, const struct kb_value *doc,
                       struct kb_value *st)
{
        if (kb_value_equal(kb_value_get(doc, "status"), st)) {
                kb_value_free(st);
                return;
        }
        struct kb_value *nj = kb_value_clone(doc);
        kb_value_set(nj, "status", st);
        kb__store_put(srv, jobs, nj);
}

/* A Job that cannot go on: phase (Failed for one the webhook would have
 * refused, written around it; Pending while there is no PodGroup API to
 * make its group with), reason and why in its state, and a Warning event,
 * once per message. */
static void stop(struct kb_apiserver *srv, struct kb_rtype *jobs, const struct kb_value *doc,
                 const char *phase, const char *reason, const char *why, const char *now)
{
        if (kb_streq(kb_value_str(kb_value_dig(doc, "status", "state", "message")), why))
                return;
        struct kb_value *st = kb_value_clone(kb_value_get(doc, "status"));
        if (!kb_value_is(st, KB_VOBJECT)) {
                kb_value_free(st);
                st = kb_value_new(KB_VOBJECT);
        }
        struct kb_value *state = kb_value_ensure_object(st, "state");
        kb_value_set(state, "phase", kb_value_new_string(phase));
        kb_value_set(state, "reason", kb_value_new_string(reason));
        kb_value_set(state, "message", kb_value_new_string(why));
        kb_value_set(state, "lastTransitionTime", kb_value_new_string(now));
        kb__event_record(srv, jobs, doc, "Warning", reason, "vc-controller-manager", "%s", why);
        put_status(srv, jobs, doc, st);
}

/* Creates the pods of j missing from its tasks; returns how many. */
static int create_pods(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                       const struct kb_value *doc, const struct kb_vcjob *j)
{
        int made = 0;
        for (size_t t = 0; t < j->ntasks; t++)
                for (int32_t i = 0; i < j->tasks[t].replicas; i++) {
                        char *name = kb_xasprintf("%s-%s-%d", j->meta.name, j->tasks[t].name, i);
                        bool exists = kb__obj_find(pods, j->meta.namespace, name) != NULL;
                        free(name);
                        if (exists)
                                continue;
                        struct kb_value *pod = kb_vcjob_pod(j, t, i);
                        kb_value_del(kb_value_get(pod, "metadata"), "creationTimestamp");
                        kb__prepare_create(srv, pods, pod);
                        struct kb_doc *d = kb__store_put(srv, pods, pod);
                        kb__event_record(srv, jobs, doc, "Normal", "SuccessfulCreate",
                                         "vc-controller-manager", "Created pod: %s",
                                         kb__meta_str(d->v, "name"));
                        made++;
                }
        return made;
}

/* Syncs one Job; false when it must be looked at again on a later tick
 * (its PodGroup cannot be made yet). */
static bool vcjob_sync(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                       const struct kb_value *doc)
{
        char now[40], err[1024];
        kb_format_time(kb__now(), now, sizeof(now));
        struct kb_vcjob *j;
        if (kb_vcjob_decode(doc, &j, err, sizeof(err))) {
                stop(srv, jobs, doc, "Failed", "Invalid", err, now);
                return true;
        }
        struct kb_rtype *pgs = kb__type_find(srv, "scheduling.volcano.sh", "v1beta1", "podgroups");
        const char *was = kb_value_str(kb_value_dig(doc, "status", "state", "phase"));
        bool finished = kb_streq(was, "Completed") || kb_streq(was, "Failed");
        if ((!pgs || pgs->gone) && !finished) {
                stop(srv, jobs, doc, "Pending", "PodGroupError",
                     "cannot make the Job's PodGroup: the scheduling.volcano.sh/v1beta1 PodGroup "
                     "CRD is not applied (crds/)",
                     now);
                kb_vcjob_free(j);
                return false;
        }
        struct kb_obj *pg = pgs && !pgs->gone ? find_podgroup(pgs, j) : NULL;
        if (!pg && !finished) {
                struct kb_value *v = kb_vcjob_podgroup(j, err, sizeof(err));
                if (!v) {
                        stop(srv, jobs, doc, "Failed", "Invalid", err, now);
                        kb_vcjob_free(j);
                        return true;
                }
                kb_value_del(kb_value_get(v, "metadata"), "creationTimestamp");
                kb__prepare_create(srv, pgs, v);
                kb__store_put(srv, pgs, v);
        }
        /* Volcano's controller makes the pods once the scheduler admitted
         * the group (syncTask: its phase is set and not Pending). */
        const char *phase = pg ? kb_value_str(kb_value_dig(pg->doc->v, "status", "phase")) : NULL;
        if (!finished && phase && phase[0] && strcmp(phase, "Pending") != 0)
                create_pods(srv, jobs, pods, doc, j);

        struct kb_vcjob_counts n;
        kb_vcjob_counts_init(&n, j);
        size_t npods;
        char **keys = kb__sim_owned_pods(srv, kb__meta_str(doc, "uid"), &npods);
        for (size_t i = 0; i < npods; i++) {
                struct kb_obj *o = NULL;
                HASH_FIND_STR(pods->objs, keys[i], o);
                if (o)
                        kb_vcjob_count_pod(&n, j, o->doc->v);
        }
        kb__strv_free(keys, npods);
        struct kb_value *st = kb_vcjob_status(j, &n, kb_value_get(doc, "status"), now);
        const char *next = kb_value_str(kb_value_dig(st, "state", "phase"));
        if (!kb_streq(was, next) && (kb_streq(next, "Completed") || kb_streq(next, "Failed")))
                kb__event_record(srv, jobs, doc, kb_streq(next, "Failed") ? "Warning" : "Normal",
                                 next, "vc-controller-manager", "Job %s", next);
        put_status(srv, jobs, doc, st);
        kb_vcjob_counts_release(&n);
        kb_vcjob_free(j);
        return true;
}

void kb__sim_vcjob_controller(struct kb_apiserver *srv, struct kb_rtype *pods)
{
        struct kb_rtype *jobs = kb__type_find(srv, "batch.volcano.sh", "v1alpha1", "jobs");
        if (!jobs || jobs->gone || !srv->simidx)
                return;
        size_t n;
        char **keys = kb__sim_take_dirty(srv, KB_SIM_VCJOBS, &n);
        uint64_t rv0 = srv->rv;
        for (size_t i = 0; i < n; i++) {
                if (srv->rv - rv0 >= KB_SIM_TICK_BUDGET) {
                        kb__sim_requeue(srv, KB_SIM_VCJOBS, keys[i]);
                        continue;
                }
                struct kb_obj *j = NULL;
                HASH_FIND_STR(jobs->objs, keys[i], j);
                if (j && !kb_value_dig(j->doc->v, "metadata", "deletionTimestamp") &&
                    !vcjob_sync(srv, jobs, pods, j->doc->v))
                        kb__sim_requeue(srv, KB_SIM_VCJOBS, keys[i]);
        }
        kb__strv_free(keys, n);
}

/*
 * A Volcano Job (batch.volcano.sh/v1alpha1) as Volcano's job controller
 * runs it: one PodGroup for the whole Job, its tasks' pods, and the status
 * counted from the pods.
 *
 * Worked example: Job mpi (uid 77aa) in queue team-a with tasks master
 * (replicas 1) and worker (replicas 3, minAvailable 2), minAvailable unset.
 * The webhook's defaults make minAvailable 1 + 2 = 3.  The PodGroup is
 * mpi-77aa with minMember 3, minTaskMember {master: 1, worker: 2}, queue
 * team-a, and minResources the requests of master-0 and two workers; the
 * pods are mpi-master-0, mpi-worker-0, mpi-worker-1 and mpi-worker-2, each
 * annotated scheduling.k8s.io/group-name: mpi-77aa and volcano.sh/task-spec:
 * master or worker.  The Job is Pending until three of them run, Running
 * then, and once all four have finished, Completed if the master and at
 * least two workers succeeded, else Failed.
 */
#include "workload/workload-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kb_vcjob_podgroup_name(const struct kb_vcjob *j)
{
        if (!j->has_uid)
                return kb_xstrdup(j->meta.name);
        return kb_xasprintf("%s-%s", j->meta.name, j->meta.uid);
}

static struct kb_value *job_owner(const struct kb_vcjob *j)
{
        return kb_workload_owner_refs("batch.volcano.sh/v1alpha1", "Job", j->meta.name,
                                      j->has_uid ? j->meta.uid : NULL);
}

static void set_creation(struct kb_value *md, const struct kb_vcjob *j)
{
        if (j->meta.creation > 0) {
                char ts[40];
                kb_format_time(j->meta.creation, ts, sizeof(ts));
                kb_value_set(md, "creationTimestamp", kb_value_new_string(ts));
        }
}

static void copy_kvs(struct kb_value *md, const char *key, const struct kb_kv *kv, size_t n)
{
        if (!n)
                return;
        struct kb_value *m = kb_value_ensure_object(md, key);
        for (size_t i = 0; i < n; i++)
                kb_value_set(m, kv[i].key, kb_value_new_string(kv[i].value));
}

/* The requests of one pod of task t. */
static int task_requests(const struct kb_vcjob *j, const struct kb_vctask *t, struct kb_res *out,
                         char *err, size_t errlen)
{
        struct kb_value *doc = kb_value_new(KB_VOBJECT);
        struct kb_value *md = kb_value_ensure_object(doc, "metadata");
        kb_value_set(md, "name", kb_value_new_string(t->name));
        kb_value_set(md, "namespace", kb_value_new_string(j->meta.namespace));
        kb_value_set(doc, "spec", kb_value_clone(kb_value_get(t->template, "spec")));
        struct kb_pod *p;
        char why[512];
        int rc = kb_pod_decode(doc, &p, why, sizeof(why));
        kb_value_free(doc);
        if (rc) {
                snprintf(err, errlen, "vcjob %s/%s: spec.tasks[%s].template: %s", j->meta.namespace,
                         j->meta.name, t->name, why);
                return rc;
        }
        *out = p->requests;
        kb_pod_free(p);
        return 0;
}

struct kb_value *kb_vcjob_podgroup(const struct kb_vcjob *j, char *err, size_t errlen)
{
        /* Volcano's CalcPGMinResources: each task's minAvailable pods first,
         * then more replicas until the Job's minAvailable is reached (Volcano
         * takes the tasks by their priority class, kbatch in their order). */
        struct kb_res min = {0};
        int32_t left = j->min_available;
        struct kb_res *req = kb_xcalloc(j->ntasks + 1, sizeof(*req));
        for (size_t i = 0; i < j->ntasks; i++)
                if (task_requests(j, &j->tasks[i], &req[i], err, errlen)) {
                        free(req);
                        return NULL;
                }
        for (int pass = 0; pass < 2 && left > 0; pass++)
                for (size_t i = 0; i < j->ntasks && left > 0; i++) {
                        const struct kb_vctask *t = &j->tasks[i];
                        int32_t n = pass == 0 ? t->min_available : t->replicas - t->min_available;
                        n = KB_MIN(n, left);
                        left -= n;
                        for (int k = 0; k < KB_RES_MAX; k++)
                                if (k != KB_RES_PODS)
                                        min.q[k] += req[i].q[k] * n;
                }
        free(req);

        char *name = kb_vcjob_podgroup_name(j);
        struct kb_value *pg = kb__workload_podgroup_doc(j->meta.namespace, name);
        free(name);
        struct kb_value *md = kb_value_get(pg, "metadata");
        copy_kvs(md, "labels", j->meta.labels, j->meta.nlabels);
        copy_kvs(md, "annotations", j->meta.annotations, j->meta.nannotations);
        kb_value_del(kb_value_get(md, "annotations"),
                     "kubectl.kubernetes.io/last-applied-configuration");
        if (kb_value_is(kb_value_get(md, "annotations"), KB_VOBJECT) &&
            !kb_value_get(md, "annotations")->obj.n)
                kb_value_del(md, "annotations");
        kb_value_set(md, "ownerReferences", job_owner(j));
        set_creation(md, j);
        struct kb_value *spec = kb_value_get(pg, "spec");
        kb_value_set(spec, "minMember", kb_value_new_int(j->min_available));
        struct kb_value *mtm = kb_value_ensure_object(spec, "minTaskMember");
        for (size_t i = 0; i < j->ntasks; i++)
                kb_value_set(mtm, j->tasks[i].name, kb_value_new_int(j->tasks[i].min_available));
        kb_value_set(spec, "queue", kb_value_new_string(j->queue));
        if (j->priority_class_name)
                kb_value_set(spec, "priorityClassName",
                             kb_value_new_string(j->priority_class_name));
        kb_value_set(spec, "minResources", kb__workload_resources(&min, 1));
        return pg;
}

struct kb_value *kb_vcjob_pod(const struct kb_vcjob *j, size_t task, int32_t index)
{
        const struct kb_vctask *t = &j->tasks[task];
        struct kb_value *pod = kb_value_new(KB_VOBJECT);
        kb_value_set(pod, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(pod, "kind", kb_value_new_string("Pod"));
        struct kb_value *md = kb_value_clone(kb_value_get(t->template, "metadata"));
        if (!kb_value_is(md, KB_VOBJECT)) {
                kb_value_free(md);
                md = kb_value_new(KB_VOBJECT);
        }
        kb_value_set(pod, "metadata", md);
        kb_value_del(md, "name");
        kb_value_del(md, "generateName");
        char *name = kb_xasprintf("%s-%s-%d", j->meta.name, t->name, index);
        kb_value_set(md, "name", kb_value_new_string(name));
        free(name);
        kb_value_set(md, "namespace", kb_value_new_string(j->meta.namespace));
        kb_value_set(md, "ownerReferences", job_owner(j));
        set_creation(md, j);

        char idx[16], *key = kb_xasprintf("%s-%s", j->meta.name, t->name);
        char *group = kb_vcjob_podgroup_name(j);
        snprintf(idx, sizeof(idx), "%d", index);
        struct kb_value *ann = kb_value_ensure_object(md, "annotations");
        const char *akeys[] = {"volcano.sh/task-spec",   KB_GROUP_ANNOTATION,
                               "volcano.sh/job-name",    "volcano.sh/queue-name",
                               "volcano.sh/task-index",  "volcano.sh/template-key",
                               "volcano.sh/job-version", "volcano.sh/job-retry-count"};
        const char *avals[] = {t->name, group, j->meta.name, j->queue, idx, key, "0", "0"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(akeys); i++)
                kb_value_set(ann, akeys[i], kb_value_new_string(avals[i]));
        struct kb_value *lab = kb_value_ensure_object(md, "labels");
        const char *lkeys[] = {"volcano.sh/job-name", "volcano.sh/task-spec",
                               "volcano.sh/job-namespace", "volcano.sh/queue-name",
                               "volcano.sh/task-index"};
        const char *lvals[] = {j->meta.name, t->name, j->meta.namespace, j->queue, idx};
        for (size_t i = 0; i < KB_ARRAY_SIZE(lkeys); i++)
                kb_value_set(lab, lkeys[i], kb_value_new_string(lvals[i]));
        free(key);
        free(group);

        struct kb_value *spec = kb_value_clone(kb_value_get(t->template, "spec"));
        if (!kb_value_is(spec, KB_VOBJECT)) {
                kb_value_free(spec);
                spec = kb_value_new(KB_VOBJECT);
        }
        const char *sn = kb_value_str(kb_value_get(spec, "schedulerName"));
        if (!sn || !sn[0])
                kb_value_set(spec, "schedulerName", kb_value_new_string(j->scheduler_name));
        const char *pc = kb_value_str(kb_value_get(spec, "priorityClassName"));
        if ((!pc || !pc[0]) && j->priority_class_name)
                kb_value_set(spec, "priorityClassName",
                             kb_value_new_string(j->priority_class_name));
        kb_value_set(pod, "spec", spec);
        return pod;
}

/* ---- status ------------------------------------------------------------------------ */

static const char *const phase_names[KB_VC_NPHASES] = {"Pending", "Running", "Succeeded", "Failed",
                                                       "Unknown"};

void kb_vcjob_counts_init(struct kb_vcjob_counts *n, const struct kb_vcjob *j)
{
        memset(n, 0, sizeof(*n));
        n->task = kb_xcalloc(j->ntasks + 1, sizeof(*n->task));
}

void kb_vcjob_counts_release(struct kb_vcjob_counts *n)
{
        free(n->task);
        n->task = NULL;
}

void kb_vcjob_count_pod(struct kb_vcjob_counts *n, const struct kb_vcjob *j,
                        const struct kb_value *pod)
{
        if (kb_value_dig(pod, "metadata", "deletionTimestamp")) {
                n->terminating++;
                return;
        }
        const char *ph = kb_value_str(kb_value_dig(pod, "status", "phase"));
        int k = KB_VC_UNKNOWN;
        if (!ph || !ph[0])
                k = KB_VC_PENDING;
        for (int i = 0; ph && i < KB_VC_NPHASES; i++)
                if (strcmp(ph, phase_names[i]) == 0)
                        k = i;
        n->phase[k]++;
        const char *task =
            kb_value_str(kb_value_dig(pod, "metadata", "annotations", "volcano.sh/task-spec"));
        for (size_t i = 0; task && i < j->ntasks; i++)
                if (strcmp(j->tasks[i].name, task) == 0)
                        n->task[i][k]++;
}

const char *kb_vcjob_phase(const struct kb_vcjob *j, const struct kb_vcjob_counts *n,
                           const char *phase)
{
        if (kb_streq(phase, "Completed") || kb_streq(phase, "Failed"))
                return phase;
        int64_t replicas = 0, task_mins = 0;
        for (size_t i = 0; i < j->ntasks; i++) {
                replicas += j->tasks[i].replicas;
                task_mins += j->tasks[i].min_available;
        }
        int32_t done = n->phase[KB_VC_SUCCEEDED] + n->phase[KB_VC_FAILED];
        bool running =
            kb_streq(phase, "Running") || n->phase[KB_VC_RUNNING] + done >= j->min_available;
        if (!running)
                return "Pending";
        if (!replicas || done != replicas)
                return "Running";
        /* Every pod has finished. */
        if (j->min_available >= task_mins)
                for (size_t i = 0; i < j->ntasks; i++)
                        if (n->task[i][KB_VC_SUCCEEDED] < j->tasks[i].min_available)
                                return "Failed";
        return n->phase[KB_VC_SUCCEEDED] >= j->min_available ? "Completed" : "Failed";
}

struct kb_value *kb_vcjob_status(const struct kb_vcjob *j, const struct kb_vcjob_counts *n,
                                 const struct kb_value *old, const char *now)
{
        const char *was = kb_value_str(kb_value_dig(old, "state", "phase"));
        const char *phase = kb_vcjob_phase(j, n, was);
        bool changed = !kb_streq(was, phase);
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        struct kb_value *state = kb_value_ensure_object(st, "state");
        kb_value_set(state, "phase", kb_value_new_string(phase));
        const struct kb_value *since = kb_value_dig(old, "state", "lastTransitionTime");
        kb_value_set(state, "lastTransitionTime",
                     !changed && since ? kb_value_clone(since) : kb_value_new_string(now));
        static const char *const keys[KB_VC_NPHASES] = {"pending", "running", "succeeded", "failed",
                                                        "unknown"};
        for (int k = 0; k < KB_VC_NPHASES; k++)
                if (n->phase[k])
                        kb_value_set(st, keys[k], kb_value_new_int(n->phase[k]));
        if (n->terminating)
                kb_value_set(st, "terminating", kb_value_new_int(n->terminating));
        kb_value_set(st, "minAvailable", kb_value_new_int(j->min_available));
        struct kb_value *tsc = kb_value_ensure_object(st, "taskStatusCount");
        for (size_t i = 0; i < j->ntasks; i++) {
                struct kb_value *ph = NULL;
                for (int k = 0; k < KB_VC_NPHASES; k++) {
                        if (!n->task[i][k])
                                continue;
                        if (!ph)
                                ph = kb_value_ensure_object(
                                    kb_value_ensure_object(tsc, j->tasks[i].name), "phase");
                        kb_value_set(ph, phase_names[k], kb_value_new_int(n->task[i][k]));
                }
        }
        if (!tsc->obj.n)
                kb_value_del(st, "taskStatusCount");
        struct kb_value *conds = kb_value_clone(kb_value_get(old, "conditions"));
        if (!kb_value_is(conds, KB_VARRAY)) {
                kb_value_free(conds);
                conds = kb_value_new(KB_VARRAY);
        }
        if (changed) {
                struct kb_value *c = kb_value_new(KB_VOBJECT);
                kb_value_set(c, "status", kb_value_new_string(phase));
                kb_value_set(c, "lastTransitionTime", kb_value_new_string(now));
                kb_value_append(conds, c);
        }
        kb_value_set(st, "conditions", conds);
        return st;
}

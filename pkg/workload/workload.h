/*
 * workload: the PodGroups (and pods) kbatch makes for workloads that come
 * without a Volcano PodGroup, so that they are gangs all the same:
 *
 *  - a pod of ours that names no group (a batch/v1 Job's, a ReplicaSet's,
 *    a bare pod): the PodGroup "podgroup-<controller uid>" that Volcano's
 *    podgroup controller would make (kb_workload_podgroup);
 *  - a scheduling.x-k8s.io/v1alpha1 PodGroup (scheduler-plugins'
 *    coscheduling, used by Kubeflow and Ray): the Volcano PodGroup of the
 *    same name, which the pods labelled scheduling.x-k8s.io/pod-group join
 *    (kb_workload_xpodgroup);
 *  - a batch.volcano.sh/v1alpha1 Job: its PodGroup and its pods, named and
 *    annotated as Volcano's job controller makes them, and its status
 *    (kb_vcjob_*).
 *
 * Every function here is pure: it builds JSON documents (kb_value trees)
 * from decoded objects or documents and reads nothing else, so that
 * kbatch-scheduler (which creates them through the API), kbatch-sim (which
 * loads them offline) and kbatch-apiserver's Volcano Job controller make
 * the very same objects.  Any thread.
 */
#ifndef KB_PKG_WORKLOAD_H
#define KB_PKG_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "value/value.h"

/* ---- pods without a group --------------------------------------------------- */

/*
 * The PodGroup kbatch makes for p, a pod of ours with p->workload_group set
 * (it names no group), as Volcano's podgroup controller makes it:
 *   name       p->workload_group, in p's namespace;
 *   owner      p's controller, or p itself when it has none;
 *   minMember  p's annotation scheduling.volcano.sh/group-min-member, else
 *              the same annotation on owner, else 1;
 *   queue      p's annotation scheduling.volcano.sh/queue-name, else none
 *              (the default queue);
 *   priorityClassName  p's;
 *   minResources       p's requests times minMember.
 * owner is the controller's document (only its annotations are read), or
 * NULL when there is none or it is not known.  Returns the document (the
 * caller frees it), or NULL with err naming the object and annotation at
 * fault ("job default/train: annotation scheduling.volcano.sh/
 * group-min-member: must be a whole number >= 0, got \"abc\"").
 */
struct kb_value *kb_workload_podgroup(const struct kb_pod *p, const struct kb_value *owner,
                                      char *err, size_t errlen);

/*
 * Whether the PodGroup of p depends on its controller's annotations: p
 * sets no group-min-member of its own and its controller is a kind whose
 * annotations Volcano reads (batch/v1 Job, apps/v1 ReplicaSet, StatefulSet,
 * DaemonSet).  When so, path gets the controller's API path
 * ("/apis/batch/v1/namespaces/default/jobs/train").
 */
bool kb_workload_owner_path(const struct kb_pod *p, char *path, size_t n);

/* ---- scheduler-plugins' PodGroup ---------------------------------------------- */

/*
 * The Volcano PodGroup kbatch keeps for a scheduling.x-k8s.io/v1alpha1
 * PodGroup (x, decoded), the one its labelled pods join:
 *   name, namespace, labels  the same;
 *   owner         the scheduling.x-k8s.io PodGroup (so it goes with it);
 *   minMember     spec.minMember (0 when unset, as there);
 *   minResources  spec.minResources;
 *   annotation kbatch.io/inqueue-timeout  spec.scheduleTimeoutSeconds
 *                 ("60s"), when set and not 0 (0 and unset mean the
 *                 default, as in coscheduling);
 *   queue         the annotation scheduling.volcano.sh/queue-name, else none.
 * The caller frees the document.
 */
struct kb_value *kb_workload_xpodgroup(const struct kb_xpodgroup *x);

/* ---- Volcano's Job -------------------------------------------------------------- */

/* The name of j's PodGroup: "<job>-<uid>" as Volcano's job controller names
 * it, or "<job>" when the Job has no uid (a hand-written manifest, which
 * older Volcano named so).  The caller frees it. */
char *kb_vcjob_podgroup_name(const struct kb_vcjob *j);

/*
 * j's PodGroup: minMember j->min_available, minTaskMember each task's
 * minAvailable, queue, priorityClassName, minResources (the requests of
 * the first minAvailable pods, each task's minAvailable first, in task
 * order), j's labels and annotations, owned by j.  NULL with err when a
 * task's template is not a valid pod.
 */
struct kb_value *kb_vcjob_podgroup(const struct kb_vcjob *j, char *err, size_t errlen);

/*
 * The pod index of task (an index into j->tasks), as Volcano's job
 * controller makes it: named "<job>-<task>-<index>", the template's labels
 * and annotations, plus the group annotation naming j's PodGroup,
 * volcano.sh/task-spec (the task's name), volcano.sh/job-name,
 * volcano.sh/queue-name, volcano.sh/task-index and the other keys Volcano
 * sets; schedulerName and priorityClassName from j when the template has
 * none; owned by j.
 */
struct kb_value *kb_vcjob_pod(const struct kb_vcjob *j, size_t task, int32_t index);

/* Pod phases as a Volcano Job's status counts them. */
enum kb_vcjob_phase_count {
        KB_VC_PENDING,
        KB_VC_RUNNING,
        KB_VC_SUCCEEDED,
        KB_VC_FAILED,
        KB_VC_UNKNOWN,
        KB_VC_NPHASES
};

/* The counts a Volcano Job's status reports, from its pods. */
struct kb_vcjob_counts {
        int32_t phase[KB_VC_NPHASES];
        int32_t terminating; /* being deleted, counted in no phase */
        /* Per task (as j->tasks), per phase. */
        int32_t (*task)[KB_VC_NPHASES];
};
void kb_vcjob_counts_init(struct kb_vcjob_counts *n, const struct kb_vcjob *j);
void kb_vcjob_counts_release(struct kb_vcjob_counts *n);
/* Counts pod (a document) into n: its phase (terminating when it is being
 * deleted), in all and for its task (annotation volcano.sh/task-spec). */
void kb_vcjob_count_pod(struct kb_vcjob_counts *n, const struct kb_vcjob *j,
                        const struct kb_value *pod);

/*
 * The phase j goes to from phase ("" or NULL: Pending) with these counts,
 * as Volcano's job states decide it: Pending until minAvailable pods run or
 * ran, then Running; once every pod has finished, Completed when enough
 * succeeded (minAvailable in all, and each task's minAvailable), else
 * Failed.  Completed and Failed stay.
 */
const char *kb_vcjob_phase(const struct kb_vcjob *j, const struct kb_vcjob_counts *n,
                           const char *phase);

/*
 * j's status object: state.phase (and lastTransitionTime, kept from old
 * unless the phase changed), the counts, minAvailable, taskStatusCount,
 * and conditions (a condition appended per phase change, as Volcano does).
 * old is the current status or NULL; now is an RFC 3339 timestamp.
 */
struct kb_value *kb_vcjob_status(const struct kb_vcjob *j, const struct kb_vcjob_counts *n,
                                 const struct kb_value *old, const char *now);

/* ownerReferences naming one controller (controller and
 * blockOwnerDeletion true; uid left out when NULL), as Kubernetes'
 * controllers write them on what they make.  The caller owns it. */
struct kb_value *kb_workload_owner_refs(const char *api_version, const char *kind, const char *name,
                                        const char *uid);

#endif /* KB_PKG_WORKLOAD_H */

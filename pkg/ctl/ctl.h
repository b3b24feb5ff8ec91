/*
 * ctl: what the kubectl plugin (kubectl-kbatch) shows, built from the API
 * objects the server sent (JSON trees): why a PodGroup or pod waits, the
 * queues table, the state that closing a queue asks for, and kubectl's
 * words for a failed request.  Nothing here does I/O: the program fetches,
 * these functions format, so every view is tested on objects written by
 * hand, odd ones included (no status, fields of the wrong type, values that
 * are not quantities).  A field that is missing or malformed is shown as
 * missing, never trusted.
 *
 * Output is appended to a kb_buf the caller owns.  Any thread; nothing is
 * kept between calls.
 */
#ifndef KB_PKG_CTL_H
#define KB_PKG_CTL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"
#include "value/value.h"

/* ---- pods ------------------------------------------------------------------ */

/* The PodGroup a pod names: its scheduling.k8s.io/group-name annotation,
 * else Volcano's scheduling.volcano.sh/group-name, else the label
 * scheduling.x-k8s.io/pod-group (the order kbatch reads them in), or NULL
 * when it names none.  Points into pod. */
const char *kb_ctl_pod_group(const struct kb_value *pod);
/* For a pod that names no group, the one kbatch-scheduler makes for its
 * workload ("podgroup-<controller uid>", as the daemon and kbatch-sim name
 * it: pkg/api decides); NULL when it names one or does not decode.  The
 * caller frees it. */
char *kb_ctl_pod_workload_group(const struct kb_value *pod);

/* The pods of one group, by what they are doing. */
struct kb_ctl_pods {
        int pending;  /* phase Pending, no node yet */
        int starting; /* bound to a node, not running yet */
        int running, succeeded, failed, unknown;
};

/* Counts the pods of list (a PodList) that join group.  Items that are not
 * objects are skipped. */
void kb_ctl_count_pods(const struct kb_value *list, const char *group, struct kb_ctl_pods *out);

/* ---- workloads ------------------------------------------------------------------ */

/* The PodGroup whose pods job (a batch/v1 or Volcano Job) makes join: the
 * group its pod template names, else the one in groups (a PodGroupList of
 * its namespace) labelled kbatch.io/owner-uid with the job's uid, else one
 * it owns (ownerReferences).  NULL when none.  Points into job or groups. */
const char *kb_ctl_job_group(const struct kb_value *job, const struct kb_value *groups);
/* The scheduler job's pods ask for: a Volcano Job's spec.schedulerName,
 * else its pod template's, else "default-scheduler" (Kubernetes' default).
 * Points into job or is static. */
const char *kb_ctl_job_scheduler(const struct kb_value *job);

/* The first of names (NULL-terminated) that word is a likely slip for, as
 * kubectl's (cobra's) "Did you mean this?": within 2 edits, or a name word
 * is a prefix of; NULL when none.  "queue" -> "queues". */
const char *kb_ctl_suggest(const char *word, const char *const *names);

/* ---- why ---------------------------------------------------------------------- */

/*
 * Why a PodGroup waits, or that it is scheduled, as lines of "Label:  value":
 * its queue, phase, minMember, pods (pods NULL: the counts in its status),
 * then the Unschedulable condition's reason and blocker, its place in its
 * queue (the "; 2nd of 5 waiting in queue q" that kbatch ends the message
 * with, on a line of its own) and how long it has waited (now: seconds
 * since the epoch); or when it was scheduled; or that no scheduler has
 * written its status yet.
 */
void kb_ctl_why_podgroup(const struct kb_value *pg, const struct kb_ctl_pods *pods, double now,
                         struct kb_buf *out);

/* What the program knows of a pod's PodGroup. */
enum kb_ctl_group {
        KB_CTL_GROUP_NONE,     /* the pod names no group */
        KB_CTL_GROUP_FOUND,    /* the caller prints the group's report after the pod's */
        KB_CTL_GROUP_MISSING,  /* the pod names a group that does not exist */
        KB_CTL_GROUP_NOT_MADE, /* kbatch's group for its workload does not exist (yet) */
};

/*
 * A pod: its scheduler, phase, node and group; unless its group was found
 * (whose report says why), its PodScheduled condition, or that it is bound,
 * or that no scheduler has written anything on it yet.
 */
void kb_ctl_why_pod(const struct kb_value *pod, enum kb_ctl_group group, double now,
                    struct kb_buf *out);

/* ---- queues ------------------------------------------------------------------- */

/* A resource list as "cpu=4,mem=8Gi,gpu=1": cpu in cores, memory binary,
 * the resources named <vendor>/gpu summed; the rest left out.  none when the list names
 * none of them (or is not an object). */
void kb_ctl_res_compact(const struct kb_value *list, const char *none, char *buf, size_t n);

/*
 * The queues of list (a QueueList) as a table sorted by name: NAME, STATE,
 * WEIGHT, DESERVED, ALLOCATED, CAPABILITY, INQUEUE, PENDING, RUNNING.  A
 * queue without status shows "-" where only the scheduler could tell.  When
 * names (n of them) are given, only those queues.
 */
void kb_ctl_queues(const struct kb_value *list, const char *const *names, size_t n,
                   struct kb_buf *out);

/*
 * The state closing queue asks for, as kbatch's scheduler and Volcano's
 * queue controller have it: "Closed" when its status shows no work left
 * (no PodGroup pending, inqueue, running or unknown, nothing allocated),
 * else "Closing", which the scheduler turns to Closed once the work is
 * done.  why gets what was seen ("2 running, 1 pending PodGroup(s)", "no
 * status written yet").
 */
const char *kb_ctl_close_state(const struct kb_value *queue, char *why, size_t n);

/* status.state, or "Open" when unset (how kbatch reads it). */
const char *kb_ctl_queue_state(const struct kb_value *queue);

/* ---- errors --------------------------------------------------------------------- */

/*
 * kubectl's words for a request the server refused: "Error from server
 * (Forbidden): <the Status message>", or with a body that is no Status,
 * "Error from server: <code> <status text>".
 */
void kb_ctl_server_error(long code, const char *body, size_t len, struct kb_buf *out);

/* Whether a 404 body says the object is missing (a Status naming it), as
 * opposed to the whole resource not being served (no such CRD). */
bool kb_ctl_object_missing(const char *body, size_t len);

#endif /* KB_PKG_CTL_H */

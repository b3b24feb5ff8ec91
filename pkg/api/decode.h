/*
 * pkg/api's public interface, continued: decoding and freeing objects, and
 * the workload APIs kbatch reads without scheduling them directly.  Part of
 * api/api.h, which includes it at its end; not included on its own.
 */
#ifndef KB_PKG_API_DECODE_H
#define KB_PKG_API_DECODE_H

/* ---- objects: decoding and freeing -------------------------------------- */

enum kb_kind {
        KB_KIND_NONE,
        KB_KIND_NODE,
        KB_KIND_POD,
        KB_KIND_PODGROUP,
        KB_KIND_QUEUE,
        KB_KIND_PRIORITYCLASS,
        KB_KIND_NAMESPACE,
        KB_KIND_HYPERNODE,
        KB_KIND_PDB,
        /* A Volcano Job, as the daemon's cache keeps it (kb_vcjob_trim);
         * kb_object_decode does not read it (kbatch-sim and the local
         * server make its PodGroup and pods from it instead). */
        KB_KIND_VCJOB,
};

struct kb_object {
        enum kb_kind kind;
        union {
                void *ptr;
                struct kb_node *node;
                struct kb_pod *pod;
                struct kb_podgroup *podgroup;
                struct kb_queue *queue;
                struct kb_priorityclass *priorityclass;
                struct kb_namespace *namespace;
                struct kb_hypernode *hypernode;
                struct kb_pdb *pdb;
                struct kb_vcjob *vcjob;
        };
};

/*
 * Decodes one Kubernetes object.  Returns:
 *   0            out holds the object (caller releases it);
 *   KB_ENOTFOUND the kind is not one kbatch reads (out->kind NONE; err says
 *                which, for a warning);
 *   KB_EBADINPUT the object is invalid; err names the object and the field:
 *                "podgroup team-a/train: spec.minMember: must be >= 0, got -3".
 * Unknown fields are ignored.  Any thread.
 */
int kb_object_decode(const struct kb_value *doc, struct kb_object *out, char *err, size_t errlen);
void kb_object_release(struct kb_object *o);

/* Kind-specific decoders (what kb_object_decode dispatches to) and frees. */
int kb_node_decode(const struct kb_value *doc, struct kb_node **out, char *err, size_t errlen);
int kb_pod_decode(const struct kb_value *doc, struct kb_pod **out, char *err, size_t errlen);
int kb_podgroup_decode(const struct kb_value *doc, struct kb_podgroup **out, char *err,
                       size_t errlen);
int kb_queue_decode(const struct kb_value *doc, struct kb_queue **out, char *err, size_t errlen);
int kb_priorityclass_decode(const struct kb_value *doc, struct kb_priorityclass **out, char *err,
                            size_t errlen);
int kb_namespace_decode(const struct kb_value *doc, struct kb_namespace **out, char *err,
                        size_t errlen);
int kb_hypernode_decode(const struct kb_value *doc, struct kb_hypernode **out, char *err,
                        size_t errlen);
int kb_pdb_decode(const struct kb_value *doc, struct kb_pdb **out, char *err, size_t errlen);
void kb_node_free(struct kb_node *n);
/*
 * Whether a and b are the same in everything kbatch reads of a node: meta
 * (name, namespace, uid, labels, annotations, creation and deletion
 * times), allocatable, taints, unschedulable, ready and images; only
 * resourceVersion and kb_meta.gen may differ.  Lists compare in order, as
 * the decoder keeps the object's.  A kubelet's status heartbeat (a
 * condition's lastHeartbeatTime, a new resourceVersion) decodes to a node
 * the same as before: the cache keeps the old one (pkg/cache).  Any
 * thread.
 */
bool kb_node_same(const struct kb_node *a, const struct kb_node *b);
void kb_pod_free(struct kb_pod *p);
/* Frees a heap condition and its strings (a pod's scheduled); NULL is
 * nothing. */
void kb_condition_free(struct kb_condition *c);
void kb_podgroup_free(struct kb_podgroup *pg);
void kb_queue_free(struct kb_queue *q);
void kb_priorityclass_free(struct kb_priorityclass *pc);
void kb_namespace_free(struct kb_namespace *ns);
void kb_hypernode_free(struct kb_hypernode *hn);
void kb_pdb_free(struct kb_pdb *pdb);
/* Whether pdb covers pod p: the same namespace, and a selector with at
 * least one requirement that p's labels satisfy (an empty selector covers
 * nothing in preemption, as kube-scheduler reads it). */
bool kb_pdb_covers(const struct kb_pdb *pdb, const struct kb_pod *p);
void kb_meta_release(struct kb_meta *m);

/*
 * For a cache that keeps many pods for long (the daemon's): frees the
 * annotations no scheduling code reads, all but those in
 * KB_POD_ANNOTATIONS_READ (the group annotation is already in group_name;
 * kubectl's last-applied-configuration alone can be kilobytes).  Labels
 * stay: inter-pod affinity and topology spread match them.  A plugin that
 * starts reading another annotation must be added here.  Any thread, on a
 * pod it owns.
 */
#define KB_POD_ANNOTATIONS_READ                                                                    \
        {                                                                                          \
                "volcano.sh/task-spec", "volcano.sh/preemptable"                                   \
        }
void kb_pod_trim(struct kb_pod *p);

/*
 * Declared runtimes, for reservations (issue 19; docs/scheduling.md).  A
 * pod's is, in this order: its spec.activeDeadlineSeconds (the kubelet's
 * hard limit, Kubernetes' counterpart of Slurm's --time); its Job's
 * spec.activeDeadlineSeconds (pg's job_deadline); its label
 * kueue.x-k8s.io/max-exec-time-seconds; the annotation
 * kbatch.io/runtime-limit on its PodGroup, else on the pod.  ns, or 0 when
 * it declares none (unbounded).  pg may be NULL.
 */
#define KB_RUNTIME_LIMIT_ANNOTATION "kbatch.io/runtime-limit"
#define KB_JOB_DEADLINE_ANNOTATION  "kbatch.io/job-active-deadline-seconds"
#define KB_KUEUE_MAX_EXEC_LABEL     "kueue.x-k8s.io/max-exec-time-seconds"
int64_t kb_pod_declared_runtime(const struct kb_pod *p, const struct kb_podgroup *pg);

/*
 * Decodes a resource list ({cpu: "2", memory: 4Gi, ...}) adding into out.
 * what names the field for messages ("spec.minResources").  Negative values
 * are errors.  Returns 0 or KB_EBADINPUT with err set to
 * "<what>.<name>: <problem>".
 */
int kb_res_decode(const struct kb_value *list, const char *what, struct kb_res *out, char *err,
                  size_t errlen);

/* The PodGroup annotation keys, in the order they are looked up, then
 * scheduler-plugins' label (coscheduling). */
#define KB_GROUP_ANNOTATION         "scheduling.k8s.io/group-name"
#define KB_GROUP_ANNOTATION_VOLCANO "scheduling.volcano.sh/group-name"
#define KB_GROUP_LABEL_COSCHEDULING "scheduling.x-k8s.io/pod-group"
/* The label on a PodGroup kbatch-scheduler makes for a workload: the uid
 * of the pods' controller (of the pod itself when it has none), as Kueue's
 * kueue.x-k8s.io/job-uid; kubectl kbatch why job/NAME looks it up. */
#define KB_OWNER_UID_LABEL "kbatch.io/owner-uid"
/* What the PodGroup kbatch makes for a workload reads from the pod (its
 * template) or its controller, as Volcano's podgroup controller does, and
 * the prefix of its name. */
#define KB_ANNOTATION_MIN_MEMBER "scheduling.volcano.sh/group-min-member"
#define KB_ANNOTATION_QUEUE      "scheduling.volcano.sh/queue-name"
#define KB_WORKLOAD_GROUP_PREFIX "podgroup-"
/* The PodGroup annotation that overrides the enqueue action's
 * inqueueTimeout ("30m"; "0": no timeout; pkg/framework/inqueue.c). */
#define KB_INQUEUE_TIMEOUT_ANNOTATION "kbatch.io/inqueue-timeout"

/*
 * The value of a group-min-member annotation: a whole number >= 0 (decimal,
 * an optional '+'), as Volcano parses it.  Returns 0, or KB_EBADINPUT with
 * why ("must be a whole number >= 0, got \"abc\"") for the caller to
 * prefix with the object and annotation.  Any thread.
 */
int kb_min_member_parse(const char *s, int32_t *out, char *why, size_t whylen);

/* ---- workload APIs kbatch reads without scheduling them directly ------- */

/*
 * A scheduling.x-k8s.io/v1alpha1 PodGroup, scheduler-plugins' coscheduling
 * group: pods labelled scheduling.x-k8s.io/pod-group: NAME belong to it.
 * kbatch schedules it through the Volcano PodGroup of the same name that it
 * makes from it (pkg/workload).
 */
struct kb_xpodgroup {
        struct kb_meta meta;
        int32_t min_member; /* spec.minMember, 0 when unset */
        struct kb_res min_resources;
        bool has_min_resources;
        int32_t schedule_timeout; /* spec.scheduleTimeoutSeconds, -1 when unset */
        /* annotation scheduling.volcano.sh/queue-name (a kbatch reading:
         * the API has no queue), or NULL */
        char *queue;
        /* status.phase (NULL when unset) and its counts, read leniently
         * (a field of the wrong type counts as unset): what kbatch-scheduler
         * last wrote there, so it writes only what changed. */
        char *status_phase;
        int64_t status_running, status_succeeded, status_failed;
};

/* A task of a Volcano Job: replicas pods from template. */
struct kb_vctask {
        char *name;                /* "default<index>" when unset, as Volcano's webhook names it */
        int32_t replicas;          /* 0 when unset */
        int32_t min_available;     /* replicas when unset */
        struct kb_value *template; /* spec.tasks[i].template, an object (owned) */
};

/*
 * A batch.volcano.sh/v1alpha1 Job with the defaults Volcano's admission
 * webhook gives it (queue "default", schedulerName "volcano", task names
 * and minAvailable), refused where the webhook refuses it.
 */
struct kb_vcjob {
        struct kb_meta meta;
        /* spec.minAvailable; when unset or 0, the sum of the tasks'. */
        int32_t min_available;
        char *queue;
        char *priority_class_name; /* or NULL */
        char *scheduler_name;
        struct kb_vctask *tasks;
        size_t ntasks;
        bool has_uid; /* metadata.uid was set (else meta.uid is made up) */
};

/*
 * Decoders, as kb_podgroup_decode: 0, or KB_EBADINPUT with err naming the
 * object and field ("job default/x: spec.tasks: must list at least one
 * task").  Any thread.
 */
int kb_xpodgroup_decode(const struct kb_value *doc, struct kb_xpodgroup **out, char *err,
                        size_t errlen);
int kb_vcjob_decode(const struct kb_value *doc, struct kb_vcjob **out, char *err, size_t errlen);
void kb_xpodgroup_free(struct kb_xpodgroup *pg);
void kb_vcjob_free(struct kb_vcjob *j);
/* For a cache that keeps Jobs only to know whom they ask for: frees the
 * tasks (their pod templates), labels and annotations, keeping the name,
 * uid, queue, minAvailable and schedulerName.  Any thread, on a Job it
 * owns. */
void kb_vcjob_trim(struct kb_vcjob *j);

/* A pod's placement rules; an empty set when it has none.  Any thread. */
extern const struct kb_pod_rules kb_no_pod_rules;
static inline const struct kb_pod_rules *kb_pod_rules(const struct kb_pod *p)
{
        return p->rules ? p->rules : &kb_no_pod_rules;
}

/* Whether a pod's phase ends its life (Succeeded or Failed). */
static inline bool kb_pod_terminal(const struct kb_pod *p)
{
        return p->phase == KB_POD_SUCCEEDED || p->phase == KB_POD_FAILED;
}

#endif /* KB_PKG_API_DECODE_H */

/*
 * api: kbatch's model of the Kubernetes objects a scheduler reads — nodes,
 * pods, PodGroups, Queues, PriorityClasses, Namespaces, HyperNodes — with
 * quantities,
 * resource vectors, and decoders from a kb_value tree (YAML or JSON).
 *
 * Objects are plain heap structs owned by whoever decoded them (free with
 * kb_object_release).  After decoding they are read-only: a snapshot may
 * share them with a session on another thread.
 *
 * Units.  CPU is in millicores, memory and byte-sized resources
 * (ephemeral-storage, hugepages-*) in bytes, pods as a count, and every other
 * named resource in milli-units, as Volcano keeps scalars (MilliValue).
 */
#ifndef KB_PKG_API_H
#define KB_PKG_API_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

/* ---- quantities ------------------------------------------------------- */

/*
 * Parses a Kubernetes quantity — decimal SI (m, k, M, G, T, P, E), binary
 * (Ki..Ei), exponents (1e3, 1E-2), fractions (0.5, .5, 1.5Gi), a sign — and
 * returns its value times 1000 when milli, else as is, rounded up to a whole
 * number as resource.Quantity's Value() and MilliValue() do.
 * Returns 0, KB_EBADQTY for text outside the grammar, KB_EOVERFLOW when the
 * result does not fit in int64.  Any thread.
 */
int kb_quantity_parse(const char *s, bool milli, int64_t *out);

/* Formats v (milli units when milli) the way kubectl prints quantities:
 * "500m", "2", "1536Mi" (binary for byte-sized resources), into buf. */
void kb_quantity_format(int64_t v, bool milli, bool binary, char *buf, size_t n);
/* Formats v for people, in the largest whole unit with up to two decimals:
 * cpu in cores ("9.3", "0.25"), bytes binary ("1.5Gi"), counts as they are;
 * "unlimited" for infinity or KB_RES_UNLIMITED.  For messages, not for
 * manifests. */
void kb_quantity_human(double v, bool milli, bool binary, char *buf, size_t n);

/* ---- durations -------------------------------------------------------- */

/*
 * Parses a Go duration ("30m", "1h30m", "1.5h", "90s", "250ms", "-2s"; a
 * bare number only as "0") into whole nanoseconds, as time.ParseDuration.
 * Returns 0, or KB_EBADINPUT with why saying what is wrong ("unknown unit
 * \"x\" in duration \"30x\" ...") for the caller to prefix with the object
 * and field.  Any thread.
 */
int kb_duration_parse(const char *s, int64_t *ns, char *why, size_t whylen);
/* Formats ns compactly, units that are zero left out: "1h30m", "45s",
 * "1.5s", "250ms", "0s". */
void kb_duration_format(int64_t ns, char *buf, size_t n);

/* ---- resource vectors ------------------------------------------------- */

#define KB_RES_MAX       16
#define KB_RES_CPU       0
#define KB_RES_MEMORY    1
#define KB_RES_PODS      2
#define KB_RES_UNLIMITED INT64_MAX

/*
 * Resource names are interned into a process-wide table of KB_RES_MAX slots
 * (cpu, memory, pods first).  Interning happens while decoding, on the thread
 * that owns the cache; readers on other threads only read names already
 * published.
 */
struct kb_res {
        int64_t q[KB_RES_MAX];
};

/* Index for name, adding it when new; KB_ETOOMANYRES when the table is full. */
int kb_res_intern(const char *name);
/* Index for name, or -1 when no object has used it. */
int kb_res_lookup(const char *name);
const char *kb_res_name(int i);
/* Number of slots in use (always >= 3). */
int kb_res_count(void);
/* Whether slot i is stored in milli-units (cpu and named scalars). */
bool kb_res_is_milli(int i);
/* Whether slot i is byte-sized (printed with binary suffixes). */
bool kb_res_is_bytes(int i);
/* Amount v of slot i as kubectl prints it ("500m", "8Gi"), or "unlimited"
 * when v is infinite; into buf, which it returns. */
const char *kb_res_qty(int i, double v, char *buf, size_t n);
/* Amount v of slot i for people (kb_quantity_human: "9.3", "1.5Gi"), or
 * "unlimited"; into buf, which it returns. */
const char *kb_res_human(int i, double v, char *buf, size_t n);

#include "api/res.h" /* adding, subtracting and comparing them */

/* Whether every slot but pods is zero (a BestEffort request). */
bool kb_res_is_empty(const struct kb_res *r);
/* Sets every slot to v. */
void kb_res_fill(struct kb_res *r, int64_t v);
/* "cpu: 2, memory: 4Gi, nvidia.com/gpu: 1" — non-zero slots only (pods left
 * out unless with_pods); unlimited slots are skipped. */
void kb_res_format(const struct kb_res *r, bool with_pods, char *buf, size_t n);

/* ---- objects ---------------------------------------------------------- */

struct kb_kv {
        char *key;
        char *value;
};

/* What every object has.  Times are seconds since the epoch, 0 when unset. */
struct kb_meta {
        char *name;
        char *namespace; /* NULL for cluster-scoped objects */
        char *uid;
        char *resource_version;
        struct kb_kv *labels;
        size_t nlabels;
        struct kb_kv *annotations;
        size_t nannotations;
        double creation;
        double deletion;
        uint64_t gen; /* of its last change, above earlier snapshots' (kb_snapshot.gen) */
};

const char *kb_meta_label(const struct kb_meta *m, const char *key);
/* A namespace, "default" when there is none (NULL), as the API server
 * defaults a namespaced object's; kb_meta_ns: an object's.  Inline:
 * sessions ask per pod. */
static inline const char *kb_ns_or_default(const char *ns)
{
        return ns ? ns : "default";
}
static inline const char *kb_meta_ns(const struct kb_meta *m)
{
        return kb_ns_or_default(m->namespace);
}
const char *kb_meta_annotation(const struct kb_meta *m, const char *key);

enum kb_taint_effect {
        KB_TAINT_NO_SCHEDULE,
        KB_TAINT_PREFER_NO_SCHEDULE,
        KB_TAINT_NO_EXECUTE,
};

struct kb_taint {
        char *key;
        char *value; /* "" when none */
        enum kb_taint_effect effect;
};

/* An image a node holds (status.images): every name it goes by, and its
 * size, for kube-scheduler's ImageLocality score. */
struct kb_node_image {
        char **names;
        size_t nnames;
        int64_t size; /* sizeBytes */
};

struct kb_node {
        struct kb_meta meta;
        /* status.allocatable, else (the whole list) status.capacity; pods
         * is 110, kubelet's default, when the list has none. */
        struct kb_res allocatable;
        struct kb_taint *taints;
        size_t ntaints;
        bool unschedulable;
        /* The Ready condition; a node with no Ready condition at all (as
         * hand-written manifests have) counts as ready. */
        bool ready;
        struct kb_node_image *images;
        size_t nimages;
};

enum kb_pod_phase {
        KB_POD_PENDING,
        KB_POD_RUNNING,
        KB_POD_SUCCEEDED,
        KB_POD_FAILED,
        KB_POD_UNKNOWN,
};
const char *kb_pod_phase_name(enum kb_pod_phase p);

enum kb_selector_op {
        KB_SEL_IN,
        KB_SEL_NOT_IN,
        KB_SEL_EXISTS,
        KB_SEL_DOES_NOT_EXIST,
        KB_SEL_GT,
        KB_SEL_LT,
};

struct kb_selector_req {
        char *key;
        enum kb_selector_op op;
        char **values;
        size_t nvalues;
};

/* A NodeSelectorTerm: all its requirements must hold (matchExpressions on
 * labels, matchFields on metadata.name).  An empty term matches no node. */
struct kb_node_term {
        struct kb_selector_req *exprs;
        size_t nexprs;
        struct kb_selector_req *fields;
        size_t nfields;
};

struct kb_preferred_term {
        int32_t weight;
        struct kb_node_term term;
};

/*
 * A metav1.LabelSelector over pod or namespace labels: matchLabels (kept as
 * In with one value) and matchExpressions (In, NotIn, Exists,
 * DoesNotExist), all of which must hold.  As LabelSelectorAsSelector reads
 * it: an absent selector (set false) matches nothing, a present one without
 * requirements matches everything.
 */
struct kb_label_selector {
        struct kb_selector_req *reqs;
        size_t nreqs;
        bool set;
};

/*
 * A PodAffinityTerm, or a WeightedPodAffinityTerm (weight 1..100; 0 for a
 * required term).  A pod matches the term when its namespace is one of
 * namespaces or its namespace's labels match ns_selector, and its labels
 * match selector.  The decoder resolves the API's defaults: no namespaces
 * and no namespaceSelector mean the pod's own namespace; matchLabelKeys and
 * mismatchLabelKeys are merged into selector as `key In (value)` and `key
 * NotIn (value)` with the pod's own label values, as the API server does.
 */
struct kb_pod_term {
        struct kb_label_selector selector;
        char **namespaces;
        size_t nnamespaces;
        struct kb_label_selector ns_selector;
        char *topology_key;
        int32_t weight;
};

/* A topologySpreadConstraint, defaults resolved; matchLabelKeys merged into
 * selector as `key In (value)` for the keys the pod has. */
struct kb_spread {
        int32_t max_skew;
        char *topology_key;
        bool schedule_anyway; /* whenUnsatisfiable ScheduleAnyway, else DoNotSchedule */
        struct kb_label_selector selector;
        int32_t min_domains; /* 1 when unset */
        bool honor_affinity; /* nodeAffinityPolicy: Honor (the default) */
        bool honor_taints;   /* nodeTaintsPolicy: Honor (default Ignore) */
};

/* A container port with a hostPort (of a container or a sidecar). */
struct kb_host_port {
        char *ip;       /* hostIP, "0.0.0.0" when unset */
        char *protocol; /* "TCP" when unset */
        int32_t port;
};

enum kb_toleration_op {
        KB_TOL_EQUAL,
        KB_TOL_EXISTS,
};

struct kb_toleration {
        char *key;    /* "" with Exists matches every key */
        char *value;  /* "" when none */
        char *effect; /* NULL or "" matches every effect */
        enum kb_toleration_op op;
};

/* A pod's inter-pod placement rules: required and preferred pod affinity
 * and anti-affinity terms, topology spread constraints, host ports. */
struct kb_pod_rules {
        struct kb_pod_term *affinity, *anti_affinity;
        size_t naffinity, nanti_affinity;
        struct kb_pod_term *pref_affinity, *pref_anti_affinity;
        size_t npref_affinity, npref_anti_affinity;
        struct kb_spread *spread;
        size_t nspread;
        struct kb_host_port *host_ports;
        size_t nhost_ports;
};

/* An ownerReference. */
struct kb_owner_ref {
        char *api_version;
        char *kind;
        char *name;
        char *uid; /* NULL when the reference has none (a hand-written manifest) */
};

struct kb_pod {
        struct kb_meta meta;
        char *scheduler_name; /* "default-scheduler" when unset, as the API server defaults it */
        char *node_name;      /* NULL until bound */
        char *nominated_node_name;
        char *priority_class_name;
        /* The PodGroup the pod joins: its annotation scheduling.k8s.io/
         * group-name (or Volcano's spelling), else its label
         * scheduling.x-k8s.io/pod-group (group_from_label: the Volcano
         * PodGroup of that name, which kbatch makes from scheduler-plugins'
         * PodGroup); NULL when it names none. */
        char *group_name;
        bool group_from_label;
        /* The pod's controller (its ownerReference with controller: true),
         * or NULL. */
        struct kb_owner_ref *controller;
        /* For a pod that names no group: the PodGroup kbatch makes for its
         * workload (as Volcano's podgroup controller names it),
         * "podgroup-<uid of its controller>", or "podgroup-<its own uid>"
         * without one; where a manifest gives no uid, the kind and name
         * stand in for it: "podgroup-job-train", "podgroup-pod-p0"; NULL
         * when the pod names a group. */
        char *workload_group;
        /* What that PodGroup takes from the pod's annotations:
         * scheduling.volcano.sh/group-min-member (has_workload_min_member
         * when set) and scheduling.volcano.sh/queue-name (NULL when unset);
         * workload_invalid, when the first is not a whole number >= 0, says
         * so naming the pod and the annotation (the pod then gets no
         * PodGroup and is never placed). */
        int32_t workload_min_member;
        bool has_workload_min_member;
        char *workload_queue;
        char *workload_invalid;
        int32_t priority;
        bool has_priority;  /* spec.priority was set */
        bool preempt_never; /* spec.preemptionPolicy: Never */
        /* spec.terminationGracePeriodSeconds, -1 when unset (the API
         * server's default applies); evictions send it. */
        int32_t grace_period;
        struct kb_kv *node_selector;
        size_t nnode_selector;
        struct kb_node_term *required; /* ORed terms of requiredDuringScheduling... */
        size_t nrequired;
        struct kb_preferred_term *preferred;
        size_t npreferred;
        struct kb_toleration *tolerations;
        size_t ntolerations;
        /* Inter-pod placement rules, NULL when the pod has none (most
         * pods): read them through kb_pod_rules(). */
        struct kb_pod_rules *rules;
        /* The images of the init containers, then of the containers, with
         * ":latest" added where no tag is given (ImageLocality's
         * normalizedImageName); "" for a container without one. */
        char **images;
        size_t nimages;
        /* As kube-scheduler computes them: the sum over containers, the max
         * with each init container, plus spec.overhead; pods slot = 1. */
        struct kb_res requests;
        bool best_effort; /* no container requests anything (pods slot aside) */
        enum kb_pod_phase phase;
        double start_time; /* status.startTime, seconds since the epoch; 0 when unset */
        /* What the pod declares of its runtime, in ns, 0 where unset:
         * spec.activeDeadlineSeconds, the label
         * kueue.x-k8s.io/max-exec-time-seconds and the annotation
         * kbatch.io/runtime-limit (kb_pod_declared_runtime ranks them).
         * runtime_invalid names one that is set but unusable ("pod ml/a-0:
         * spec.activeDeadlineSeconds: must be greater than 0, got 0"),
         * which then counts as unset. */
        int64_t active_deadline, kueue_limit, runtime_limit;
        char *runtime_invalid;
        /* Fields set on the pod that kbatch reads but does not evaluate yet
         * (dynamic resource claims), as "spec.resourceClaims, ...", or
         * NULL: the session reports them instead of ignoring them
         * silently. */
        char *unevaluated;
        /* Why the pod's inter-pod placement fields are unusable ("pod
         * ns/x: spec.topologySpreadConstraints[0].maxSkew: must be greater
         * than zero, got -1"), or NULL.  Such a pod still decodes (it may
         * hold room on a node) without those fields; the session never
         * places it and says why. */
        char *invalid;
        /* status.conditions' PodScheduled of a pod not yet bound (NULL when
         * it has none, and for a bound pod): what the scheduler compares a
         * condition it would write with, so that it writes only a change,
         * and whose lastTransitionTime it keeps while the status stands.
         * Read leniently: a malformed one is no condition. */
        struct kb_condition *scheduled;
};

struct kb_condition {
        char *type;
        char *status; /* "True", "False", "Unknown" */
        char *reason;
        char *message;
        char *transition_id;
        double last_transition;
};

/* Whether a label's value (NULL: the label is absent) satisfies r, one of
 * In, NotIn, Exists, DoesNotExist (false for the others). */
bool kb_selector_req_matches(const struct kb_selector_req *r, const char *val);
/* Whether the labels of m satisfy sel (struct kb_label_selector: an unset
 * selector matches nothing, one without requirements everything). */
bool kb_label_selector_matches(const struct kb_label_selector *sel, const struct kb_meta *m);

struct kb_task_member {
        char *name;
        int32_t min;
};

enum kb_topology_mode {
        KB_TOPOLOGY_NONE,
        KB_TOPOLOGY_HARD,
        KB_TOPOLOGY_SOFT,
};

/*
 * One entry of PodGroup spec.subGroupPolicy (Volcano master's
 * SubGroupPolicySpec): the pods its labelSelector matches (every pod when
 * unset) that carry every matchLabelKeys label with a non-empty value form
 * one sub-group per distinct tuple of those values.  A policy without
 * matchLabelKeys takes no pod (Volcano requires match values).  Each
 * sub-group needs size placed pods (subGroupSize, 1 when unset) and is
 * placed within the policy's networkTopology; the gang needs min_groups
 * (minSubGroups, 0 when unset) of the policy's sub-groups whole.
 */
struct kb_subgroup_policy {
        char *name;
        int32_t size;
        int32_t min_groups;
        struct kb_label_selector selector;
        char **match_keys;
        size_t nmatch_keys;
        /* networkTopology, as the PodGroup's below. */
        enum kb_topology_mode topology_mode;
        int32_t highest_tier;
        char *highest_tier_name;
};

struct kb_podgroup {
        struct kb_meta meta;
        int32_t min_member;
        struct kb_task_member *min_task_member;
        size_t nmin_task_member;
        struct kb_res min_resources;
        bool has_min_resources;
        char *queue; /* "default" when unset */
        char *priority_class_name;
        /* spec.networkTopology: NONE when unset; mode defaults to hard.
         * highest_tier is highestTierAllowed, -1 when unset (then
         * highest_tier_name, highestTierName, may name the tier; neither
         * means any tier). */
        enum kb_topology_mode topology_mode;
        int32_t highest_tier;
        char *highest_tier_name;
        /* spec.subGroupPolicy, in order (a pod joins the first policy that
         * takes it). */
        struct kb_subgroup_policy *subgroups;
        size_t nsubgroups;
        /* Fields kbatch reads but does not evaluate yet, or NULL. */
        char *unevaluated;
        /* status */
        /* Its annotations kbatch.io/runtime-limit (a Go duration) and
         * kbatch.io/job-active-deadline-seconds (the owning batch/v1 Job's
         * spec.activeDeadlineSeconds, copied by kbatch onto the PodGroups it
         * makes), in ns, 0 where unset; runtime_invalid as for pods. */
        int64_t runtime_limit, job_deadline;
        char *runtime_invalid;
        /* Its ownerReference to a Volcano Job (batch.volcano.sh, kind Job),
         * as Volcano's job controller sets it, or NULL: whose
         * spec.schedulerName says whether its pods will ever be kbatch's
         * (pkg/cache resolves it into the snapshot's pg_foreign). */
        struct kb_owner_ref *vcjob;
        char *phase; /* NULL when the object has no status yet */
        int32_t running, succeeded, failed;
        struct kb_condition *conditions;
        size_t nconditions;
};

enum kb_queue_state {
        KB_QUEUE_OPEN,
        KB_QUEUE_CLOSED,
        KB_QUEUE_CLOSING,
        KB_QUEUE_UNKNOWN,
};
const char *kb_queue_state_name(enum kb_queue_state s);

struct kb_queue {
        struct kb_meta meta;
        int32_t weight;           /* 1 when unset */
        struct kb_res capability; /* unset slots KB_RES_UNLIMITED */
        bool has_capability;
        struct kb_res guarantee;
        struct kb_res deserved; /* spec.deserved, when given */
        bool has_deserved;
        bool reclaimable; /* true when unset */
        int32_t priority;
        char *parent;
        enum kb_queue_state state; /* status.state; Open when unset */
        bool has_state;            /* status.state was set */
};

struct kb_priorityclass {
        struct kb_meta meta;
        int32_t value;
        bool global_default;
        bool preempt_never;
};

struct kb_namespace {
        struct kb_meta meta;
};

/*
 * A policy/v1 PodDisruptionBudget, as preemption reads it
 * (kube-scheduler's filterPodsWithPDBViolation): the pods of its namespace
 * that spec.selector matches, and how many of them may still go.
 */
struct kb_pdb {
        struct kb_meta meta;
        struct kb_label_selector selector; /* spec.selector; unset matches nothing */
        int32_t disruptions_allowed;       /* status.disruptionsAllowed, 0 when unset */
};

/* ---- network topology: topology.volcano.sh/v1alpha1 HyperNode ---------- */

enum kb_hn_member_type {
        KB_HN_NODE,
        KB_HN_HYPERNODE,
};

enum kb_hn_match {
        KB_HN_EXACT, /* selector.exactMatch.name */
        KB_HN_REGEX, /* selector.regexMatch.pattern, over names */
        KB_HN_LABEL, /* selector.labelMatch, over node labels */
};

struct kb_hn_member {
        enum kb_hn_member_type type;
        enum kb_hn_match match;
        char *name;                      /* exactMatch */
        char *pattern;                   /* regexMatch, as written */
        regex_t *regex;                  /* regexMatch, compiled (POSIX extended) */
        struct kb_label_selector labels; /* labelMatch */
};

/*
 * A HyperNode: a network topology domain (a rack, a block, a zone) of
 * nodes and smaller HyperNodes.  Tier 1 is the closest to the nodes;
 * higher tiers are wider.  The members are resolved against the cluster
 * by the session (pkg/framework/topology.c), which also reports what does
 * not fit together (a missing member, a cycle).
 */
struct kb_hypernode {
        struct kb_meta meta;
        int32_t tier;    /* spec.tier, >= 0 */
        char *tier_name; /* spec.tierName, or NULL */
        struct kb_hn_member *members;
        size_t nmembers;
        int64_t node_count; /* status.nodeCount, -1 when unset */
};

/* Whether member m selects the object named name with metadata meta (a
 * node, or a HyperNode for members of that type; labelMatch applies to
 * nodes only). */
bool kb_hn_member_matches(const struct kb_hn_member *m, const char *name,
                          const struct kb_meta *meta);

/* Decoding and freeing objects, and the workload APIs (a part of this
 * header kept in its own file). */
#include "api/decode.h"

#endif /* KB_PKG_API_H */

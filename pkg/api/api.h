/*
 * api: kbatch's model of the Kubernetes objects a scheduler reads — nodes,
 * pods, PodGroups, Queues, PriorityClasses, Namespaces — with quantities,
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

static inline void kb_res_add(struct kb_res *a, const struct kb_res *b)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                a->q[i] += b->q[i];
}

static inline void kb_res_sub(struct kb_res *a, const struct kb_res *b)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                a->q[i] -= b->q[i];
}

/* a <= b in every slot. */
static inline bool kb_res_le(const struct kb_res *a, const struct kb_res *b)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (a->q[i] > b->q[i])
                        return false;
        return true;
}

/* First slot where need > avail, or -1 when need fits. */
static inline int kb_res_first_short(const struct kb_res *need, const struct kb_res *avail)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (need->q[i] > avail->q[i])
                        return i;
        return -1;
}

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
};

const char *kb_meta_label(const struct kb_meta *m, const char *key);
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

struct kb_pod {
        struct kb_meta meta;
        char *scheduler_name; /* "default-scheduler" when unset, as the API server defaults it */
        char *node_name;      /* NULL until bound */
        char *nominated_node_name;
        char *priority_class_name;
        char *group_name; /* scheduling.k8s.io/group-name (or the volcano spelling) */
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
        /* As kube-scheduler computes them: the sum over containers, the max
         * with each init container, plus spec.overhead; pods slot = 1. */
        struct kb_res requests;
        bool best_effort; /* no container requests anything (pods slot aside) */
        enum kb_pod_phase phase;
};

struct kb_condition {
        char *type;
        char *status; /* "True", "False", "Unknown" */
        char *reason;
        char *message;
        char *transition_id;
        double last_transition;
};

struct kb_task_member {
        char *name;
        int32_t min;
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
        /* status */
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

enum kb_kind {
        KB_KIND_NONE,
        KB_KIND_NODE,
        KB_KIND_POD,
        KB_KIND_PODGROUP,
        KB_KIND_QUEUE,
        KB_KIND_PRIORITYCLASS,
        KB_KIND_NAMESPACE,
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
void kb_node_free(struct kb_node *n);
void kb_pod_free(struct kb_pod *p);
void kb_podgroup_free(struct kb_podgroup *pg);
void kb_queue_free(struct kb_queue *q);
void kb_priorityclass_free(struct kb_priorityclass *pc);
void kb_namespace_free(struct kb_namespace *ns);
void kb_meta_release(struct kb_meta *m);

/*
 * For a cache that keeps many pods for long (the daemon's): frees the
 * metadata no scheduling code reads, about 40% of a typical decoded pod —
 * the labels (pod affinity is not evaluated yet) and every annotation but
 * those in KB_POD_ANNOTATIONS_READ (the group annotation is already in
 * group_name).  A plugin that starts reading a pod label or another
 * annotation must be added here.  Any thread, on a pod it owns.
 */
#define KB_POD_ANNOTATIONS_READ                                                                    \
        {                                                                                          \
                "volcano.sh/task-spec"                                                             \
        }
void kb_pod_trim(struct kb_pod *p);

/*
 * Decodes a resource list ({cpu: "2", memory: 4Gi, ...}) adding into out.
 * what names the field for messages ("spec.minResources").  Negative values
 * are errors.  Returns 0 or KB_EBADINPUT with err set to
 * "<what>.<name>: <problem>".
 */
int kb_res_decode(const struct kb_value *list, const char *what, struct kb_res *out, char *err,
                  size_t errlen);

/* The PodGroup annotation keys, in the order they are looked up. */
#define KB_GROUP_ANNOTATION         "scheduling.k8s.io/group-name"
#define KB_GROUP_ANNOTATION_VOLCANO "scheduling.volcano.sh/group-name"

/* Whether a pod's phase ends its life (Succeeded or Failed). */
static inline bool kb_pod_terminal(const struct kb_pod *p)
{
        return p->phase == KB_POD_SUCCEEDED || p->phase == KB_POD_FAILED;
}

#endif /* KB_PKG_API_H */

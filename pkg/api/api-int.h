/*
 * api internals: the decoding context and the field readers that the kind
 * decoders (meta.c, pod.c, objects.c) share.
 *
 * Every reader takes the field's path ("spec.taints[2].effect") so that an
 * error names it, treats an absent field and a JSON null alike (Kubernetes
 * reads both as unset, leaving *out untouched), and returns 0 or
 * KB_EBADINPUT with the message already written through kb__api_fail.
 */
#ifndef KB_PKG_API_INT_H
#define KB_PKG_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "base/base.h"
#include "value/value.h"

/* Room for the deepest path kbatch reads, indexes included (the node
 * affinity paths run to about 130 characters). */
#define KB__API_PATH 384

/*
 * Who is being decoded, for the "<kind> <namespace>/<name>: " prefix of every
 * message.  ns and name point into the object's own metadata once it is
 * read; before that (or for kb_res_decode, where kind is NULL) the prefix is
 * shorter.
 */
struct kb__api_dec {
        const char *kind; /* "pod", "node", ...; NULL: no object prefix */
        const char *ns;
        const char *name;
        char *err;
        size_t errlen;
        /* kb__api_res skips names that no longer fit the resource table
         * instead of failing (for nodes: see node_fill). */
        bool skip_full_res;
};

void kb__api_dec_init(struct kb__api_dec *d, const char *kind, char *err, size_t errlen);

/* Writes "<kind> <ns>/<name>: <path>: <problem>" into d->err and returns
 * KB_EBADINPUT. */
KB_PRINTF(3, 4) int kb__api_fail(struct kb__api_dec *d, const char *path, const char *fmt, ...);

/* Formats a field path into buf (a wrapper, so that the compiler does not
 * second-guess the truncation that long paths are allowed). */
KB_PRINTF(3, 4) void kb__api_path(char *buf, size_t n, const char *fmt, ...);

/* Whether v holds something (not absent, not null). */
static inline bool kb__api_set(const struct kb_value *v)
{
        return v && v->type != KB_VNULL;
}

/* Type checks for nested objects and lists; absent or null passes. */
int kb__api_object(struct kb__api_dec *d, const struct kb_value *v, const char *path);
int kb__api_list(struct kb__api_dec *d, const struct kb_value *v, const char *path);

/*
 * A list field whose elements fn decodes, each at "<path>[i]" into the
 * i-th element (zeroed, elsize bytes) of a fresh array: *out and *n (the
 * caller frees the array, even after an error: the elements decoded so far
 * and the zeroed rest are in it).  Absent, null or empty leaves both alone.
 */
typedef int (*kb__api_elem_fn)(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                               void *elem, void *ctx);
int kb__api_list_of(struct kb__api_dec *d, const struct kb_value *list, const char *path,
                    size_t elsize, void **out, size_t *n, kb__api_elem_fn fn, void *ctx);

/* A string field (numbers read as their literal text); *out is a fresh copy
 * the caller owns. */
int kb__api_str(struct kb__api_dec *d, const struct kb_value *v, const char *path, char **out);
/* An integer field in [min, max]. */
int kb__api_int32(struct kb__api_dec *d, const struct kb_value *v, const char *path, int32_t min,
                  int32_t max, int32_t *out);
int kb__api_bool(struct kb__api_dec *d, const struct kb_value *v, const char *path, bool *out);
/* An RFC 3339 timestamp, as seconds since the epoch. */
int kb__api_time(struct kb__api_dec *d, const struct kb_value *v, const char *path, double *out);
/* A map of strings (labels, annotations, nodeSelector). */
int kb__api_kvs(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                struct kb_kv **out, size_t *n);
void kb__api_kvs_free(struct kb_kv *kv, size_t n);

/*
 * Reads a resource list into out (adding), interning names; a bit per slot
 * is set in *present (may be NULL) for every name the list holds, so callers
 * can tell "cpu: 0" from no cpu at all.  Negative quantities are errors, and
 * so is a new name when the table is full, unless d->skip_full_res.
 */
int kb__api_res(struct kb__api_dec *d, const struct kb_value *list, const char *path,
                struct kb_res *out, uint32_t *present);
/* out += add, slot by slot; KB_EOVERFLOW (out unchanged) when a sum
 * leaves int64. */
int kb__api_res_add(struct kb_res *out, const struct kb_res *add);

/* Fails unless doc is an object (a kind decoder's first check). */
int kb__api_doc(struct kb__api_dec *d, const struct kb_value *doc);

/* The taint effect named s (v1.TaintEffect); KB_EBADINPUT when none. */
int kb__api_taint_effect(const char *s, enum kb_taint_effect *out);

/* What a selector requirement selects, which decides the operators it may
 * use: node labels (In, NotIn, Exists, DoesNotExist, Gt, Lt), the node's
 * name (matchFields: In, NotIn), pod or namespace labels (In, NotIn,
 * Exists, DoesNotExist). */
enum kb__sel_kind { KB__SEL_NODE_LABEL, KB__SEL_NODE_FIELD, KB__SEL_LABEL };
/* One requirement ({key, operator, values}) at path into r (selector.c). */
int kb__api_selector_req(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                         enum kb__sel_kind kind, struct kb_selector_req *r);
void kb__api_reqs_free(struct kb_selector_req *r, size_t n);

/*
 * The pod's inter-pod placement fields (podplace.c): pod affinity and
 * anti-affinity, topology spread constraints, host ports, images.  d has
 * read the pod's metadata.  A problem in them does not fail the pod: it
 * goes into pod->invalid (naming the pod and the field) and those fields
 * stay empty.
 */
void kb__api_pod_placement(struct kb__api_dec *d, const struct kb_value *spec, struct kb_pod *pod);
/* pod->requests and pod->best_effort from spec's containers, init
 * containers and overhead (requests.c's banner says how). */
int kb__api_pod_requests(struct kb__api_dec *d, const struct kb_value *spec, struct kb_pod *pod);
void kb__api_pod_placement_free(struct kb_pod *pod);

/* The group a pod joins, its controller, and what the PodGroup kbatch
 * makes for a pod of no group reads from it (workload.c); d has read the
 * pod's metadata. */
int kb__api_pod_group(struct kb__api_dec *d, const struct kb_value *doc, struct kb_pod *pod);
/* The declared-runtime fields of a pod (from its spec and its metadata,
 * decoded first) and of a PodGroup (runtime.c).  Never fail: an unusable
 * value is kept in runtime_invalid. */
void kb__api_pod_runtime(const struct kb_value *spec, struct kb_pod *pod);
void kb__api_podgroup_runtime(struct kb_podgroup *pg);
void kb__api_owner_free(struct kb_owner_ref *o);
/* The first of doc's ownerReferences that is the controller (kind NULL),
 * or of kind in an apiVersion of group ("batch.volcano.sh"), into *out
 * (NULL when none; on an error *out may hold a part, for the caller's
 * free). */
int kb__api_owner(struct kb__api_dec *d, const struct kb_value *doc, const char *group,
                  const char *kind, struct kb_owner_ref **out);

/* Reads doc's metadata into m and points d->ns/d->name at it.
 * Cluster-scoped kinds (namespaced false) get a NULL namespace. */
int kb__api_meta(struct kb__api_dec *d, const struct kb_value *doc, bool namespaced,
                 struct kb_meta *m);

/* Decodes doc into a fresh zeroed struct with fill, or frees it on error. */
#define KB__DECODE(kind_name, type, fill, free_fn)                                                 \
        do {                                                                                       \
                struct kb__api_dec d_;                                                             \
                type *obj_;                                                                        \
                int rc_;                                                                           \
                kb__api_dec_init(&d_, kind_name, err, errlen);                                     \
                *out = NULL;                                                                       \
                if ((rc_ = kb__api_doc(&d_, doc)))                                                 \
                        return rc_;                                                                \
                obj_ = kb_xcalloc(1, sizeof(*obj_));                                               \
                if ((rc_ = fill(&d_, doc, obj_))) {                                                \
                        free_fn(obj_);                                                             \
                        return rc_;                                                                \
                }                                                                                  \
                *out = obj_;                                                                       \
                return 0;                                                                          \
        } while (0)

/* A metav1.LabelSelector ({matchLabels, matchExpressions}) at path
 * (selector.c): matchLabels become In requirements; absent or null leaves
 * out unset (it matches nothing); free with kb__api_label_selector_release. */
int kb__api_label_selector(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                           struct kb_label_selector *out);
void kb__api_label_selector_release(struct kb_label_selector *sel);
/* Adds the requirement key op (value, or no value when NULL) to s. */
void kb__api_selector_add(struct kb_label_selector *s, const char *key, enum kb_selector_op op,
                          const char *value);

#endif /* KB_PKG_API_INT_H */

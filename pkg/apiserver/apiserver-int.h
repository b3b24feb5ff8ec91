/*
 * Internals shared by the files of the apiserver module: storage (the
 * store, its indexes and history, the type registry, CRD registration, the
 * observer list) and the kinds (struct kb_apikind and what the
 * descriptors use).  The simulated cluster (pkg/kubesim) builds on this
 * header alone; the HTTP and protocol layer adds apiserver-http.h.
 *
 * Threading.  libmicrohttpd runs one thread per connection.  Every piece of
 * state below (types, objects, history, resourceVersion) sits behind one
 * mutex, srv->mu; a request handler takes it for the whole of its work, and
 * so does the simulation thread for each tick.  Watch streams wait on
 * srv->cond, which every write broadcasts.  Nothing here is touched without
 * the lock, except the read-only options.
 */
#ifndef KB_PKG_APISERVER_INT_H
#define KB_PKG_APISERVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

#include "apiserver/apiserver.h"
#include "base/base.h"
#include "value/value.h"

/* A stored object.  Documents are shared between the store and the watch
 * history, hence the count; a document is never changed after it is stored
 * (a write stores a new one), and v is frozen (kb_value_freeze: one block,
 * read-only, never kb_value_free).  The tree a writer gave is freed. */
struct kb_doc {
        int refs;
        struct kb_value *v;
};

struct kb_obj {
        char *key; /* "namespace/name", or "name" when cluster-scoped */
        struct kb_doc *doc;
        UT_hash_handle hh;
};

/* One count of requests to a type (reqcount.c). */
struct kb__req_count {
        const char *verb; /* static */
        char *sub;        /* "" for none */
        const char *scope;
        int code;
        uint64_t n;
};

struct kb_rtype;
/* Server-side printing of a built-in type: the columns, then one row. */
struct kb_col {
        const char *name;
        const char *type;
        const char *format;
        int priority;
        const char *desc;
};
typedef void (*kb_row_fn)(struct kb_apiserver *srv, const struct kb_value *obj,
                          struct kb_value *cells);
/* Validation of a built-in type: appends causes. */
struct kb_causes;
typedef void (*kb_validate_fn)(const struct kb_value *obj, struct kb_causes *c);
/* A type that is only ever created and never stored (bindings, access
 * reviews): answers a POST whose body (owned) has the type's kind. */
struct kb_ctx;
typedef void (*kb_create_fn)(struct kb_ctx *c, struct kb_value *body);

/* Server-side defaults of a new built-in object, after its uid and
 * timestamps are set (kb__prepare_create). */
typedef void (*kb_defaults_fn)(struct kb_apiserver *srv, struct kb_value *obj);
struct kb_obj;
struct ProtobufCMessageDescriptor;

/*
 * A built-in kind: everything the server knows of it, in one const
 * descriptor (Kubernetes keeps the same per kind in its strategy.go).  The
 * descriptors live in a few kinds-*.c files and are listed, in discovery
 * order, by KB_KIND_LIST in kinds.c; docs/apiserver.md has the recipe for
 * adding one.  Every field but the names may be left zero.
 */
struct kb_apikind {
        const char *group, *version, *resource, *kind; /* group "" for core */
        bool namespaced;
        bool has_status;       /* a status subresource */
        const char *shorts[3]; /* short names, NULL-terminated */
        bool all;              /* in the "all" category */
        bool name_is_label;    /* names are DNS labels (63 bytes, no dots) */
        bool pod_subresources; /* binding, eviction and log (pods) */
        kb_validate_fn validate;
        kb_defaults_fn defaults;
        /* Server-side printing; none: name and age. */
        const struct kb_col *cols;
        size_t ncols;
        kb_row_fn row;
        /* Create-only kinds (bindings, reviews): answers a POST, stores
         * nothing. */
        kb_create_fn create;
        /* The protobuf message of its objects (k8s.proto), or NULL when a
         * protobuf body of it is refused. */
        const struct ProtobufCMessageDescriptor *proto;
        /* Rewrites a written object before validation (a Secret's
         * stringData); KB_EBADINPUT with err when it does not decode. */
        int (*normalize)(struct kb_value *obj, char *err, size_t errlen);
        /* Before a create or update is stored (a CRD registers its types). */
        void (*on_write)(struct kb_apiserver *srv, const struct kb_value *obj);
        /* After a create is stored (a namespace gets its ServiceAccount). */
        void (*on_create)(struct kb_apiserver *srv, const struct kb_value *obj);
        /* Removes o in place of kb__store_remove once nothing holds it (a
         * namespace takes its contents, a CRD its types). */
        void (*on_delete)(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o);
        /* May an object of this name be deleted? NULL: any may. */
        bool (*protected_name)(const char *name);
        /* The grace period a delete asks of obj (asked: the request's, or
         * NULL); NULL: none. */
        double (*grace)(const struct kb_apiserver *srv, const struct kb_value *obj,
                        const int64_t *asked);
};

struct kb_rtype {
        char *group; /* "" for core */
        char *version;
        char *resource; /* plural */
        char *kind;
        char *singular;
        char *list_kind;
        char **short_names;
        size_t nshort;
        char **categories;
        size_t ncat;
        bool namespaced;
        bool has_status;
        bool custom;
        bool gone; /* CRD deleted: kept until shutdown for history and watches */
        /* built-ins: the descriptor (NULL for custom resources), and
         * what is copied from it */
        const struct kb_apikind *k;
        const struct kb_col *cols;
        size_t ncols;
        kb_row_fn row;
        kb_validate_fn validate;
        kb_create_fn create; /* create-only: nothing stored, no other verb */
        /* Another version of a stored type (events.k8s.io/v1 Events are core
         * Events): objects live in view_of and convert on the way in and out. */
        struct kb_rtype *view_of;
        const struct kb_value *def; /* a built-in's schema, in srv->defs */
        /* custom resources */
        struct kb_value *schema;     /* openAPIV3Schema, or NULL */
        struct kb_value *columns;    /* additionalPrinterColumns, or NULL */
        struct kb_value *selectable; /* selectableFields' paths, "spec.x" (an array) */
        char *crd_name;
        struct kb_obj *objs;    /* uthash by key */
        struct kb_inode *index; /* the same objects in key order (index.c) */
        /* Requests made to it, for GET /metrics (reqcount.c). */
        struct kb__req_count *counts;
        size_t ncounts, capcounts;
};

enum kb_evtype { KB_EV_ADDED, KB_EV_MODIFIED, KB_EV_DELETED };

struct kb_event {
        uint64_t rv;
        enum kb_evtype type;
        struct kb_rtype *rt;
        struct kb_doc *obj; /* the new state (the last state for DELETED) */
        struct kb_doc *old; /* the previous state for MODIFIED, else NULL */
};

struct kb_fault_rng {
        uint64_t s;
};

/* Who storage tells of its writes (store.c).  Storage calls nothing above
 * it: the simulated cluster's indexes and its garbage collector register
 * here (kb__sim_attach) rather than being called by name.  Each callback
 * runs with srv->mu held and may write to the store itself. */
struct kb_store_observer {
        /* rt's object key changed: old NULL for a create, now NULL for a
         * removal.  Called before the write's event is recorded. */
        void (*write)(void *arg, const struct kb_rtype *rt, const char *key,
                      const struct kb_value *old, const struct kb_value *now);
        /* The object with this uid is gone for good (its DELETED event is
         * recorded) and the delete did not orphan what it owned. */
        void (*owner_gone)(void *arg, const char *uid);
        void *arg;
};

struct kb_apiserver {
        struct kb_apiserver_opts opts;
        struct kb_value_shares *shares; /* what stored documents share (store.c) */
        pthread_mutex_t mu;
        pthread_cond_t cond;
        uint64_t rv;
        struct kb_value *defs;   /* the built-in kinds' OpenAPI schemas, by name */
        struct kb_rtype **types; /* every type ever registered, in order */
        size_t ntypes, captypes;
        /* Watch history: a ring of the last opts.history events. */
        struct kb_event *hist;
        size_t hist_start, hist_len;
        uint64_t compacted_rv; /* rv of the newest event dropped from the ring */
        bool stopping;
        double started; /* monotonic */
        uint64_t rng;
        unsigned next_ip;
        struct MHD_Daemon *mhd;
        struct kb_connlimit *limit;  /* connections per client and in all */
        unsigned watches;            /* streaming now (atomic) */
        struct kb_ratelog watch_log; /* "too many watches" lines */
        struct kb_ratelog idle_log;  /* "no request within" lines */
        struct kb_ratelog stall_log; /* "idle within a request" lines */
        int port;
        pthread_t sim;
        bool sim_started;
        struct kb_store_observer observers[4]; /* kb__store_observe */
        size_t nobservers;
        struct kb_simindex *simidx;   /* the simulated cluster's indexes (pkg/kubesim) */
        bool orphan;                  /* the delete under way orphans what the object owns */
        struct kb_rtype *pods, *jobs; /* the types the controllers watch */
        /* Owned copies of the strings in opts (opts points at these). */
        char *tls_cert, *tls_key, *token;
};

/* ---- the ordered index (index.c), caller holds srv->mu ----------------- */

struct kb_inode;
/* Orders keys by namespace, then name ('/' below every other byte). */
int kb__key_cmp(const char *a, const char *b);
void kb__index_insert(struct kb_rtype *rt, struct kb_obj *o);
void kb__index_remove(struct kb_rtype *rt, struct kb_obj *o);
/* The first object whose key is > key (>= when inclusive); key NULL: the
 * first object.  NULL past the end. */
struct kb_obj *kb__index_seek(const struct kb_rtype *rt, const char *key, bool inclusive);
/* How many objects have keys < key. */
size_t kb__index_rank(const struct kb_rtype *rt, const char *key);
size_t kb__index_count(const struct kb_rtype *rt);
void kb__index_free(struct kb_rtype *rt);

/* ---- the type registry (typereg.c), caller holds srv->mu --------------- */

struct kb_rtype *kb__type_find(struct kb_apiserver *srv, const char *group, const char *version,
                               const char *resource);
struct kb_rtype *kb__type_by_kind(struct kb_apiserver *srv, const char *group, const char *kind);
struct kb_rtype *kb__type_add(struct kb_apiserver *srv);
/* Whether rt is Volcano's Jobs, or Volcano's PodGroups (custom resources,
 * there once their CRD is). */
bool kb__is_vcjobs(const struct kb_rtype *rt);
bool kb__is_podgroups(const struct kb_rtype *rt);

/* ---- store (store.c), caller holds srv->mu --------------------------- */

struct kb_doc *kb__doc_new(struct kb_apiserver *srv, struct kb_value *v);
void kb__doc_unref(struct kb_doc *d);
struct kb_obj *kb__obj_find(struct kb_rtype *rt, const char *ns, const char *name);
/* Stores v (owned; freed, a frozen copy kept) as the new state: sets rv, records
 * the event, wakes the watches.  Returns the stored document. */
struct kb_doc *kb__store_put(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *v);
/* Adds an observer of every write (copied). */
void kb__store_observe(struct kb_apiserver *srv, const struct kb_store_observer *ob);
/* Removes o for good; the observers hear that its owner uid is gone unless
 * srv->orphan (the garbage collector then deletes what it owned, gc.c). */
void kb__store_remove(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o);
/* Deletes an object as DELETE does: finalizers or a grace period make it
 * linger with a deletionTimestamp; else its kind's on_delete removes it (a
 * namespace takes its contents with it), or kb__store_remove. */
void kb__store_delete(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o,
                      double grace);
void kb__store_cascade_namespace(struct kb_apiserver *srv, const char *ns);
/* Fills uid, creationTimestamp, generation of a new object. */
void kb__meta_init(struct kb_apiserver *srv, struct kb_value *obj);
/* Records a core/v1 Event about obj. */
void kb__event_record(struct kb_apiserver *srv, const struct kb_rtype *rt,
                      const struct kb_value *obj, const char *type, const char *reason,
                      const char *component, const char *fmt, ...) KB_PRINTF(7, 8);
uint64_t kb__rand(struct kb_apiserver *srv);
double kb__now(void); /* wall clock seconds */
const char *kb__meta_str(const struct kb_value *obj, const char *key);
char *kb__api_version(const struct kb_rtype *rt);
/* Registers (or re-registers) every served version of a CRD as a type;
 * unregistering removes their objects and marks them gone. */
int kb__register_crd(struct kb_apiserver *srv, const struct kb_value *crd);
void kb__unregister_crd(struct kb_apiserver *srv, const char *name);
void kb__store_free(struct kb_apiserver *srv);
void kb__type_free(struct kb_rtype *rt);

/* ---- the kinds (kinds.c, defaults.c, vcjobkind.c), caller holds srv->mu -- */

/* Registers every built-in kind (kinds.c), in discovery order. */
void kb__builtin_types(struct kb_apiserver *srv);
/* The built-in kinds' descriptors, in that order; any thread. */
const struct kb_apikind *const *kb__kinds(size_t *n);
/* kb__register_crd, then what the kinds add to a custom type (the
 * validation of Volcano's Jobs); vcjobkind.c. */
void kb__crd_register(struct kb_apiserver *srv, const struct kb_value *crd);
/* Server-set fields of a new object (uid, timestamps) and the defaults of
 * its kind (a pod's phase, a job's selector, a CRD's conditions). */
void kb__prepare_create(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *obj);
/* Makes what a new namespace gets (its "default" ServiceAccount). */
void kb__namespace_created(struct kb_apiserver *srv, const char *ns);
/* A random 5-character suffix for generateName. */
void kb__name_suffix(struct kb_apiserver *srv, char out[6]);
/* How long a pod being deleted lingers, as kube-apiserver's graceful
 * deletion has it: not at all when it is on no node, has ended, or no
 * kubelet runs; else the grace asked for (ASKED, when not NULL), or the
 * pod's own spec.terminationGracePeriodSeconds. */
double kb__pod_grace(const struct kb_apiserver *srv, const struct kb_value *pod,
                     const int64_t *asked);
/* Sets obj[key] to v (owned) unless it is there. */
void kb__set_default(struct kb_value *obj, const char *key, struct kb_value *v);

/* ---- selectors (select.c) --------------------------------------------- */

struct kb_selector;
/* Parses a label (fields=false) or field selector; NULL text is "match
 * everything".  Returns 0 or KB_EBADINPUT with a message. */
int kb__selector_parse(const char *text, bool fields, struct kb_selector **out, char *err,
                       size_t errlen);
bool kb__selector_match(const struct kb_selector *s, const struct kb_value *obj);
void kb__selector_free(struct kb_selector *s);
/* The first field of a field selector the real server would not accept
 * for rt, or NULL when every field is accepted. */
const char *kb__selector_unsupported(const struct kb_selector *s, const struct kb_rtype *rt);
/* The value of a dotted field path as text, "" when missing. */
const char *kb__field_text(const struct kb_value *obj, const char *path, char *buf, size_t n);

/* ---- patches (patch.c) ------------------------------------------------- */

/* Each returns 0 with *doc changed in place, or KB_EBADINPUT with err. */
void kb__merge_patch(struct kb_value **doc, const struct kb_value *patch);
int kb__strategic_patch(struct kb_value **doc, const struct kb_value *patch, char *err,
                        size_t errlen);
int kb__json_patch(struct kb_value **doc, const struct kb_value *ops, char *err, size_t errlen);

/* ---- validation (validate.c) ------------------------------------------ */

struct kb_cause {
        char *reason;
        char *field;
        char *message;
};
struct kb_causes {
        struct kb_cause *v;
        size_t n, cap;
};
KB_PRINTF(4, 5)
void kb__cause_add(struct kb_causes *c, const char *reason, const char *field, const char *fmt,
                   ...);
void kb__causes_release(struct kb_causes *c);
/* Fills in a custom resource's structural-schema defaults (validate.c). */
void kb__schema_defaults(const struct kb_rtype *rt, struct kb_value *obj);
void kb__validate_object(const struct kb_rtype *rt, const struct kb_value *obj,
                         struct kb_causes *c);
void kb__validate_schema(const struct kb_value *schema, const struct kb_value *v, const char *path,
                         struct kb_causes *c);
void kb__validate_pod(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_pod_spec(const struct kb_value *spec, const char *path, struct kb_causes *c);
void kb__validate_node(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_job(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_priorityclass(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_crd(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_namespace(const struct kb_value *obj, struct kb_causes *c);
/* A batch.volcano.sh Job, refused where Volcano's webhook refuses it
 * (vcjobkind.c). */
void kb__validate_vcjob(const struct kb_value *obj, struct kb_causes *c);
/* Writes into a new Volcano Job the defaults Volcano's mutating webhook
 * gives it (queue, schedulerName, minAvailable, task names and
 * minAvailable, maxRetry), so that they show as on a cluster. */
void kb__vcjob_defaults(struct kb_value *obj);
/* A Secret's stringData into data, its data checked as base64 (config.c);
 * KB_EBADINPUT with err for an undecodable object. */
int kb__secret_normalize(struct kb_value *obj, char *err, size_t errlen);
/* Server-side rewriting of a written object before validation, by its
 * kind's normalize (admit.c); KB_EBADINPUT with err for an undecodable
 * object. */
int kb__normalize(const struct kb_rtype *rt, struct kb_value *obj, char *err, size_t errlen);
void kb__validate_configmap(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_secret(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_role(const struct kb_value *obj, struct kb_causes *c);
void kb__validate_rolebinding(const struct kb_value *obj, struct kb_causes *c);

/* ---- PodDisruptionBudgets (pdb.c), caller holds srv->mu ----------------- */

void kb__validate_pdb(const struct kb_value *obj, struct kb_causes *c);
/* Whether the budgets of pod's namespace let it be evicted: NULL when they
 * do, else the Status to answer (the caller owns it) and its code in *code
 * (429 for a budget that refuses, 500 for a pod more than one matches). */
struct kb_value *kb__pdb_refusal(struct kb_apiserver *srv, const struct kb_value *pod, int *code);

/* ---- schemas (schema.c, fieldcheck.c) ------------------------------------ */

/* The built-in kinds' schemas as OpenAPI v3 components, by full name. */
struct kb_value *kb__schemas_new(void);
/* The component whose x-kubernetes-group-version-kind is this, or NULL. */
const struct kb_value *kb__schema_for(const struct kb_value *defs, const char *group,
                                      const char *version, const char *kind);
/* Follows $ref (and a one-element allOf); *name gets the component's name
 * when a reference was followed. */
const struct kb_value *kb__schema_resolve(const struct kb_value *defs, const struct kb_value *s,
                                          const char **name);

struct kb_fieldcheck {
        const struct kb_value *defs;
        bool builtin;             /* wrong JSON types are decode errors; enums checked */
        struct kb_causes *causes; /* enum violations (422) */
        char *decode_err;         /* the first type error, or NULL */
        struct kb_buf unknown;    /* unknown field "a", unknown field "b" */
        size_t nunknown;
        char *paths[64]; /* the first unknown fields' paths */
};
/* Checks v against schema, dropping unknown fields from v; a field equal in
 * old (what is stored) is not judged.  parent names the enclosing Go type
 * in decode errors. */
void kb__field_check(struct kb_fieldcheck *fc, const struct kb_value *schema, struct kb_value *v,
                     const struct kb_value *old, const char *path, const char *parent);
void kb__fieldcheck_release(struct kb_fieldcheck *fc);

/* ---- printing (table.c; each kind's columns and row are in its descriptor) */

/* Appends a Table for objs (n of them) to out. */
void kb__table(struct kb_apiserver *srv, const struct kb_rtype *rt, const struct kb_value **objs,
               size_t n, const char *include, bool with_columns, const char *rv,
               struct kb_value *out);
/* Cells (cells.c): a string ("<none>" when empty), an age, the object's
 * name; and the age of a timestamp as a printer shows it. */
void kb__age_of(const char *ts, char *buf, size_t n);
void kb__cell_str(struct kb_value *cells, const char *s);
void kb__cell_age(struct kb_value *cells, const struct kb_value *obj);
void kb__cell_name(struct kb_value *cells, const struct kb_value *obj);
#define KB_COL_NAME                                                                                \
        {                                                                                          \
                "Name", "string", "name", 0, "Name must be unique within a namespace."             \
        }
#define KB_COL_AGE                                                                                 \
        {                                                                                          \
                "Age", "string", "", 0, "CreationTimestamp is a timestamp."                        \
        }

/* ---- faults (store.c) ------------------------------------------------------ */

/* Whether a fault with this rate happens now (store.c, by kb__rand). */
bool kb__fault_roll(struct kb_apiserver *srv, double rate);

#endif /* KB_PKG_APISERVER_INT_H */

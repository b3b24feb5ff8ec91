/*
 * Internals shared by the files of the apiserver module.
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
 * (a write stores a new one). */
struct kb_doc {
        int refs;
        struct kb_value *v;
};

struct kb_obj {
        char *key; /* "namespace/name", or "name" when cluster-scoped */
        struct kb_doc *doc;
        UT_hash_handle hh;
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
        /* built-ins */
        const struct kb_col *cols;
        size_t ncols;
        kb_row_fn row;
        kb_validate_fn validate;
        /* custom resources */
        struct kb_value *schema;  /* openAPIV3Schema, or NULL */
        struct kb_value *columns; /* additionalPrinterColumns, or NULL */
        char *crd_name;
        struct kb_obj *objs; /* uthash by key */
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

struct kb_apiserver {
        struct kb_apiserver_opts opts;
        pthread_mutex_t mu;
        pthread_cond_t cond;
        uint64_t rv;
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
        int port;
        pthread_t sim;
        bool sim_started;
        /* Owned copies of the strings in opts (opts points at these). */
        char *tls_cert, *tls_key, *token;
};

/* ---- store (store.c), caller holds srv->mu --------------------------- */

struct kb_doc *kb__doc_new(struct kb_value *v);
void kb__doc_unref(struct kb_doc *d);
struct kb_rtype *kb__type_find(struct kb_apiserver *srv, const char *group, const char *version,
                               const char *resource);
struct kb_rtype *kb__type_by_kind(struct kb_apiserver *srv, const char *group, const char *kind);
struct kb_rtype *kb__type_add(struct kb_apiserver *srv);
struct kb_obj *kb__obj_find(struct kb_rtype *rt, const char *ns, const char *name);
/* Stores v (owned) as the object's new state: sets resourceVersion, records
 * the event, wakes the watches.  Returns the stored document. */
struct kb_doc *kb__store_put(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *v);
void kb__store_remove(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o);
/* Deletes an object as DELETE does: finalizers make it linger with a
 * deletionTimestamp; a namespace takes its contents with it. */
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
int kb__register_crd(struct kb_apiserver *srv, const struct kb_value *crd);
void kb__unregister_crd(struct kb_apiserver *srv, const char *name);
void kb__builtin_types(struct kb_apiserver *srv);
char *kb__api_version(const struct kb_rtype *rt);
/* Server-set fields of a new object (uid, timestamps) and the defaults of
 * its type (a pod's phase, a job's selector, a CRD's conditions). */
void kb__prepare_create(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *obj);
/* A random 5-character suffix for generateName. */
void kb__name_suffix(struct kb_apiserver *srv, char out[6]);
void kb__store_free(struct kb_apiserver *srv);

/* ---- selectors (select.c) --------------------------------------------- */

struct kb_selector;
/* Parses a label (fields=false) or field selector; NULL text is "match
 * everything".  Returns 0 or KB_EBADINPUT with a message. */
int kb__selector_parse(const char *text, bool fields, struct kb_selector **out, char *err,
                       size_t errlen);
bool kb__selector_match(const struct kb_selector *s, const struct kb_value *obj);
void kb__selector_free(struct kb_selector *s);
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
bool kb__is_dns_label(const char *s);
bool kb__is_dns_subdomain(const char *s);
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

/* ---- printing (table.c) ------------------------------------------------ */

/* Appends a Table for objs (n of them) to out. */
void kb__table(struct kb_apiserver *srv, const struct kb_rtype *rt, const struct kb_value **objs,
               size_t n, const char *include, bool with_columns, const char *rv,
               struct kb_value *out);
void kb__builtin_printers(struct kb_rtype *rt);

/* ---- discovery (discovery.c) ------------------------------------------ */

void kb__discovery_aggregated(struct kb_apiserver *srv, bool core, const char *ver,
                              struct kb_value *out);
void kb__discovery_versions(struct kb_apiserver *srv, struct kb_value *out);
void kb__discovery_groups(struct kb_apiserver *srv, struct kb_value *out);
int kb__discovery_resources(struct kb_apiserver *srv, const char *group, const char *version,
                            struct kb_value *out);
int kb__discovery_group(struct kb_apiserver *srv, const char *group, struct kb_value *out);
void kb__openapi_index(struct kb_apiserver *srv, struct kb_value *out);
int kb__openapi_gv(struct kb_apiserver *srv, const char *group, const char *version,
                   struct kb_value *out);

/* ---- watch (watch.c) --------------------------------------------------- */

struct kb_watch {
        struct kb_apiserver *srv;
        struct kb_rtype *rt;
        char *ns;
        struct kb_selector *lsel, *fsel;
        uint64_t cursor;
        bool table;
        char *include;
        bool sent_columns;
        bool bookmarks;
        double deadline;      /* monotonic, 0 for none */
        double next_bookmark; /* monotonic */
        double fault_close;   /* monotonic, 0 for none */
        struct kb_buf out;
        size_t off;
        bool end; /* end the stream once out is drained */
};

/* ---- simulation (sim.c) ------------------------------------------------ */

int kb__sim_add_nodes(struct kb_apiserver *srv, const char *spec, char *err, size_t errlen);
void kb__sim_tick(struct kb_apiserver *srv);

/* ---- authentication (auth.c) ------------------------------------------ */

/* Whether a request for path may go ahead: the server has no token, or the
 * path is one anyone may ask for (/healthz, /readyz, /livez, /version), or
 * authorization carries the server's bearer token.  Any thread, no lock. */
bool kb__authorized(const struct kb_apiserver *srv, const char *path, const char *authorization);
/* Whether the Authorization header value is "Bearer TOKEN" with exactly
 * token; compares in time independent of where the texts differ. */
bool kb__bearer_ok(const char *token, const char *authorization);

/* ---- http (http.c) ----------------------------------------------------- */

bool kb__fault_roll(struct kb_apiserver *srv, double rate);

#endif /* KB_PKG_APISERVER_INT_H */

/*
 * Internals of the HTTP and protocol layer of the apiserver module: a
 * request on its way through the handlers (struct kb_ctx), replies and
 * Status errors, bodies, reads, writes, watches, server-side apply,
 * discovery, OpenAPI, protobuf, authentication and the daemon.  It sits
 * above the kinds and storage of apiserver-int.h, which it includes; the
 * simulated cluster (pkg/kubesim) sees only that one.
 */
#ifndef KB_PKG_APISERVER_HTTP_H
#define KB_PKG_APISERVER_HTTP_H

#include "apiserver/apiserver-int.h"

/* ---- request counts (reqcount.c), caller holds srv->mu ----------------- */

struct kb_ctx;
struct kb_buf;
/* Counts the request c answered (its resource, verb and status code). */
void kb__reqcount_add(const struct kb_ctx *c);
/* kube-apiserver's apiserver_request_total, in the Prometheus text format. */
void kb__reqcount_render(struct kb_apiserver *srv, struct kb_buf *b);

/* ---- discovery (discovery.c) ------------------------------------------ */

/* {"group": g, "version": v, "kind": k}, as discovery and OpenAPI name a
 * kind.  The caller owns it. */
struct kb_value *kb__gvk(const char *group, const char *version, const char *kind);
void kb__discovery_aggregated(struct kb_apiserver *srv, bool core, const char *ver,
                              struct kb_value *out);
void kb__discovery_versions(struct kb_apiserver *srv, struct kb_value *out);
void kb__discovery_groups(struct kb_apiserver *srv, struct kb_value *out);
int kb__discovery_resources(struct kb_apiserver *srv, const char *group, const char *version,
                            struct kb_value *out);
int kb__discovery_group(struct kb_apiserver *srv, const char *group, struct kb_value *out);
/* The API groups served, in the order first registered (core "" first),
 * and the versions of one; at most max of them. */
size_t kb__api_groups(struct kb_apiserver *srv, const char **out, size_t max);
size_t kb__api_versions(struct kb_apiserver *srv, const char *group, const char **out, size_t max);
/* OpenAPI v3 (openapi.c): the index, and one group-version's document with
 * its paths and component schemas. */
void kb__openapi_index(struct kb_apiserver *srv, struct kb_value *out);
int kb__openapi_gv(struct kb_apiserver *srv, const char *group, const char *version,
                   struct kb_value *out);

/* ---- requests (request.c, read.c, write.c, subresources.c) ---------------- */

#define CT_JSON "application/json"

/* One request on its way through the handlers, with srv->mu held. */
/* A request body as kb__body_decode leaves it. */
struct kb_body {
        bool decoded;
        bool taken;                /* a handler has had it (kb__parse_body) */
        struct kb_value *v;        /* owned until taken */
        int status;                /* 0, or the failure to answer: 400, 415 */
        const char *reason;        /* static */
        char msg[320];             /* the failure's message */
        struct kb_value_dups dups; /* repeated keys, for fieldValidation */
        bool yaml;                 /* decoded from YAML (how dups read) */
};

struct kb_ctx {
        struct kb_apiserver *srv;
        const struct kb_api_req *req;
        struct kb_api_resp *resp;
        struct kb_rtype *rt;
        const char *ns;   /* path namespace, or NULL */
        const char *name; /* item name, or NULL */
        const char *sub;  /* subresource, or NULL */
        /* The type the path named when it is a view of rt (see kb_rtype). */
        struct kb_rtype *view;
        bool apply; /* a server-side apply: managedFields are already set */
        /* The body, decoded before the lock (handler.c), or NULL. */
        struct kb_body *body;
        /* Set for a create or update (not a patch) from body: admission
         * judges its repeated keys by fieldValidation. */
        const struct kb_body *judged;
};

/* The value of a query parameter ("" when given without one), or NULL. */
const char *kb__query(const struct kb_api_req *req, const char *key);
/* Replies with v (owned) as JSON. */
void kb__reply(struct kb_api_resp *resp, int status, struct kb_value *v);
struct kb_value *kb__status_obj(int code, const char *reason, const char *msg);
/* Replies with a Status; details (owned) may be NULL. */
KB_PRINTF(5, 6)
void kb__fail(struct kb_api_resp *resp, int code, const char *reason, struct kb_value *details,
              const char *fmt, ...);
void kb__not_found_path(struct kb_api_resp *resp);
/* "pods" or "podgroups.scheduling.volcano.sh", as messages name a resource;
 * the caller frees it. */
char *kb__qualified(const struct kb_rtype *rt);
struct kb_value *kb__details(const struct kb_rtype *rt, const char *name, const char *kind);
void kb__not_found(struct kb_ctx *c, const struct kb_rtype *rt, const char *name);
void kb__conflict(struct kb_ctx *c, const char *name);
/* 422 Invalid naming each cause's field. */
void kb__invalid(struct kb_ctx *c, const char *name, struct kb_causes *causes);
bool kb__wants_table(const struct kb_api_req *req);
bool kb__is_protobuf(const char *ct);
/* The body as JSON (or YAML when the content type says so); NULL after
 * answering 400 or 415. */
struct kb_value *kb__parse_body(struct kb_ctx *c);
/* Decodes req's body into b (which it initialises); any thread, no lock. */
void kb__body_decode(const struct kb_api_req *req, struct kb_body *b);
void kb__body_release(struct kb_body *b);
#ifdef KB_TESTING
/* Bodies decoded with srv->mu held (kb__parse_body without a decoded
 * body): none for creates, updates and patches. */
extern unsigned long kb__body_decodes_locked;
#endif
/* Whether an injected fault failed this write (the reply is made). */
bool kb__fault_write(struct kb_ctx *c, const char *what);
bool kb__namespace_exists(struct kb_apiserver *srv, const char *ns);
/* Fills kind and apiVersion of obj, or answers 400 when they name another
 * type. */
bool kb__check_kind(struct kb_ctx *c, struct kb_value *obj);
/* A boolean query parameter as Kubernetes reads one: present and neither
 * "0" nor "false" (any case) is true, even with no value. */
bool kb__query_bool(const struct kb_api_req *req, const char *key);
/* Checks dryRun and fieldValidation of a write; false after answering 422
 * as the real server words it (kind CreateOptions, UpdateOptions, ...). */
bool kb__check_options(struct kb_ctx *c, const char *options_kind);
/* dryRun=All was asked for. */
bool kb__dry_run(const struct kb_api_req *req);
/* Whether the server can answer in a type the Accept header allows; sets
 * *yaml when the first that it can is application/yaml. */
bool kb__acceptable(const char *accept, bool *yaml);
/* 422 Invalid for an object of group/kind other than the path's type. */
void kb__invalid_kind(struct kb_api_resp *resp, const char *group, const char *kind,
                      const char *name, struct kb_causes *causes);

struct kb_listing {
        const struct kb_value **objs;
        size_t n, cap;
};
/* Parses labelSelector and fieldSelector; false after answering 400. */
bool kb__selectors(struct kb_ctx *c, struct kb_selector **ls, struct kb_selector **fs);
/* The objects of c->rt in c->ns that match, sorted by namespace and name. */
void kb__collect(struct kb_ctx *c, struct kb_selector *ls, struct kb_selector *fs,
                 struct kb_listing *l);
void kb__do_list(struct kb_ctx *c);
void kb__do_watch(struct kb_ctx *c);
void kb__do_item_get(struct kb_ctx *c, struct kb_obj *o);
/* Creates obj (owned) and answers code (201, or 201 for an apply). */
void kb__do_create(struct kb_ctx *c, struct kb_value *obj, int code);
/* What every write passes before it is stored (admit.c): the field check
 * by fieldValidation, the server's rewriting, validation.  obj may lose
 * unknown fields; old is the stored object of an update, or NULL.  False
 * after answering 400 or 422. */
bool kb__admit(struct kb_ctx *c, const char *name, struct kb_value *obj,
               const struct kb_value *old);
/* Adds a Warning header text to the reply. */
void kb__warn(struct kb_api_resp *resp, const char *text);
/* Replaces o with obj (owned), as PUT does; patches end here too. */
void kb__do_update(struct kb_ctx *c, struct kb_obj *o, struct kb_value *obj);
void kb__do_patch(struct kb_ctx *c, struct kb_obj *o);
void kb__do_delete(struct kb_ctx *c, struct kb_obj *o);
/* The grace period a delete of obj gets: the request's (query, then
 * options), else the pod's own; 0 for what no kubelet runs. */
double kb__delete_grace(struct kb_ctx *c, const struct kb_value *opts, const struct kb_value *obj);
void kb__do_delete_collection(struct kb_ctx *c);
void kb__do_binding(struct kb_ctx *c, struct kb_obj *o);
/* Binds pod o (c->name; NULL: 404) as the Binding b (owned) says
 * (binding.c). */
void kb__bind(struct kb_ctx *c, struct kb_obj *o, struct kb_value *b);
void kb__do_eviction(struct kb_ctx *c, struct kb_obj *o);
/* GET pods/NAME/log: what the simulated kubelet knows, as text. */
void kb__do_pod_log(struct kb_ctx *c, struct kb_obj *o);
/* The create-only types' handlers (subresources.c, reviews.c). */
void kb__create_bindings(struct kb_ctx *c, struct kb_value *body);
void kb__create_access_review(struct kb_ctx *c, struct kb_value *body);
void kb__create_rules_review(struct kb_ctx *c, struct kb_value *body);
void kb__create_self_review(struct kb_ctx *c, struct kb_value *body);

/* ---- field ownership and server-side apply (fieldset.c, ssa.c) ----------- */

/* Walks an object into its FieldsV1 set: builtin types key lists by the
 * strategic merge keys, custom ones by x-kubernetes-list-type in schema. */
struct kb_fieldwalk {
        const struct kb_value *defs;
        bool builtin;
};
#define KB_FIELDS_MAX_DEPTH 64
typedef void (*kb_fields_leaf_fn)(char *const *path, size_t n, void *arg);
/* The FieldsV1 set of obj (returned, caller frees). */
struct kb_value *kb__fields_of(const struct kb_fieldwalk *fw, const struct kb_value *schema,
                               const struct kb_value *obj);
/* into gets every leaf of add; from loses every leaf of what. */
void kb__fields_union(struct kb_value *into, const struct kb_value *add);
void kb__fields_remove(struct kb_value *from, const struct kb_value *what);
/* Calls fn with the path (FieldsV1 keys from the root) of every leaf. */
void kb__fields_leaves(const struct kb_value *set, kb_fields_leaf_fn fn, void *arg);
bool kb__fields_has(const struct kb_value *set, char *const *path, size_t n);
/* The value a path names in obj, or NULL; deleting it; ".spec.x[name="c"]". */
struct kb_value *kb__fields_value(struct kb_value *obj, char *const *path, size_t n);
bool kb__fields_delete(struct kb_value *obj, char *const *path, size_t n);
char *kb__fields_path(char *const *path, size_t n);
/* The list key strategic merge patch merges a built-in list field by. */
const char *kb__merge_key(const char *field);
/* Records in now's managedFields what a non-apply write changed from old
 * (NULL for a create). */
void kb__ssa_track_update(struct kb_ctx *c, const struct kb_value *old, struct kb_value *now);
/* Server-side apply of applied (owned) to o (NULL: create): the merged
 * object with its managedFields, or NULL after answering 409 or 422. */
struct kb_value *kb__ssa_apply(struct kb_ctx *c, struct kb_obj *o, struct kb_value *applied);

/* ---- protobuf bodies (protobuf.c) ----------------------------------------- */

/* Decodes an application/vnd.kubernetes.protobuf body ("k8s\0" and a
 * runtime.Unknown) into the JSON tree of the object.  Returns 0, -ENOTSUP
 * for a kind or field k8s.proto does not describe, or KB_EBADINPUT for a
 * body that does not decode; err says which. */
int kb__protobuf_decode(const char *body, size_t len, struct kb_value **out, char *err,
                        size_t errlen);

/* ---- views of another version (events.c) -------------------------------- */

/* An events.k8s.io/v1 Event from a core/v1 one (returned, caller frees). */
struct kb_value *kb__event_to_v1(const struct kb_value *core);
/* A core/v1 Event from an events.k8s.io/v1 one (v1 is consumed). */
struct kb_value *kb__event_from_v1(struct kb_value *v1);
/* The object as the view type shows it (a clone when there is no view). */
struct kb_value *kb__view_out(const struct kb_rtype *view, const struct kb_value *obj);
/* Rewrites a JSON reply made for the stored type into the view's version. */
void kb__view_reply(struct kb_ctx *c);

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
        bool end;              /* end the stream once out is drained */
        struct kb_rtype *view; /* show objects as this version, or NULL */
        bool initial_end;      /* sendInitialEvents: bookmark the end of them */
};
/* Appends one event for obj to w->out. */
void kb__watch_event(struct kb_watch *w, const char *type, const struct kb_value *obj);
/* Appends a BOOKMARK at the cursor. */
void kb__watch_bookmark(struct kb_watch *w);

/* ---- authentication (auth.c) ------------------------------------------ */

/* Whether a request for path may go ahead: the server has no token, or the
 * path is one anyone may ask for (/healthz, /readyz, /livez, /version), or
 * authorization carries the server's bearer token.  Any thread, no lock. */
bool kb__authorized(const struct kb_apiserver *srv, const char *path, const char *authorization);
/* Whether the Authorization header value is "Bearer TOKEN" with exactly
 * token; compares in time independent of where the texts differ. */
bool kb__bearer_ok(const char *token, const char *authorization);

/* ---- the HTTP daemon (http.c) ---------------------------------------------- */

struct MHD_Daemon;
struct sockaddr_in;
/* The daemon, with what every way of serving shares: the callbacks, the
 * logger, the unescaper and the limits.  sa NULL: no listening socket.
 * NULL when MHD would not start. */
struct MHD_Daemon *kb__mhd_start(struct kb_apiserver *srv, unsigned flags, int port,
                                 const struct sockaddr_in *sa);

#ifdef KB_TESTING
struct MHD_Daemon;
/* A daemon that serves srv as kb_apiserver_start's does (same callbacks and
 * options), listening on nothing and run by its caller: connections come
 * in through MHD_add_connection and move on MHD_run.  For the fuzz target
 * of the HTTP layer; the caller stops it (MHD_stop_daemon). */
struct MHD_Daemon *kb__apiserver_mhd_external(struct kb_apiserver *srv);
#endif

#endif /* KB_PKG_APISERVER_HTTP_H */

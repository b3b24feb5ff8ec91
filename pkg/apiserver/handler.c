/*
 * Requests: routing, the REST verbs on collections and items, subresources,
 * and the Status errors kubectl prints.  Transport-independent: http.c feeds
 * it from libmicrohttpd, and the unit tests and fuzz targets call
 * kb_apiserver_handle directly.
 *
 * Every handler runs with srv->mu held from routing to the reply, so a
 * request sees and makes one consistent change.
 */
#include "apiserver/apiserver-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CT_JSON "application/json"

struct ctx {
        struct kb_apiserver *srv;
        const struct kb_api_req *req;
        struct kb_api_resp *resp;
        struct kb_rtype *rt;
        const char *ns;   /* path namespace, or NULL */
        const char *name; /* item name, or NULL */
        const char *sub;  /* subresource, or NULL */
};

static const char *query(const struct kb_api_req *req, const char *key)
{
        for (size_t i = 0; i < req->nquery; i++)
                if (req->query[i].key && !strcmp(req->query[i].key, key))
                        return req->query[i].value ? req->query[i].value : "";
        return NULL;
}

static void reply(struct kb_api_resp *resp, int status, struct kb_value *v)
{
        char *text = kb_json_emit(v, false);
        kb_value_free(v);
        resp->status = status;
        resp->content_type = CT_JSON;
        kb_buf_reset(&resp->body);
        kb_buf_adds(&resp->body, text);
        free(text);
}

static struct kb_value *status_obj(int code, const char *reason, const char *msg)
{
        struct kb_value *s = kb_value_new(KB_VOBJECT);
        kb_value_set(s, "kind", kb_value_new_string("Status"));
        kb_value_set(s, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(s, "metadata", kb_value_new(KB_VOBJECT));
        kb_value_set(s, "status", kb_value_new_string(code < 300 ? "Success" : "Failure"));
        if (msg)
                kb_value_set(s, "message", kb_value_new_string(msg));
        if (reason)
                kb_value_set(s, "reason", kb_value_new_string(reason));
        return s;
}

static void fail(struct kb_api_resp *resp, int code, const char *reason, struct kb_value *details,
                 const char *fmt, ...) KB_PRINTF(5, 6);
static void fail(struct kb_api_resp *resp, int code, const char *reason, struct kb_value *details,
                 const char *fmt, ...)
{
        struct kb_buf b;
        kb_buf_init(&b);
        va_list ap;
        va_start(ap, fmt);
        kb_buf_vprintf(&b, fmt, ap);
        va_end(ap);
        struct kb_value *s = status_obj(code, reason, b.data);
        if (details)
                kb_value_set(s, "details", details);
        kb_value_set(s, "code", kb_value_new_int(code));
        reply(resp, code, s);
        kb_buf_release(&b);
}

static void not_found_path(struct kb_api_resp *resp)
{
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
}

/* "pods" or "podgroups.scheduling.volcano.sh", as messages name a resource. */
static char *qualified(const struct kb_rtype *rt)
{
        if (!rt->group[0])
                return kb_xstrdup(rt->resource);
        return kb_xasprintf("%s.%s", rt->resource, rt->group);
}

static struct kb_value *details(const struct kb_rtype *rt, const char *name, const char *kind)
{
        struct kb_value *d = kb_value_new(KB_VOBJECT);
        kb_value_set(d, "name", kb_value_new_string(name ? name : ""));
        if (rt->group[0])
                kb_value_set(d, "group", kb_value_new_string(rt->group));
        kb_value_set(d, "kind", kb_value_new_string(kind ? kind : rt->resource));
        return d;
}

static void not_found(struct ctx *c, const struct kb_rtype *rt, const char *name)
{
        char *q = qualified(rt);
        fail(c->resp, 404, "NotFound", details(rt, name, NULL), "%s \"%s\" not found", q, name);
        free(q);
}

static void conflict(struct ctx *c, const char *name)
{
        char *q = qualified(c->rt);
        fail(c->resp, 409, "Conflict", details(c->rt, name, NULL),
             "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
             "apply your changes to the latest version and try again",
             q, name);
        free(q);
}

static void invalid(struct ctx *c, const char *name, struct kb_causes *causes)
{
        struct kb_buf msg;
        kb_buf_init(&msg);
        struct kb_value *d = details(c->rt, name, c->rt->kind);
        struct kb_value *cl = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < causes->n; i++) {
                struct kb_value *cv = kb_value_new(KB_VOBJECT);
                kb_value_set(cv, "reason", kb_value_new_string(causes->v[i].reason));
                kb_value_set(cv, "message", kb_value_new_string(causes->v[i].message));
                kb_value_set(cv, "field", kb_value_new_string(causes->v[i].field));
                kb_value_append(cl, cv);
                kb_buf_printf(&msg, "%s%s: %s", i ? ", " : "", causes->v[i].field,
                              causes->v[i].message);
        }
        kb_value_set(d, "causes", cl);
        const char *kind = c->rt->kind;
        if (c->rt->group[0]) {
                char *gk = kb_xasprintf("%s.%s", kind, c->rt->group);
                if (causes->n > 1)
                        fail(c->resp, 422, "Invalid", d, "%s \"%s\" is invalid: [%s]", gk,
                             name ? name : "", msg.data);
                else
                        fail(c->resp, 422, "Invalid", d, "%s \"%s\" is invalid: %s", gk,
                             name ? name : "", msg.data);
                free(gk);
        } else if (causes->n > 1) {
                fail(c->resp, 422, "Invalid", d, "%s \"%s\" is invalid: [%s]", kind,
                     name ? name : "", msg.data);
        } else {
                fail(c->resp, 422, "Invalid", d, "%s \"%s\" is invalid: %s", kind, name ? name : "",
                     msg.data);
        }
        kb_buf_release(&msg);
}

static bool wants_table(const struct kb_api_req *req)
{
        return req->accept && strstr(req->accept, "as=Table");
}

static bool is_protobuf(const char *ct)
{
        return ct && kb_has_prefix(ct, "application/vnd.kubernetes.protobuf");
}

/* Parses the body as JSON (or YAML when the content type says so). */
static struct kb_value *parse_body(struct ctx *c)
{
        const struct kb_api_req *req = c->req;
        char err[256] = "";
        struct kb_value *v = NULL;
        if (is_protobuf(req->content_type)) {
                fail(c->resp, 415, "UnsupportedMediaType", NULL,
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json, application/yaml");
                return NULL;
        }
        if (req->body_len == 0) {
                fail(c->resp, 400, "BadRequest", NULL, "the request body is empty");
                return NULL;
        }
        bool yaml = req->content_type && strstr(req->content_type, "yaml");
        if (kb_json_parse(req->body, req->body_len, &v, err, sizeof(err)) == 0)
                return v;
        if (yaml) {
                struct kb_value **docs;
                size_t n;
                if (kb_yaml_parse(req->body, req->body_len, &docs, &n, err, sizeof(err)) == 0) {
                        if (n == 1) {
                                v = docs[0];
                                free(docs);
                                return v;
                        }
                        kb_value_free_docs(docs, n);
                        snprintf(err, sizeof(err), "expected one document");
                }
        }
        fail(c->resp, 400, "BadRequest", NULL, "the object provided is unrecognized: %s", err);
        return NULL;
}

/* Write faults: a fraction of binding, status and create writes fail. */
static bool fault_write(struct ctx *c, const char *what)
{
        struct kb_apiserver *srv = c->srv;
        if (srv->opts.fault_write_rate <= 0 || !kb__fault_roll(srv, srv->opts.fault_write_rate))
                return false;
        int code = srv->opts.fault_write_code == 429 ? 429 : 500;
        KB_WARN("fault: failing %s %s with %d", what, c->req->path, code);
        if (code == 429) {
                c->resp->retry_after =
                    srv->opts.fault_retry_after > 0 ? srv->opts.fault_retry_after : 1;
                fail(c->resp, 429, "TooManyRequests", NULL,
                     "the server has received too many requests and has asked us to try "
                     "again later (injected fault)");
        } else {
                fail(c->resp, 500, "InternalError", NULL,
                     "an error on the server (\"injected fault\") has prevented the request "
                     "from succeeding");
        }
        return true;
}

void kb__name_suffix(struct kb_apiserver *srv, char out[6])
{
        static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
        for (int i = 0; i < 5; i++)
                out[i] = alphabet[kb__rand(srv) % (sizeof(alphabet) - 1)];
        out[5] = 0;
}

static const char *qos_class(const struct kb_value *spec)
{
        const struct kb_value *cs = kb_value_get(spec, "containers");
        bool any = false, guaranteed = true;
        for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++) {
                const struct kb_value *req = kb_value_dig(cs->arr.v[i], "resources", "requests");
                const struct kb_value *lim = kb_value_dig(cs->arr.v[i], "resources", "limits");
                if ((kb_value_is(req, KB_VOBJECT) && req->obj.n) ||
                    (kb_value_is(lim, KB_VOBJECT) && lim->obj.n))
                        any = true;
                const char *keys[] = {"cpu", "memory"};
                for (int k = 0; k < 2; k++) {
                        const char *l = kb_value_text(kb_value_get(lim, keys[k]));
                        const char *r = kb_value_text(kb_value_get(req, keys[k]));
                        if (!l || (r && strcmp(l, r)))
                                guaranteed = false;
                }
        }
        if (!any)
                return "BestEffort";
        return guaranteed ? "Guaranteed" : "Burstable";
}

static void set_default(struct kb_value *obj, const char *key, struct kb_value *v)
{
        if (!kb_value_get(obj, key))
                kb_value_set(obj, key, v);
        else
                kb_value_free(v);
}

void kb__prepare_create(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *obj)
{
        kb__meta_init(srv, obj);
        if (rt->custom) {
                if (rt->has_status)
                        kb_value_del(obj, "status");
                return;
        }
        const char *uid = kb__meta_str(obj, "uid");
        if (!strcmp(rt->resource, "pods")) {
                struct kb_value *spec = kb_value_ensure_object(obj, "spec");
                set_default(spec, "schedulerName", kb_value_new_string("default-scheduler"));
                set_default(spec, "restartPolicy", kb_value_new_string("Always"));
                set_default(spec, "dnsPolicy", kb_value_new_string("ClusterFirst"));
                set_default(spec, "priority", kb_value_new_int(0));
                struct kb_value *st = kb_value_new(KB_VOBJECT);
                kb_value_set(st, "phase", kb_value_new_string("Pending"));
                kb_value_set(st, "qosClass", kb_value_new_string(qos_class(spec)));
                kb_value_set(obj, "status", st);
        } else if (!strcmp(rt->resource, "namespaces")) {
                struct kb_value *st = kb_value_new(KB_VOBJECT);
                kb_value_set(st, "phase", kb_value_new_string("Active"));
                kb_value_set(obj, "status", st);
                struct kb_value *labels =
                    kb_value_ensure_object(kb_value_ensure_object(obj, "metadata"), "labels");
                kb_value_set(labels, "kubernetes.io/metadata.name",
                             kb_value_new_string(kb__meta_str(obj, "name")));
        } else if (!strcmp(rt->resource, "jobs")) {
                struct kb_value *spec = kb_value_ensure_object(obj, "spec");
                bool none =
                    !kb_value_get(spec, "completions") && !kb_value_get(spec, "parallelism");
                if (none)
                        kb_value_set(spec, "completions", kb_value_new_int(1));
                set_default(spec, "parallelism", kb_value_new_int(1));
                set_default(spec, "backoffLimit", kb_value_new_int(6));
                set_default(spec, "completionMode", kb_value_new_string("NonIndexed"));
                set_default(spec, "suspend", kb_value_new_bool(false));
                if (!kb_value_get(spec, "selector")) {
                        struct kb_value *sel = kb_value_ensure_object(spec, "selector");
                        struct kb_value *ml = kb_value_ensure_object(sel, "matchLabels");
                        kb_value_set(ml, "batch.kubernetes.io/controller-uid",
                                     kb_value_new_string(uid));
                }
                struct kb_value *tmd =
                    kb_value_ensure_object(kb_value_ensure_object(spec, "template"), "metadata");
                struct kb_value *labels = kb_value_ensure_object(tmd, "labels");
                const char *name = kb__meta_str(obj, "name");
                kb_value_set(labels, "batch.kubernetes.io/controller-uid",
                             kb_value_new_string(uid));
                kb_value_set(labels, "batch.kubernetes.io/job-name", kb_value_new_string(name));
                kb_value_set(labels, "controller-uid", kb_value_new_string(uid));
                kb_value_set(labels, "job-name", kb_value_new_string(name));
                kb_value_del(obj, "status");
        } else if (!strcmp(rt->resource, "customresourcedefinitions")) {
                struct kb_value *st = kb_value_new(KB_VOBJECT);
                struct kb_value *conds = kb_value_new(KB_VARRAY);
                char ts[40];
                kb_format_time(kb__now(), ts, sizeof(ts));
                const char *types[][3] = {
                    {"NamesAccepted", "NoConflicts", "no conflicts found"},
                    {"Established", "InitialNamesAccepted", "the initial names have been accepted"},
                };
                for (size_t i = 0; i < 2; i++) {
                        struct kb_value *cd = kb_value_new(KB_VOBJECT);
                        kb_value_set(cd, "type", kb_value_new_string(types[i][0]));
                        kb_value_set(cd, "status", kb_value_new_string("True"));
                        kb_value_set(cd, "lastTransitionTime", kb_value_new_string(ts));
                        kb_value_set(cd, "reason", kb_value_new_string(types[i][1]));
                        kb_value_set(cd, "message", kb_value_new_string(types[i][2]));
                        kb_value_append(conds, cd);
                }
                kb_value_set(st, "conditions", conds);
                const struct kb_value *names = kb_value_dig(obj, "spec", "names");
                kb_value_set(st, "acceptedNames",
                             names ? kb_value_clone(names) : kb_value_new(KB_VOBJECT));
                struct kb_value *stored = kb_value_new(KB_VARRAY);
                const struct kb_value *vers = kb_value_dig(obj, "spec", "versions");
                for (size_t i = 0; kb_value_is(vers, KB_VARRAY) && i < vers->arr.n; i++)
                        if (kb_value_bool(kb_value_get(vers->arr.v[i], "storage"), false))
                                kb_value_append(
                                    stored, kb_value_clone(kb_value_get(vers->arr.v[i], "name")));
                kb_value_set(st, "storedVersions", stored);
                kb_value_set(obj, "status", st);
        }
}

static bool namespace_exists(struct kb_apiserver *srv, const char *ns)
{
        struct kb_rtype *nst = kb__type_find(srv, "", "v1", "namespaces");
        return nst && kb__obj_find(nst, NULL, ns);
}

/* Fills kind and apiVersion, or answers 400 when they name another type. */
static bool check_kind(struct ctx *c, struct kb_value *obj)
{
        if (!kb_value_is(obj, KB_VOBJECT)) {
                fail(c->resp, 400, "BadRequest", NULL, "the object provided is not a JSON object");
                return false;
        }
        char *av = kb__api_version(c->rt);
        const char *kind = kb_value_str(kb_value_get(obj, "kind"));
        const char *have = kb_value_str(kb_value_get(obj, "apiVersion"));
        bool ok = (!kind || !strcmp(kind, c->rt->kind)) && (!have || !strcmp(have, av));
        if (!ok) {
                fail(c->resp, 400, "BadRequest", NULL,
                     "the API version in the data (%s) does not match the expected API version "
                     "(%s) or the kind (%s) is not %s",
                     have ? have : "", av, kind ? kind : "", c->rt->kind);
                free(av);
                return false;
        }
        kb_value_set(obj, "kind", kb_value_new_string(c->rt->kind));
        kb_value_set(obj, "apiVersion", kb_value_new_string(av));
        free(av);
        const struct kb_value *md = kb_value_get(obj, "metadata");
        if (md && !kb_value_is(md, KB_VOBJECT)) {
                fail(c->resp, 400, "BadRequest", NULL, "metadata must be an object");
                return false;
        }
        return true;
}

static bool dry_run(const struct kb_api_req *req)
{
        return query(req, "dryRun") != NULL;
}

static void do_create(struct ctx *c, struct kb_value *obj, int code)
{
        struct kb_apiserver *srv = c->srv;
        if (!check_kind(c, obj))
                goto out;
        struct kb_value *md = kb_value_ensure_object(obj, "metadata");
        if (c->rt->namespaced) {
                const char *ns = kb_value_str(kb_value_get(md, "namespace"));
                if (ns && c->ns && strcmp(ns, c->ns)) {
                        fail(c->resp, 400, "BadRequest", NULL,
                             "the namespace of the provided object does not match the namespace "
                             "sent on the request");
                        goto out;
                }
                if (!c->ns) {
                        fail(c->resp, 405, "MethodNotAllowed", NULL,
                             "the server does not allow this method on the requested resource");
                        goto out;
                }
                kb_value_set(md, "namespace", kb_value_new_string(c->ns));
        } else {
                kb_value_del(md, "namespace");
        }
        const char *name = kb_value_str(kb_value_get(md, "name"));
        const char *gen = kb_value_str(kb_value_get(md, "generateName"));
        if ((!name || !name[0]) && gen && gen[0]) {
                char sfx[6];
                kb__name_suffix(srv, sfx);
                char *n = kb_xasprintf("%s%s", gen, sfx);
                kb_value_set(md, "name", kb_value_new_string(n));
                free(n);
        }
        name = kb_value_str(kb_value_get(md, "name"));
        if (c->rt->namespaced && !namespace_exists(srv, c->ns)) {
                struct kb_rtype *nst = kb__type_find(srv, "", "v1", "namespaces");
                not_found(c, nst, c->ns);
                goto out;
        }
        struct kb_causes causes = {0};
        kb__validate_object(c->rt, obj, &causes);
        if (causes.n) {
                invalid(c, name, &causes);
                kb__causes_release(&causes);
                goto out;
        }
        if (kb__obj_find(c->rt, c->ns, name)) {
                char *q = qualified(c->rt);
                fail(c->resp, 409, "AlreadyExists", details(c->rt, name, NULL),
                     "%s \"%s\" already exists", q, name);
                free(q);
                goto out;
        }
        if (fault_write(c, "create"))
                goto out;
        kb_value_del(md, "resourceVersion");
        kb__prepare_create(srv, c->rt, obj);
        if (dry_run(c->req)) {
                reply(c->resp, code, obj);
                return;
        }
        if (!c->rt->custom && !strcmp(c->rt->resource, "customresourcedefinitions"))
                kb__register_crd(srv, obj);
        struct kb_doc *d = kb__store_put(srv, c->rt, obj);
        reply(c->resp, code, kb_value_clone(d->v));
        return;
out:
        kb_value_free(obj);
}

static bool has_finalizers(const struct kb_value *obj)
{
        const struct kb_value *f = kb_value_dig(obj, "metadata", "finalizers");
        return kb_value_is(f, KB_VARRAY) && f->arr.n > 0;
}

/* Equal ignoring resourceVersion and managedFields. */
static bool same_object(const struct kb_value *a, const struct kb_value *b)
{
        struct kb_value *x = kb_value_clone(a), *y = kb_value_clone(b);
        struct kb_value *mx = kb_value_get(x, "metadata"), *my = kb_value_get(y, "metadata");
        kb_value_del(mx, "resourceVersion");
        kb_value_del(my, "resourceVersion");
        kb_value_del(mx, "managedFields");
        kb_value_del(my, "managedFields");
        bool eq = kb_value_equal(x, y);
        kb_value_free(x);
        kb_value_free(y);
        return eq;
}

static void copy_meta(struct kb_value *dst, const struct kb_value *src, const char *key)
{
        const struct kb_value *v = kb_value_dig(src, "metadata", key);
        struct kb_value *md = kb_value_ensure_object(dst, "metadata");
        if (v)
                kb_value_set(md, key, kb_value_clone(v));
        else
                kb_value_del(md, key);
}

/* Replaces o with obj (owned), as PUT does; patches end here too. */
static void do_update(struct ctx *c, struct kb_obj *o, struct kb_value *obj)
{
        struct kb_apiserver *srv = c->srv;
        const struct kb_value *old = o->doc->v;
        if (!check_kind(c, obj))
                goto out;
        const char *name = kb__meta_str(obj, "name");
        if (!name || strcmp(name, c->name)) {
                fail(c->resp, 400, "BadRequest", NULL,
                     "the name of the object (%s) does not match the name on the URL (%s)",
                     name ? name : "", c->name);
                goto out;
        }
        const char *rv = kb__meta_str(obj, "resourceVersion");
        if (rv && rv[0] && strcmp(rv, kb__meta_str(old, "resourceVersion"))) {
                conflict(c, c->name);
                goto out;
        }
        const char *uid = kb__meta_str(obj, "uid");
        if (uid && uid[0] && strcmp(uid, kb__meta_str(old, "uid"))) {
                conflict(c, c->name);
                goto out;
        }
        bool status_sub = kb_streq(c->sub, "status");
        if (status_sub) {
                struct kb_value *st = kb_value_take(obj, "status");
                kb_value_free(obj);
                obj = kb_value_clone(old);
                if (st)
                        kb_value_set(obj, "status", st);
                else
                        kb_value_del(obj, "status");
        } else if (c->rt->has_status) {
                const struct kb_value *st = kb_value_get(old, "status");
                if (st)
                        kb_value_set(obj, "status", kb_value_clone(st));
                else
                        kb_value_del(obj, "status");
        }
        static const char *const keep[] = {
            "uid",        "creationTimestamp", "namespace",
            "generation", "deletionTimestamp", "deletionGracePeriodSeconds"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(keep); i++)
                copy_meta(obj, old, keep[i]);
        copy_meta(obj, old, "resourceVersion");
        struct kb_causes causes = {0};
        kb__validate_object(c->rt, obj, &causes);
        if (causes.n) {
                invalid(c, c->name, &causes);
                kb__causes_release(&causes);
                goto out;
        }
        if (same_object(old, obj)) {
                kb_value_free(obj);
                reply(c->resp, 200, kb_value_clone(old));
                return;
        }
        if (!kb_value_equal(kb_value_get(old, "spec"), kb_value_get(obj, "spec"))) {
                int64_t g = 0;
                kb_value_int(kb_value_dig(old, "metadata", "generation"), &g);
                kb_value_set(kb_value_ensure_object(obj, "metadata"), "generation",
                             kb_value_new_int(g + 1));
        }
        if (dry_run(c->req)) {
                reply(c->resp, 200, obj);
                return;
        }
        if (!c->rt->custom && !strcmp(c->rt->resource, "customresourcedefinitions"))
                kb__register_crd(srv, obj);
        struct kb_doc *d = kb__store_put(srv, c->rt, obj);
        reply(c->resp, 200, kb_value_clone(d->v));
        /* The last finalizer gone from an object being deleted: it goes now
         * (a pod in its grace period waits for the simulation). */
        const char *dts = kb__meta_str(d->v, "deletionTimestamp");
        double dt;
        if (dts && !has_finalizers(d->v) && !kb_parse_time(dts, &dt) && dt <= kb__now())
                kb__store_delete(srv, c->rt, kb__obj_find(c->rt, c->ns, c->name), 0);
        return;
out:
        kb_value_free(obj);
}

static void do_patch(struct ctx *c, struct kb_obj *o)
{
        const char *ct = c->req->content_type ? c->req->content_type : "";
        bool apply = kb_has_prefix(ct, "application/apply-patch");
        bool merge = kb_has_prefix(ct, "application/merge-patch+json");
        bool json = kb_has_prefix(ct, "application/json-patch+json");
        bool strategic = kb_has_prefix(ct, "application/strategic-merge-patch+json");
        if (!apply && !merge && !json && !strategic) {
                fail(c->resp, 415, "UnsupportedMediaType", NULL,
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json-patch+json, application/merge-patch+json, "
                     "application/apply-patch+yaml%s",
                     c->rt->custom ? "" : ", application/strategic-merge-patch+json");
                return;
        }
        if (strategic && c->rt->custom) {
                fail(c->resp, 415, "UnsupportedMediaType", NULL,
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json-patch+json, application/merge-patch+json, "
                     "application/apply-patch+yaml");
                return;
        }
        struct kb_value *patch = parse_body(c);
        if (!patch)
                return;
        if (!o) {
                if (apply && !c->sub) {
                        do_create(c, patch, 201);
                        return;
                }
                not_found(c, c->rt, c->name);
                kb_value_free(patch);
                return;
        }
        struct kb_value *doc = kb_value_clone(o->doc->v);
        char err[256] = "";
        int rc = 0;
        if (json)
                rc = kb__json_patch(&doc, patch, err, sizeof(err));
        else if (merge || (apply && c->rt->custom))
                kb__merge_patch(&doc, patch);
        else
                rc = kb__strategic_patch(&doc, patch, err, sizeof(err));
        kb_value_free(patch);
        if (rc) {
                kb_value_free(doc);
                if (json)
                        fail(c->resp, 422, "Invalid", NULL, "%s", err);
                else
                        fail(c->resp, 400, "BadRequest", NULL, "%s", err);
                return;
        }
        do_update(c, o, doc);
}

static double delete_grace(struct ctx *c, const struct kb_value *opts, const struct kb_value *obj)
{
        if (c->rt->custom || strcmp(c->rt->resource, "pods"))
                return 0;
        if (!c->srv->opts.kubelet || !kb_value_dig(obj, "spec", "nodeName"))
                return 0;
        const char *phase = kb_value_str(kb_value_dig(obj, "status", "phase"));
        if (kb_streq(phase, "Succeeded") || kb_streq(phase, "Failed"))
                return 0;
        int64_t g = -1;
        const char *q = query(c->req, "gracePeriodSeconds");
        if (q)
                g = strtoll(q, NULL, 10);
        else if (kb_value_int(kb_value_get(opts, "gracePeriodSeconds"), &g))
                if (kb_value_int(kb_value_dig(obj, "spec", "terminationGracePeriodSeconds"), &g))
                        g = 0;
        return g > 0 ? (double)g : 0;
}

static bool protected_namespace(const char *name)
{
        return !strcmp(name, "default") || !strcmp(name, "kube-system") ||
               !strcmp(name, "kube-public") || !strcmp(name, "kube-node-lease");
}

/* Deletes the pods a deleted Job owned, as the garbage collector would. */
static void collect_dependents(struct kb_apiserver *srv, const char *uid, double grace)
{
        struct kb_rtype *pods = kb__type_find(srv, "", "v1", "pods");
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, pods->objs, o, tmp)
        {
                const struct kb_value *refs =
                    kb_value_dig(o->doc->v, "metadata", "ownerReferences");
                for (size_t i = 0; kb_value_is(refs, KB_VARRAY) && i < refs->arr.n; i++) {
                        if (kb_streq(kb_value_str(kb_value_get(refs->arr.v[i], "uid")), uid)) {
                                kb__store_delete(srv, pods, o, grace);
                                break;
                        }
                }
        }
}

static void do_delete(struct ctx *c, struct kb_obj *o)
{
        struct kb_value *opts = NULL;
        if (c->req->body_len) {
                if (is_protobuf(c->req->content_type)) {
                        parse_body(c);
                        return;
                }
                char err[128];
                if (kb_json_parse(c->req->body, c->req->body_len, &opts, err, sizeof(err))) {
                        fail(c->resp, 400, "BadRequest", NULL, "bad DeleteOptions: %s", err);
                        return;
                }
        }
        const struct kb_value *pre = kb_value_get(opts, "preconditions");
        const char *puid = kb_value_str(kb_value_get(pre, "uid"));
        const char *prv = kb_value_str(kb_value_get(pre, "resourceVersion"));
        if ((puid && strcmp(puid, kb__meta_str(o->doc->v, "uid"))) ||
            (prv && strcmp(prv, kb__meta_str(o->doc->v, "resourceVersion")))) {
                conflict(c, c->name);
                goto out;
        }
        if (!c->rt->custom && !strcmp(c->rt->resource, "namespaces") &&
            protected_namespace(c->name)) {
                fail(c->resp, 403, "Forbidden", details(c->rt, c->name, NULL),
                     "namespaces \"%s\" is forbidden: this namespace may not be deleted", c->name);
                goto out;
        }
        if (dry_run(c->req)) {
                reply(c->resp, 200, kb_value_clone(o->doc->v));
                goto out;
        }
        double grace = delete_grace(c, opts, o->doc->v);
        struct kb_value *last = kb_value_clone(o->doc->v);
        const char *policy = kb_value_str(kb_value_get(opts, "propagationPolicy"));
        const char *qp = query(c->req, "propagationPolicy");
        if (qp)
                policy = qp;
        bool orphan = kb_streq(policy, "Orphan");
        char *uid = kb_xstrdup(kb__meta_str(o->doc->v, "uid"));
        kb__store_delete(c->srv, c->rt, o, grace);
        if (!orphan && !c->rt->custom && !strcmp(c->rt->resource, "jobs") &&
            !kb__obj_find(c->rt, c->ns, c->name))
                collect_dependents(c->srv, uid, 0);
        free(uid);
        struct kb_obj *now = kb__obj_find(c->rt, c->ns, c->name);
        if (now) {
                kb_value_free(last);
                reply(c->resp, 200, kb_value_clone(now->doc->v));
        } else {
                reply(c->resp, 200, last);
        }
out:
        kb_value_free(opts);
}

/* ---- lists ------------------------------------------------------------------ */

struct listing {
        const struct kb_value **objs;
        size_t n, cap;
};

static int cmp_key(const void *a, const void *b)
{
        const struct kb_value *x = *(const struct kb_value *const *)a;
        const struct kb_value *y = *(const struct kb_value *const *)b;
        const char *nx = kb__meta_str(x, "namespace"), *ny = kb__meta_str(y, "namespace");
        int r = strcmp(nx ? nx : "", ny ? ny : "");
        return r ? r : strcmp(kb__meta_str(x, "name"), kb__meta_str(y, "name"));
}

static bool selectors(struct ctx *c, struct kb_selector **ls, struct kb_selector **fs)
{
        char err[256];
        *ls = *fs = NULL;
        if (kb__selector_parse(query(c->req, "labelSelector"), false, ls, err, sizeof(err)) ||
            kb__selector_parse(query(c->req, "fieldSelector"), true, fs, err, sizeof(err))) {
                kb__selector_free(*ls);
                *ls = NULL;
                fail(c->resp, 400, "BadRequest", NULL, "%s", err);
                return false;
        }
        return true;
}

static bool in_scope(const struct ctx *c, const struct kb_value *obj)
{
        return !c->ns || kb_streq(kb__meta_str(obj, "namespace"), c->ns);
}

static void collect(struct ctx *c, struct kb_selector *ls, struct kb_selector *fs,
                    struct listing *l)
{
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, c->rt->objs, o, tmp)
        {
                const struct kb_value *v = o->doc->v;
                if (in_scope(c, v) && kb__selector_match(ls, v) && kb__selector_match(fs, v))
                        KB_PUSH(l->objs, l->n, l->cap, v);
        }
        if (l->n > 1)
                qsort(l->objs, l->n, sizeof(*l->objs), cmp_key);
}

static char *hex_encode(const char *s)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                kb_buf_printf(&b, "%02x", *p);
        return kb_buf_detach(&b);
}

static char *hex_decode(const char *s)
{
        size_t n = strlen(s);
        if (n % 2)
                return NULL;
        char *out = kb_xmalloc(n / 2 + 1);
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                char two[3] = {s[2 * i], s[2 * i + 1], 0};
                char *end;
                v = (unsigned)strtoul(two, &end, 16);
                if (*end || !v) {
                        free(out);
                        return NULL;
                }
                out[i] = (char)v;
        }
        out[n / 2] = 0;
        return out;
}

static void do_list(struct ctx *c)
{
        struct kb_apiserver *srv = c->srv;
        struct kb_selector *ls, *fs;
        if (!selectors(c, &ls, &fs))
                return;
        struct listing l = {0};
        collect(c, ls, fs, &l);
        size_t start = 0, end = l.n;
        const char *cont = query(c->req, "continue");
        const char *lim = query(c->req, "limit");
        char rvbuf[32];
        snprintf(rvbuf, sizeof(rvbuf), "%" PRIu64, srv->rv);
        char *next = NULL;
        if (cont && cont[0]) {
                char *tok = hex_decode(cont);
                char *colon = tok ? strchr(tok, ':') : NULL;
                if (!colon) {
                        free(tok);
                        fail(c->resp, 400, "BadRequest", NULL, "continue key is not valid");
                        goto out;
                }
                *colon = 0;
                uint64_t trv = strtoull(tok, NULL, 10);
                if (trv < srv->compacted_rv) {
                        free(tok);
                        fail(c->resp, 410, "Expired", NULL,
                             "The provided continue parameter is too old to display a consistent "
                             "list result. You can start a new list without the continue "
                             "parameter.");
                        goto out;
                }
                while (start < l.n) {
                        const struct kb_value *v = l.objs[start];
                        const char *ns = kb__meta_str(v, "namespace");
                        char *key = ns ? kb_xasprintf("%s/%s", ns, kb__meta_str(v, "name"))
                                       : kb_xstrdup(kb__meta_str(v, "name"));
                        int r = strcmp(key, colon + 1);
                        free(key);
                        if (r > 0)
                                break;
                        start++;
                }
                free(tok);
        }
        long limit = lim ? strtol(lim, NULL, 10) : 0;
        if (limit > 0 && (size_t)limit < end - start) {
                end = start + (size_t)limit;
                const struct kb_value *v = l.objs[end - 1];
                const char *ns = kb__meta_str(v, "namespace");
                char *tok =
                    ns ? kb_xasprintf("%" PRIu64 ":%s/%s", srv->rv, ns, kb__meta_str(v, "name"))
                       : kb_xasprintf("%" PRIu64 ":%s", srv->rv, kb__meta_str(v, "name"));
                next = hex_encode(tok);
                free(tok);
        }
        struct kb_value *out = kb_value_new(KB_VOBJECT);
        if (wants_table(c->req)) {
                const char *inc = query(c->req, "includeObject");
                kb__table(srv, c->rt, l.n ? l.objs + start : NULL, end - start,
                          inc ? inc : "Metadata", true, rvbuf, out);
                struct kb_value *md = kb_value_get(out, "metadata");
                if (next)
                        kb_value_set(md, "continue", kb_value_new_string(next));
        } else {
                char *av = kb__api_version(c->rt);
                kb_value_set(out, "kind", kb_value_new_string(c->rt->list_kind));
                kb_value_set(out, "apiVersion", kb_value_new_string(av));
                free(av);
                struct kb_value *md = kb_value_ensure_object(out, "metadata");
                kb_value_set(md, "resourceVersion", kb_value_new_string(rvbuf));
                if (next) {
                        kb_value_set(md, "continue", kb_value_new_string(next));
                        kb_value_set(md, "remainingItemCount",
                                     kb_value_new_int((int64_t)(l.n - end)));
                }
                struct kb_value *items = kb_value_new(KB_VARRAY);
                for (size_t i = start; i < end; i++)
                        kb_value_append(items, kb_value_clone(l.objs[i]));
                kb_value_set(out, "items", items);
        }
        reply(c->resp, 200, out);
out:
        free(next);
        free(l.objs);
        kb__selector_free(ls);
        kb__selector_free(fs);
}

static void do_delete_collection(struct ctx *c)
{
        struct kb_selector *ls, *fs;
        if (!selectors(c, &ls, &fs))
                return;
        struct listing l = {0};
        collect(c, ls, fs, &l);
        struct kb_value *items = kb_value_new(KB_VARRAY);
        char **keys = kb_xcalloc(l.n + 1, sizeof(*keys));
        for (size_t i = 0; i < l.n; i++) {
                kb_value_append(items, kb_value_clone(l.objs[i]));
                keys[i] = kb_xstrdup(kb__meta_str(l.objs[i], "name"));
        }
        /* Deleting may free the listed documents: work from copies. */
        for (size_t i = 0; i < l.n; i++) {
                const char *ns = kb__meta_str(items->arr.v[i], "namespace");
                struct kb_obj *o = kb__obj_find(c->rt, ns, keys[i]);
                if (!o)
                        continue;
                if (!c->rt->custom && !strcmp(c->rt->resource, "namespaces") &&
                    protected_namespace(keys[i]))
                        continue;
                kb__store_delete(c->srv, c->rt, o, 0);
        }
        for (size_t i = 0; i < l.n; i++)
                free(keys[i]);
        free(keys);
        struct kb_value *out = kb_value_new(KB_VOBJECT);
        char *av = kb__api_version(c->rt);
        kb_value_set(out, "kind", kb_value_new_string(c->rt->list_kind));
        kb_value_set(out, "apiVersion", kb_value_new_string(av));
        free(av);
        kb_value_set(out, "metadata", kb_value_new(KB_VOBJECT));
        kb_value_set(out, "items", items);
        reply(c->resp, 200, out);
        free(l.objs);
        kb__selector_free(ls);
        kb__selector_free(fs);
}

/* ---- watch ------------------------------------------------------------------ */

void kb__watch_event(struct kb_watch *w, const char *type, const struct kb_value *obj);

static void do_watch(struct ctx *c)
{
        struct kb_apiserver *srv = c->srv;
        struct kb_selector *ls, *fs;
        if (!selectors(c, &ls, &fs))
                return;
        struct kb_watch *w = kb_xcalloc(1, sizeof(*w));
        w->srv = srv;
        w->rt = c->rt;
        w->ns = c->ns ? kb_xstrdup(c->ns) : NULL;
        w->lsel = ls;
        w->fsel = fs;
        w->table = wants_table(c->req);
        const char *inc = query(c->req, "includeObject");
        w->include = kb_xstrdup(inc ? inc : "Metadata");
        kb_buf_init(&w->out);
        const char *b = query(c->req, "allowWatchBookmarks");
        w->bookmarks = b && (!strcmp(b, "true") || !strcmp(b, "1"));
        double now = kb_now_mono();
        double interval = srv->opts.bookmark_interval > 0 ? srv->opts.bookmark_interval : 30;
        w->next_bookmark = now + interval;
        const char *ts = query(c->req, "timeoutSeconds");
        if (ts && strtod(ts, NULL) > 0)
                w->deadline = now + strtod(ts, NULL);
        if (srv->opts.fault_watch_close > 0)
                w->fault_close = now + srv->opts.fault_watch_close;
        const char *rv = query(c->req, "resourceVersion");
        c->resp->status = 200;
        c->resp->content_type = CT_JSON;
        c->resp->watch = w;
        if (!rv || !rv[0] || !strcmp(rv, "0")) {
                struct listing l = {0};
                collect(c, ls, fs, &l);
                for (size_t i = 0; i < l.n; i++)
                        kb__watch_event(w, "ADDED", l.objs[i]);
                free(l.objs);
                w->cursor = srv->rv;
                return;
        }
        char *end;
        errno = 0;
        uint64_t n = strtoull(rv, &end, 10);
        bool bad = *end || errno;
        bool injected =
            !bad && srv->opts.fault_watch_410 > 0 && kb__fault_roll(srv, srv->opts.fault_watch_410);
        if (injected)
                KB_WARN("fault: answering watch %s from resourceVersion %s with 410", c->req->path,
                        rv);
        if (bad || injected || n < srv->compacted_rv) {
                struct kb_value *st = status_obj(410, "Expired", NULL);
                char *msg = kb_xasprintf("too old resource version: %s (%" PRIu64 ")", rv,
                                         srv->compacted_rv + 1);
                kb_value_set(st, "message", kb_value_new_string(msg));
                free(msg);
                kb_value_set(st, "code", kb_value_new_int(410));
                char *text = kb_json_emit(st, false);
                kb_buf_printf(&w->out, "{\"type\":\"ERROR\",\"object\":%s}\n", text);
                free(text);
                kb_value_free(st);
                w->end = true;
                return;
        }
        w->cursor = n;
}

/* ---- subresources ------------------------------------------------------------ */

static void do_binding(struct ctx *c, struct kb_obj *o)
{
        struct kb_value *b = parse_body(c);
        if (!b)
                return;
        const char *target = kb_value_str(kb_value_dig(b, "target", "name"));
        if (!o) {
                not_found(c, c->rt, c->name);
                goto out;
        }
        if (!target || !target[0]) {
                struct kb_causes causes = {0};
                kb__cause_add(&causes, "FieldValueRequired", "target.name", "Required value");
                invalid(c, c->name, &causes);
                kb__causes_release(&causes);
                goto out;
        }
        const char *uid = kb_value_str(kb_value_dig(b, "metadata", "uid"));
        if (uid && uid[0] && strcmp(uid, kb__meta_str(o->doc->v, "uid"))) {
                conflict(c, c->name);
                goto out;
        }
        const char *node = kb_value_str(kb_value_dig(o->doc->v, "spec", "nodeName"));
        if (node && node[0]) {
                fail(c->resp, 409, "Conflict", details(c->rt, c->name, NULL),
                     "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                     "assigned to node \"%s\"",
                     c->name, c->name, node);
                goto out;
        }
        if (kb_value_dig(o->doc->v, "metadata", "deletionTimestamp")) {
                fail(c->resp, 409, "Conflict", details(c->rt, c->name, NULL),
                     "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                     "deleted, cannot be assigned to a host",
                     c->name, c->name);
                goto out;
        }
        if (fault_write(c, "binding"))
                goto out;
        struct kb_value *pod = kb_value_clone(o->doc->v);
        kb_value_set(kb_value_ensure_object(pod, "spec"), "nodeName", kb_value_new_string(target));
        struct kb_value *st = kb_value_ensure_object(pod, "status");
        struct kb_value *conds = kb_value_get(st, "conditions");
        if (!kb_value_is(conds, KB_VARRAY)) {
                conds = kb_value_new(KB_VARRAY);
                kb_value_set(st, "conditions", conds);
        }
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        struct kb_value *cd = kb_value_new(KB_VOBJECT);
        kb_value_set(cd, "type", kb_value_new_string("PodScheduled"));
        kb_value_set(cd, "status", kb_value_new_string("True"));
        kb_value_set(cd, "lastProbeTime", kb_value_new(KB_VNULL));
        kb_value_set(cd, "lastTransitionTime", kb_value_new_string(ts));
        for (size_t i = 0; i < conds->arr.n; i++) {
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), "PodScheduled")) {
                        kb_value_free(conds->arr.v[i]);
                        conds->arr.v[i] = cd;
                        cd = NULL;
                }
        }
        if (cd)
                kb_value_append(conds, cd);
        kb__store_put(c->srv, c->rt, pod);
        struct kb_value *s = status_obj(201, NULL, NULL);
        kb_value_set(s, "code", kb_value_new_int(201));
        reply(c->resp, 201, s);
out:
        kb_value_free(b);
}

static void do_eviction(struct ctx *c, struct kb_obj *o)
{
        struct kb_value *b = parse_body(c);
        if (!b)
                return;
        if (!o) {
                not_found(c, c->rt, c->name);
                goto out;
        }
        /* The Eviction's deleteOptions as a DELETE's: its uid precondition,
         * and the grace period (the pod's own unless they say otherwise),
         * which the simulated kubelet honours before the pod goes. */
        const struct kb_value *opts = kb_value_get(b, "deleteOptions");
        const char *puid = kb_value_str(kb_value_dig(opts, "preconditions", "uid"));
        if (puid && strcmp(puid, kb__meta_str(o->doc->v, "uid"))) {
                conflict(c, c->name);
                goto out;
        }
        if (!kb_value_dig(o->doc->v, "metadata", "deletionTimestamp"))
                kb__store_delete(c->srv, c->rt, o, delete_grace(c, opts, o->doc->v));
        struct kb_value *s = status_obj(201, NULL, NULL);
        kb_value_set(s, "code", kb_value_new_int(201));
        reply(c->resp, 201, s);
out:
        kb_value_free(b);
}

/* ---- routing ------------------------------------------------------------------- */

static void do_item_get(struct ctx *c, struct kb_obj *o)
{
        if (!o) {
                not_found(c, c->rt, c->name);
                return;
        }
        if (wants_table(c->req)) {
                struct kb_value *out = kb_value_new(KB_VOBJECT);
                const struct kb_value *objs[1] = {o->doc->v};
                const char *inc = query(c->req, "includeObject");
                kb__table(c->srv, c->rt, objs, 1, inc ? inc : "Metadata", true,
                          kb__meta_str(o->doc->v, "resourceVersion"), out);
                reply(c->resp, 200, out);
                return;
        }
        reply(c->resp, 200, kb_value_clone(o->doc->v));
}

static void method_not_allowed(struct ctx *c)
{
        fail(c->resp, 405, "MethodNotAllowed", NULL,
             "the server does not allow this method on the requested resource");
}

static void resource(struct ctx *c)
{
        const char *m = c->req->method;
        if (c->rt->namespaced && c->name && !c->ns) {
                not_found_path(c->resp);
                return;
        }
        if (!c->name) {
                if (!strcmp(m, "GET")) {
                        const char *wq = query(c->req, "watch");
                        if (wq && (!strcmp(wq, "true") || !strcmp(wq, "1")))
                                do_watch(c);
                        else
                                do_list(c);
                } else if (!strcmp(m, "POST")) {
                        struct kb_value *obj = parse_body(c);
                        if (obj)
                                do_create(c, obj, 201);
                } else if (!strcmp(m, "DELETE")) {
                        do_delete_collection(c);
                } else {
                        method_not_allowed(c);
                }
                return;
        }
        struct kb_obj *o = kb__obj_find(c->rt, c->ns, c->name);
        if (c->sub) {
                bool pods = !c->rt->custom && !strcmp(c->rt->resource, "pods");
                if (pods && !strcmp(c->sub, "binding") && !strcmp(m, "POST")) {
                        do_binding(c, o);
                        return;
                }
                if (pods && !strcmp(c->sub, "eviction") && !strcmp(m, "POST")) {
                        do_eviction(c, o);
                        return;
                }
                if (strcmp(c->sub, "status") || !c->rt->has_status) {
                        not_found_path(c->resp);
                        return;
                }
        }
        if (!strcmp(m, "GET")) {
                do_item_get(c, o);
        } else if (!strcmp(m, "PUT")) {
                if (!o) {
                        not_found(c, c->rt, c->name);
                        return;
                }
                if (c->sub && fault_write(c, "status write"))
                        return;
                struct kb_value *obj = parse_body(c);
                if (obj)
                        do_update(c, o, obj);
        } else if (!strcmp(m, "PATCH")) {
                if (c->sub && fault_write(c, "status write"))
                        return;
                do_patch(c, o);
        } else if (!strcmp(m, "DELETE") && !c->sub) {
                if (!o) {
                        not_found(c, c->rt, c->name);
                        return;
                }
                do_delete(c, o);
        } else {
                method_not_allowed(c);
        }
}

static void version(struct kb_api_resp *resp)
{
        struct kb_value *v = kb_value_new(KB_VOBJECT);
        kb_value_set(v, "major", kb_value_new_string("1"));
        kb_value_set(v, "minor", kb_value_new_string("32"));
        kb_value_set(v, "gitVersion", kb_value_new_string("v1.32.0"));
        kb_value_set(v, "gitCommit", kb_value_new_string("kbatch-apiserver"));
        kb_value_set(v, "gitTreeState", kb_value_new_string("clean"));
        kb_value_set(v, "buildDate", kb_value_new_string("2025-01-01T00:00:00Z"));
        kb_value_set(v, "goVersion", kb_value_new_string("go1.23.0"));
        kb_value_set(v, "compiler", kb_value_new_string("gc"));
        kb_value_set(v, "platform", kb_value_new_string("linux/amd64"));
        reply(resp, 200, v);
}

/* Aggregated discovery when the client offers it, echoing the version asked. */
static void discovery_root(struct ctx *c, bool core)
{
        const char *acc = c->req->accept ? c->req->accept : "";
        const char *ver = NULL;
        if (strstr(acc, "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"))
                ver = "v2";
        else if (strstr(acc, "g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"))
                ver = "v2beta1";
        struct kb_value *out = kb_value_new(KB_VOBJECT);
        if (!ver) {
                if (core)
                        kb__discovery_versions(c->srv, out);
                else
                        kb__discovery_groups(c->srv, out);
                reply(c->resp, 200, out);
                return;
        }
        kb__discovery_aggregated(c->srv, core, ver, out);
        reply(c->resp, 200, out);
        c->resp->content_type = !strcmp(ver, "v2")
                                    ? "application/json;g=apidiscovery.k8s.io;v=v2;"
                                      "as=APIGroupDiscoveryList"
                                    : "application/json;g=apidiscovery.k8s.io;v=v2beta1;"
                                      "as=APIGroupDiscoveryList";
}

static bool is_ns_sub(const char *s)
{
        return !strcmp(s, "status") || !strcmp(s, "finalize");
}

static void route(struct ctx *c, char **seg, size_t n)
{
        struct kb_apiserver *srv = c->srv;
        bool get = !strcmp(c->req->method, "GET");
        if (n == 1 && !strcmp(seg[0], "version") && get) {
                version(c->resp);
                return;
        }
        if (n == 1 &&
            (!strcmp(seg[0], "healthz") || !strcmp(seg[0], "readyz") || !strcmp(seg[0], "livez"))) {
                c->resp->status = 200;
                c->resp->content_type = "text/plain";
                kb_buf_adds(&c->resp->body, "ok");
                return;
        }
        if (n >= 2 && !strcmp(seg[0], "openapi") && !strcmp(seg[1], "v3") && get) {
                struct kb_value *out = kb_value_new(KB_VOBJECT);
                int rc = 0;
                if (n == 2)
                        kb__openapi_index(srv, out);
                else if (n == 4 && !strcmp(seg[2], "api"))
                        rc = kb__openapi_gv(srv, "", seg[3], out);
                else if (n == 5 && !strcmp(seg[2], "apis"))
                        rc = kb__openapi_gv(srv, seg[3], seg[4], out);
                else
                        rc = KB_ENOTFOUND;
                if (rc) {
                        kb_value_free(out);
                        not_found_path(c->resp);
                } else
                        reply(c->resp, 200, out);
                return;
        }
        const char *group, *ver;
        size_t i;
        if (n >= 1 && !strcmp(seg[0], "api")) {
                if (n == 1 && get) {
                        discovery_root(c, true);
                        return;
                }
                if (n < 2 || strcmp(seg[1], "v1")) {
                        not_found_path(c->resp);
                        return;
                }
                group = "";
                ver = "v1";
                i = 2;
        } else if (n >= 1 && !strcmp(seg[0], "apis")) {
                if (n == 1 && get) {
                        discovery_root(c, false);
                        return;
                }
                if (n == 2 && get) {
                        struct kb_value *out = kb_value_new(KB_VOBJECT);
                        if (kb__discovery_group(srv, seg[1], out)) {
                                kb_value_free(out);
                                not_found_path(c->resp);
                        } else
                                reply(c->resp, 200, out);
                        return;
                }
                if (n < 3) {
                        not_found_path(c->resp);
                        return;
                }
                group = seg[1];
                ver = seg[2];
                i = 3;
        } else {
                not_found_path(c->resp);
                return;
        }
        size_t rest = n - i;
        char **r = seg + i;
        if (rest == 0) {
                struct kb_value *out = kb_value_new(KB_VOBJECT);
                if (!get || kb__discovery_resources(srv, group, ver, out)) {
                        kb_value_free(out);
                        not_found_path(c->resp);
                } else
                        reply(c->resp, 200, out);
                return;
        }
        const char *res;
        if (!strcmp(r[0], "namespaces") && rest >= 3 && !(rest == 3 && is_ns_sub(r[2]))) {
                c->ns = r[1];
                res = r[2];
                c->name = rest >= 4 ? r[3] : NULL;
                c->sub = rest >= 5 ? r[4] : NULL;
                if (rest > 5) {
                        not_found_path(c->resp);
                        return;
                }
        } else {
                res = r[0];
                c->name = rest >= 2 ? r[1] : NULL;
                c->sub = rest >= 3 ? r[2] : NULL;
                if (rest > 3) {
                        not_found_path(c->resp);
                        return;
                }
        }
        c->rt = kb__type_find(srv, group, ver, res);
        if (!c->rt || (c->ns && !c->rt->namespaced) || (c->name && !c->name[0])) {
                not_found_path(c->resp);
                return;
        }
        resource(c);
}

void kb_api_resp_release(struct kb_api_resp *resp)
{
        kb_buf_release(&resp->body);
        free(resp->warning);
        if (resp->watch)
                kb_apiserver_watch_free(resp->watch);
        resp->watch = NULL;
        resp->warning = NULL;
}

void kb_apiserver_handle(struct kb_apiserver *srv, const struct kb_api_req *req,
                         struct kb_api_resp *resp)
{
        memset(resp, 0, sizeof(*resp));
        kb_buf_init(&resp->body);
        resp->status = 200;
        resp->content_type = CT_JSON;
        if (!kb__authorized(srv, req->path, req->authorization)) {
                fail(resp, 401, "Unauthorized", NULL, "Unauthorized");
                KB_V(3, "%s %s -> 401 (no or wrong bearer token)", req->method, req->path);
                return;
        }
        if (srv->opts.fault_latency_ms > 0) {
                KB_V(2, "fault: delaying %s %s by %d ms", req->method, req->path,
                     srv->opts.fault_latency_ms);
                struct timespec ts = {srv->opts.fault_latency_ms / 1000,
                                      (long)(srv->opts.fault_latency_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
        }
        /* Split the path; empty segments (double or trailing slashes) drop. */
        char *path = kb_xstrdup(req->path ? req->path : "/");
        char *seg[16];
        size_t n = 0;
        bool too_deep = false;
        for (char *save = NULL, *t = strtok_r(path, "/", &save); t;
             t = strtok_r(NULL, "/", &save)) {
                if (n == KB_ARRAY_SIZE(seg)) {
                        too_deep = true;
                        break;
                }
                seg[n++] = t;
        }
        struct ctx c = {.srv = srv, .req = req, .resp = resp};
        pthread_mutex_lock(&srv->mu);
        if (too_deep)
                not_found_path(resp);
        else if (n == 0) {
                struct kb_value *v = kb_value_new(KB_VOBJECT);
                struct kb_value *p = kb_value_new(KB_VARRAY);
                const char *paths[] = {"/api",        "/api/v1",  "/apis",
                                       "/openapi/v3", "/version", "/healthz"};
                for (size_t i = 0; i < KB_ARRAY_SIZE(paths); i++)
                        kb_value_append(p, kb_value_new_string(paths[i]));
                kb_value_set(v, "paths", p);
                reply(resp, 200, v);
        } else
                route(&c, seg, n);
        pthread_mutex_unlock(&srv->mu);
        KB_V(3, "%s %s -> %d", req->method, req->path, resp->status);
        free(path);
}

/*
 * Writes: create, update (PUT), patch, delete and delete-collection.  Every
 * write validates the whole new object and stores it as a new document;
 * one that changes nothing keeps the resourceVersion.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * etcd refuses a request over 1.5 MiB (its --max-request-bytes default) and
 * its client library one over 2 MiB; kube-apiserver hands either back as a
 * 500 with etcd's own words, which is what a client sees (tried on the
 * test/k8s bed: a pod of 1.6 MB, and of 2.5 MB).  Before that, a write
 * other than an apply that is too large only with its managedFields is
 * stored without them (kubernetes/kubernetes#87508): the bed stores a pod
 * of 80,000 labels so.  A dry run never reaches etcd and passes.  kbatch
 * measures the object's JSON where etcd measures its protobuf (a little
 * smaller), so the edge moves by a few percent.
 */
#define ETCD_REQUEST_MAX (1536 * 1024)
#define ETCD_GRPC_MAX    (2 * 1024 * 1024)

static size_t json_size(const struct kb_value *obj)
{
        char *text = kb_json_emit(obj, false);
        size_t n = strlen(text);
        free(text);
        return n;
}

static bool too_large(struct kb_ctx *c, struct kb_value *obj)
{
        size_t n = json_size(obj);
        if (n <= ETCD_REQUEST_MAX)
                return false;
        struct kb_value *md = kb_value_get(obj, "metadata");
        if (!c->apply && kb_value_get(md, "managedFields")) {
                kb_value_del(md, "managedFields");
                KB_V(2, "%s %s: object of %zu bytes stored without its managedFields",
                     c->req->method, c->req->path, n);
                if ((n = json_size(obj)) <= ETCD_REQUEST_MAX)
                        return false;
        }
        KB_V(2, "%s %s: object of %zu bytes refused (etcd's limit)", c->req->method, c->req->path,
             n);
        if (n > ETCD_GRPC_MAX)
                kb__fail(c->resp, 500, NULL, NULL,
                         "rpc error: code = ResourceExhausted desc = trying to send message "
                         "larger than max (%zu vs. %d)",
                         n, ETCD_GRPC_MAX);
        else
                kb__fail(c->resp, 500, NULL, NULL, "etcdserver: request is too large");
        return true;
}

void kb__do_create(struct kb_ctx *c, struct kb_value *obj, int code)
{
        struct kb_apiserver *srv = c->srv;
        if (!kb__check_kind(c, obj))
                goto out;
        struct kb_value *md = kb_value_ensure_object(obj, "metadata");
        if (c->rt->namespaced) {
                const char *ns = kb_value_str(kb_value_get(md, "namespace"));
                if (ns && c->ns && strcmp(ns, c->ns)) {
                        kb__fail(
                            c->resp, 400, "BadRequest", NULL,
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
                        goto out;
                }
                if (!c->ns) {
                        kb__fail(c->resp, 405, "MethodNotAllowed", NULL,
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
        if (c->rt->namespaced && !kb__namespace_exists(srv, c->ns)) {
                struct kb_rtype *nst = kb__type_find(srv, "", "v1", "namespaces");
                kb__not_found(c, nst, c->ns);
                goto out;
        }
        if (!kb__admit(c, name, obj, NULL))
                goto out;
        if (kb__obj_find(c->rt, c->ns, name)) {
                char *q = kb__qualified(c->rt);
                kb__fail(c->resp, 409, "AlreadyExists", kb__details(c->rt, name, NULL),
                         "%s \"%s\" already exists", q, name);
                free(q);
                goto out;
        }
        if (kb__fault_write(c, "create"))
                goto out;
        kb_value_del(md, "resourceVersion");
        struct kb_value *mf = c->apply ? kb_value_take(md, "managedFields") : NULL;
        kb__prepare_create(srv, c->rt, obj);
        if (mf)
                kb_value_set(kb_value_ensure_object(obj, "metadata"), "managedFields", mf);
        else
                kb__ssa_track_update(c, NULL, obj);
        if (kb__dry_run(c->req)) {
                kb__reply(c->resp, code, obj);
                return;
        }
        if (too_large(c, obj))
                goto out;
        if (c->rt->k && c->rt->k->on_write)
                c->rt->k->on_write(srv, obj);
        struct kb_doc *d = kb__store_put(srv, c->rt, obj);
        kb__reply(c->resp, code, kb_value_clone(d->v));
        if (c->rt->k && c->rt->k->on_create)
                c->rt->k->on_create(srv, d->v);
        return;
out:
        kb_value_free(obj);
}

static bool has_finalizers(const struct kb_value *obj)
{
        const struct kb_value *f = kb_value_dig(obj, "metadata", "finalizers");
        return kb_value_is(f, KB_VARRAY) && f->arr.n > 0;
}

/* Equal ignoring resourceVersion, and managedFields unless asked: an apply
 * that changes only who owns what is still a change. */
static bool same_object(const struct kb_value *a, const struct kb_value *b, bool managed)
{
        struct kb_value *x = kb_value_clone(a), *y = kb_value_clone(b);
        struct kb_value *mx = kb_value_get(x, "metadata"), *my = kb_value_get(y, "metadata");
        kb_value_del(mx, "resourceVersion");
        kb_value_del(my, "resourceVersion");
        if (!managed) {
                kb_value_del(mx, "managedFields");
                kb_value_del(my, "managedFields");
        }
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
void kb__do_update(struct kb_ctx *c, struct kb_obj *o, struct kb_value *obj)
{
        struct kb_apiserver *srv = c->srv;
        const struct kb_value *old = o->doc->v;
        if (!kb__check_kind(c, obj))
                goto out;
        const char *name = kb__meta_str(obj, "name");
        if (!name || strcmp(name, c->name)) {
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "the name of the object (%s) does not match the name on the URL (%s)",
                         name ? name : "", c->name);
                goto out;
        }
        const char *rv = kb__meta_str(obj, "resourceVersion");
        if (rv && rv[0] && strcmp(rv, kb__meta_str(old, "resourceVersion"))) {
                kb__conflict(c, c->name);
                goto out;
        }
        const char *uid = kb__meta_str(obj, "uid");
        if (uid && uid[0] && strcmp(uid, kb__meta_str(old, "uid"))) {
                kb__conflict(c, c->name);
                goto out;
        }
        bool status_sub = kb_streq(c->sub, "status");
        if (status_sub) {
                struct kb_value *st = kb_value_take(obj, "status");
                /* A server-side apply to status has just recorded its
                 * manager in managedFields: that stays with the status. */
                struct kb_value *mf =
                    c->apply ? kb_value_take(kb_value_get(obj, "metadata"), "managedFields") : NULL;
                kb_value_free(obj);
                obj = kb_value_clone(old);
                if (st)
                        kb_value_set(obj, "status", st);
                else
                        kb_value_del(obj, "status");
                if (mf)
                        kb_value_set(kb_value_ensure_object(obj, "metadata"), "managedFields", mf);
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
        if (!kb__admit(c, c->name, obj, old))
                goto out;
        if (same_object(old, obj, c->apply)) {
                kb_value_free(obj);
                kb__reply(c->resp, 200, kb_value_clone(old));
                return;
        }
        if (!kb_value_equal(kb_value_get(old, "spec"), kb_value_get(obj, "spec"))) {
                int64_t g = 0;
                kb_value_int(kb_value_dig(old, "metadata", "generation"), &g);
                kb_value_set(kb_value_ensure_object(obj, "metadata"), "generation",
                             kb_value_new_int(g + 1));
        }
        if (!c->apply)
                kb__ssa_track_update(c, old, obj);
        if (kb__dry_run(c->req)) {
                kb__reply(c->resp, 200, obj);
                return;
        }
        if (too_large(c, obj))
                goto out;
        if (c->rt->k && c->rt->k->on_write)
                c->rt->k->on_write(srv, obj);
        struct kb_doc *d = kb__store_put(srv, c->rt, obj);
        kb__reply(c->resp, 200, kb_value_clone(d->v));
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

void kb__do_patch(struct kb_ctx *c, struct kb_obj *o)
{
        const char *ct = c->req->content_type ? c->req->content_type : "";
        bool apply = kb_has_prefix(ct, "application/apply-patch");
        bool merge = kb_has_prefix(ct, "application/merge-patch+json");
        bool json = kb_has_prefix(ct, "application/json-patch+json");
        bool strategic = kb_has_prefix(ct, "application/strategic-merge-patch+json");
        if (!apply && !merge && !json && !strategic) {
                kb__fail(c->resp, 415, "UnsupportedMediaType", NULL,
                         "the body of the request was in an unknown format - accepted media types "
                         "include: application/json-patch+json, application/merge-patch+json, "
                         "application/apply-patch+yaml%s",
                         c->rt->custom ? "" : ", application/strategic-merge-patch+json");
                return;
        }
        if (strategic && c->rt->custom) {
                kb__fail(c->resp, 415, "UnsupportedMediaType", NULL,
                         "the body of the request was in an unknown format - accepted media types "
                         "include: application/json-patch+json, application/merge-patch+json, "
                         "application/apply-patch+yaml");
                return;
        }
        struct kb_value *patch = kb__parse_body(c);
        if (!patch)
                return;
        if (!o) {
                if (!apply || c->sub) {
                        kb__not_found(c, c->rt, c->name);
                        kb_value_free(patch);
                        return;
                }
        }
        /* Repeated keys in a merge patch are warned of, as upstream does
         * under Warn (under Strict upstream refuses the patch; kbatch only
         * warns, see docs/apiserver.md). */
        const char *mode = kb__query(c->req, "fieldValidation");
        if ((merge || strategic) && c->body && (!mode || !mode[0] || !strcmp(mode, "Warn")))
                for (size_t i = 0; i < c->body->dups.n; i++)
                        kb__warn(c->resp, c->body->dups.v[i]);
        if (apply) {
                struct kb_value *merged =
                    kb__ssa_apply(c, o, c->view ? kb__event_from_v1(patch) : patch);
                if (!merged)
                        return;
                c->apply = true;
                if (o)
                        kb__do_update(c, o, merged);
                else
                        kb__do_create(c, merged, 201);
                return;
        }
        /* A patch applies to the object as the path's version shows it. */
        struct kb_value *doc = kb__view_out(c->view, o->doc->v);
        char err[256] = "";
        int rc = 0;
        if (json)
                rc = kb__json_patch(&doc, patch, err, sizeof(err));
        else if (merge)
                kb__merge_patch(&doc, patch);
        else
                rc = kb__strategic_patch(&doc, patch, err, sizeof(err));
        kb_value_free(patch);
        if (rc) {
                kb_value_free(doc);
                if (json)
                        kb__fail(c->resp, 422, "Invalid", NULL, "%s", err);
                else
                        kb__fail(c->resp, 400, "BadRequest", NULL, "%s", err);
                return;
        }
        if (c->view)
                doc = kb__event_from_v1(doc);
        kb__do_update(c, o, doc);
}

double kb__delete_grace(struct kb_ctx *c, const struct kb_value *opts, const struct kb_value *obj)
{
        if (!c->rt->k || !c->rt->k->grace)
                return 0;
        int64_t g;
        const char *q = kb__query(c->req, "gracePeriodSeconds");
        if (q) {
                g = strtoll(q, NULL, 10);
                return c->rt->k->grace(c->srv, obj, &g);
        }
        if (!kb_value_int(kb_value_get(opts, "gracePeriodSeconds"), &g))
                return c->rt->k->grace(c->srv, obj, &g);
        return c->rt->k->grace(c->srv, obj, NULL);
}

void kb__do_delete(struct kb_ctx *c, struct kb_obj *o)
{
        struct kb_value *opts = NULL;
        if (c->req->body_len) {
                char err[128];
                if (kb__is_protobuf(c->req->content_type)) {
                        if (!(opts = kb__parse_body(c)))
                                return;
                } else if (kb_json_parse(c->req->body, c->req->body_len, &opts, err, sizeof(err))) {
                        kb__fail(c->resp, 400, "BadRequest", NULL, "bad DeleteOptions: %s", err);
                        return;
                }
        }
        const struct kb_value *pre = kb_value_get(opts, "preconditions");
        const char *puid = kb_value_str(kb_value_get(pre, "uid"));
        const char *prv = kb_value_str(kb_value_get(pre, "resourceVersion"));
        if ((puid && strcmp(puid, kb__meta_str(o->doc->v, "uid"))) ||
            (prv && strcmp(prv, kb__meta_str(o->doc->v, "resourceVersion")))) {
                kb__conflict(c, c->name);
                goto out;
        }
        if (c->rt->k && c->rt->k->protected_name && c->rt->k->protected_name(c->name)) {
                kb__fail(c->resp, 403, "Forbidden", kb__details(c->rt, c->name, NULL),
                         "namespaces \"%s\" is forbidden: this namespace may not be deleted",
                         c->name);
                goto out;
        }
        if (kb__dry_run(c->req)) {
                kb__reply(c->resp, 200, kb_value_clone(o->doc->v));
                goto out;
        }
        double grace = kb__delete_grace(c, opts, o->doc->v);
        struct kb_value *last = kb_value_clone(o->doc->v);
        const char *policy = kb_value_str(kb_value_get(opts, "propagationPolicy"));
        const char *qp = kb__query(c->req, "propagationPolicy");
        if (qp)
                policy = qp;
        /* The store collects what the object owned when it goes
         * (store.c), unless asked to orphan it. */
        c->srv->orphan = kb_streq(policy, "Orphan");
        kb__store_delete(c->srv, c->rt, o, grace);
        c->srv->orphan = false;
        struct kb_obj *now = kb__obj_find(c->rt, c->ns, c->name);
        if (now) {
                kb_value_free(last);
                kb__reply(c->resp, 200, kb_value_clone(now->doc->v));
        } else {
                kb__reply(c->resp, 200, last);
        }
out:
        kb_value_free(opts);
}

/* ---- lists ------------------------------------------------------------------ */

void kb__do_delete_collection(struct kb_ctx *c)
{
        struct kb_selector *ls, *fs;
        if (!kb__selectors(c, &ls, &fs))
                return;
        struct kb_listing l = {0};
        kb__collect(c, ls, fs, &l);
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
                if (c->rt->k && c->rt->k->protected_name && c->rt->k->protected_name(keys[i]))
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
        kb__reply(c->resp, 200, out);
        free(l.objs);
        kb__selector_free(ls);
        kb__selector_free(fs);
}

/* ---- watch ------------------------------------------------------------------ */

/*
 * Field ownership (metadata.managedFields) and server-side apply.
 *
 * Every write through the API records who set which fields, as the real
 * server does: an entry per manager and operation, holding a FieldsV1 set
 * (fieldset.c).  A create, update or patch makes the fields it changed the
 * writer's (operation Update; fieldManager, else the client's User-Agent
 * up to its "/"), and takes them from everyone else.  An apply (PATCH
 * application/apply-patch+yaml) declares the fields the applier wants:
 *   - a field another manager owns with a different value is a conflict:
 *     409 "Apply failed with 1 conflict: conflict with "a" using v1:
 *     .spec.x", unless force=true, which takes the field over;
 *   - a field set to the value it has is shared with its other owners;
 *   - a field the applier applied before and has now left out is removed
 *     from the object, unless someone else owns it too.
 * An object no manager has touched yet (made by the simulation) is first
 * given to "before-first-apply", as upstream does.
 *   a applies {"spec":{"x":1,"y":2}}     a owns .spec.x .spec.y
 *   b applies {"spec":{"x":3}}           409: conflict with "a": .spec.x
 *   b applies {"spec":{"x":1}}           a and b share .spec.x
 *   a applies {"spec":{"x":1}}           .spec.y is removed; x stays shared
 */
#include "apiserver/apiserver-http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const meta_skip[] = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
};

/* The part of obj a write to c's (sub)resource manages. */
static struct kb_value *managed_part(const struct kb_ctx *c, const struct kb_value *obj)
{
        struct kb_value *v = kb_value_clone(obj);
        bool status = kb_streq(c->sub, "status");
        kb_value_del(v, "apiVersion");
        kb_value_del(v, "kind");
        struct kb_value *md = kb_value_get(v, "metadata");
        for (size_t i = 0; i < KB_ARRAY_SIZE(meta_skip); i++)
                kb_value_del(md, meta_skip[i]);
        if (md && md->obj.n == 0)
                kb_value_del(v, "metadata");
        if (status) {
                struct kb_value *st = kb_value_take(v, "status");
                kb_value_free(v);
                v = kb_value_new(KB_VOBJECT);
                if (st)
                        kb_value_set(v, "status", st);
        } else if (c->rt->has_status) {
                kb_value_del(v, "status");
        }
        return v;
}

static struct kb_value *fields_of(const struct kb_ctx *c, const struct kb_value *obj)
{
        struct kb_fieldwalk fw = {.defs = c->srv->defs, .builtin = !c->rt->custom};
        struct kb_value *part = managed_part(c, obj);
        struct kb_value *f = kb__fields_of(&fw, c->rt->custom ? c->rt->schema : c->rt->def, part);
        kb_value_free(part);
        return f;
}

/* The manager of a write that is not an apply. */
static char *update_manager(const struct kb_api_req *req)
{
        const char *m = kb__query(req, "fieldManager");
        if (m && m[0])
                return kb_xstrdup(m);
        const char *ua = req->user_agent;
        if (ua && ua[0])
                return kb_xstrndup(ua, strcspn(ua, "/"));
        return kb_xstrdup("unknown");
}

static struct kb_value *entry_new(const struct kb_ctx *c, const char *manager, const char *op)
{
        struct kb_value *e = kb_value_new(KB_VOBJECT);
        char *av = kb__api_version(c->view ? c->view : c->rt);
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        kb_value_set(e, "manager", kb_value_new_string(manager));
        kb_value_set(e, "operation", kb_value_new_string(op));
        kb_value_set(e, "apiVersion", kb_value_new_string(av));
        kb_value_set(e, "time", kb_value_new_string(ts));
        kb_value_set(e, "fieldsType", kb_value_new_string("FieldsV1"));
        kb_value_set(e, "fieldsV1", kb_value_new(KB_VOBJECT));
        if (c->sub)
                kb_value_set(e, "subresource", kb_value_new_string(c->sub));
        free(av);
        return e;
}

/* The entry of manager/op/subresource in entries, made when missing. */
static struct kb_value *entry_of(const struct kb_ctx *c, struct kb_value *entries,
                                 const char *manager, const char *op)
{
        for (size_t i = 0; i < entries->arr.n; i++) {
                const struct kb_value *e = entries->arr.v[i];
                if (kb_streq(kb_value_str(kb_value_get(e, "manager")), manager) &&
                    kb_streq(kb_value_str(kb_value_get(e, "operation")), op) &&
                    kb_streq(kb_value_str(kb_value_get(e, "subresource")), c->sub))
                        return entries->arr.v[i];
        }
        struct kb_value *e = entry_new(c, manager, op);
        kb_value_append(entries, e);
        return e;
}

static void drop_empty(struct kb_value *entries)
{
        for (size_t i = 0; i < entries->arr.n;) {
                const struct kb_value *f = kb_value_get(entries->arr.v[i], "fieldsV1");
                if (kb_value_is(f, KB_VOBJECT) && f->obj.n) {
                        i++;
                        continue;
                }
                kb_value_free(entries->arr.v[i]);
                memmove(&entries->arr.v[i], &entries->arr.v[i + 1],
                        (entries->arr.n - i - 1) * sizeof(*entries->arr.v));
                entries->arr.n--;
        }
}

static struct kb_value *entries_of(const struct kb_value *obj)
{
        const struct kb_value *mf = kb_value_dig(obj, "metadata", "managedFields");
        return kb_value_is(mf, KB_VARRAY) ? kb_value_clone(mf) : kb_value_new(KB_VARRAY);
}

static void touch(struct kb_value *e)
{
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        kb_value_set(e, "time", kb_value_new_string(ts));
}

/* ---- updates ---------------------------------------------------------------- */

struct diff {
        struct kb_value *old, *now;
        struct kb_value *changed; /* leaves set to a new value */
};

static void add_leaf(struct kb_value *set, char *const *path, size_t n)
{
        struct kb_value *v = set;
        for (size_t i = 0; i < n; i++)
                v = kb_value_ensure_object(v, path[i]);
}

static void changed_leaf(char *const *path, size_t n, void *arg)
{
        struct diff *d = arg;
        const struct kb_value *a = kb__fields_value(d->now, path, n);
        const struct kb_value *b = kb__fields_value(d->old, path, n);
        bool same = a && b && (!strcmp(path[n - 1], ".") || kb_value_equal(a, b));
        if (!same)
                add_leaf(d->changed, path, n);
}

void kb__ssa_track_update(struct kb_ctx *c, const struct kb_value *old, struct kb_value *now)
{
        struct kb_value *entries =
            kb_value_is(kb_value_dig(now, "metadata", "managedFields"), KB_VARRAY)
                ? entries_of(now)
                : entries_of(old);
        struct kb_value *nowset = fields_of(c, now);
        struct kb_value *oldset = old ? fields_of(c, old) : kb_value_new(KB_VOBJECT);
        struct kb_value *oldpart = old ? managed_part(c, old) : kb_value_new(KB_VOBJECT);
        struct kb_value *nowpart = managed_part(c, now);
        struct diff d = {oldpart, nowpart, kb_value_new(KB_VOBJECT)};
        kb__fields_leaves(nowset, changed_leaf, &d);
        /* What the write removed, nobody owns any more. */
        kb__fields_remove(oldset, nowset);
        char *manager = update_manager(c->req);
        for (size_t i = 0; i < entries->arr.n; i++) {
                struct kb_value *f = kb_value_get(entries->arr.v[i], "fieldsV1");
                kb__fields_remove(f, d.changed);
                kb__fields_remove(f, oldset);
        }
        if (d.changed->obj.n) {
                struct kb_value *e = entry_of(c, entries, manager, "Update");
                kb__fields_union(kb_value_ensure_object(e, "fieldsV1"), d.changed);
                touch(e);
        }
        drop_empty(entries);
        struct kb_value *md = kb_value_ensure_object(now, "metadata");
        if (entries->arr.n)
                kb_value_set(md, "managedFields", entries);
        else {
                kb_value_del(md, "managedFields");
                kb_value_free(entries);
        }
        free(manager);
        kb_value_free(d.changed);
        kb_value_free(oldpart);
        kb_value_free(nowpart);
        kb_value_free(nowset);
        kb_value_free(oldset);
}

/* ---- apply ------------------------------------------------------------------ */

struct conflict {
        char *manager; /* as messages print it */
        char *path;
};

struct applying {
        const struct kb_ctx *c;
        struct kb_value *entries;
        struct kb_value *mine; /* the applier's entry */
        struct kb_value *applied, *live;
        struct kb_value *taken; /* leaves taken from others (force) */
        struct conflict *v;
        size_t n, cap;
};

/* "a", or "a" using v1 for an Update, as upstream prints a manager. */
static char *print_manager(const struct kb_value *e)
{
        const char *m = kb_value_str(kb_value_get(e, "manager"));
        const char *sub = kb_value_str(kb_value_get(e, "subresource"));
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_printf(&b, "\"%s\"", m ? m : "");
        if (sub)
                kb_buf_printf(&b, " with subresource \"%s\"", sub);
        if (kb_streq(kb_value_str(kb_value_get(e, "operation")), "Update"))
                kb_buf_printf(&b, " using %s", kb_value_str(kb_value_get(e, "apiVersion")));
        return kb_buf_detach(&b);
}

static void check_leaf(char *const *path, size_t n, void *arg)
{
        struct applying *a = arg;
        const struct kb_value *want = kb__fields_value(a->applied, path, n);
        const struct kb_value *have = kb__fields_value(a->live, path, n);
        if (have && want && (!strcmp(path[n - 1], ".") || kb_value_equal(want, have)))
                return; /* the same value: shared, no conflict */
        for (size_t i = 0; i < a->entries->arr.n; i++) {
                const struct kb_value *e = a->entries->arr.v[i];
                if (e == a->mine || !kb__fields_has(kb_value_get(e, "fieldsV1"), path, n))
                        continue;
                if (a->n == a->cap)
                        kb_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v));
                a->v[a->n].manager = print_manager(e);
                a->v[a->n].path = kb__fields_path(path, n);
                a->n++;
                add_leaf(a->taken, path, n);
        }
}

static int by_manager(const void *x, const void *y)
{
        return strcmp(((const struct conflict *)x)->manager, ((const struct conflict *)y)->manager);
}

static void conflict_reply(struct kb_ctx *c, struct applying *a)
{
        struct kb_value *d = kb__details(c->view ? c->view : c->rt, c->name, NULL);
        struct kb_value *causes = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < a->n; i++) {
                struct kb_value *cv = kb_value_new(KB_VOBJECT);
                char *msg = kb_xasprintf("conflict with %s", a->v[i].manager);
                kb_value_set(cv, "reason", kb_value_new_string("FieldManagerConflict"));
                kb_value_set(cv, "message", kb_value_new_string(msg));
                kb_value_set(cv, "field", kb_value_new_string(a->v[i].path));
                free(msg);
                kb_value_append(causes, cv);
        }
        kb_value_set(d, "causes", causes);
        struct kb_buf m;
        kb_buf_init(&m);
        if (a->n == 1) {
                kb_buf_printf(&m, "Apply failed with 1 conflict: conflict with %s: %s",
                              a->v[0].manager, a->v[0].path);
        } else {
                qsort(a->v, a->n, sizeof(*a->v), by_manager);
                kb_buf_printf(&m, "Apply failed with %zu conflicts: ", a->n);
                for (size_t i = 0; i < a->n; i++) {
                        if (!i || strcmp(a->v[i].manager, a->v[i - 1].manager))
                                kb_buf_printf(&m, "%sconflicts with %s:", i ? "\n" : "",
                                              a->v[i].manager);
                        kb_buf_printf(&m, "\n- %s", a->v[i].path);
                }
        }
        kb__fail(c->resp, 409, "Conflict", d, "%s", m.data);
        kb_buf_release(&m);
}

struct removal {
        struct applying *a;
        struct kb_value *obj;
};

static void remove_leaf(char *const *path, size_t n, void *arg)
{
        struct removal *r = arg;
        for (size_t i = 0; i < r->a->entries->arr.n; i++) {
                const struct kb_value *e = r->a->entries->arr.v[i];
                if (e != r->a->mine && kb__fields_has(kb_value_get(e, "fieldsV1"), path, n))
                        return; /* someone else still wants it */
        }
        kb__fields_delete(r->obj, path, n);
}

struct kb_value *kb__ssa_apply(struct kb_ctx *c, struct kb_obj *o, struct kb_value *applied)
{
        const char *manager = kb__query(c->req, "fieldManager");
        if (!manager || !manager[0]) {
                struct kb_causes causes = {0};
                kb__cause_add(&causes, "FieldValueRequired", "fieldManager",
                              "Required value: is required for apply patch");
                kb__invalid_kind(c->resp, "meta.k8s.io", "PatchOptions", "", &causes);
                kb__causes_release(&causes);
                kb_value_free(applied);
                return NULL;
        }
        if (!kb_value_is(applied, KB_VOBJECT)) {
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "the object provided is not a JSON object");
                kb_value_free(applied);
                return NULL;
        }
        struct kb_value *live = o ? o->doc->v : NULL;
        struct applying a = {
            .c = c, .applied = managed_part(c, applied), .taken = kb_value_new(KB_VOBJECT)};
        a.live = live ? managed_part(c, live) : kb_value_new(KB_VOBJECT);
        a.entries = live ? entries_of(live) : kb_value_new(KB_VARRAY);
        if (live && !a.entries->arr.n) {
                /* Fields nobody has claimed belong to what was there first. */
                struct kb_value *e = entry_new(c, "before-first-apply", "Update");
                kb_value_set(e, "fieldsV1", fields_of(c, live));
                kb_value_append(a.entries, e);
        }
        a.mine = entry_of(c, a.entries, manager, "Apply");
        struct kb_value *newset = fields_of(c, applied);
        kb__fields_leaves(newset, check_leaf, &a);
        struct kb_value *merged = NULL;
        if (a.n && !kb__query_bool(c->req, "force")) {
                conflict_reply(c, &a);
                goto out;
        }
        for (size_t i = 0; i < a.entries->arr.n; i++)
                if (a.entries->arr.v[i] != a.mine)
                        kb__fields_remove(kb_value_get(a.entries->arr.v[i], "fieldsV1"), a.taken);
        /* The object: the applied configuration merged into what is there,
         * less what the applier stopped applying and nobody else owns. */
        struct kb_value *removed = kb_value_clone(kb_value_get(a.mine, "fieldsV1"));
        kb__fields_remove(removed, newset);
        merged = live ? kb_value_clone(live) : kb_value_new(KB_VOBJECT);
        struct removal r = {&a, merged};
        kb__fields_leaves(removed, remove_leaf, &r);
        kb_value_free(removed);
        char err[256];
        if (c->rt->custom || !live) {
                kb__merge_patch(&merged, applied);
        } else if (kb__strategic_patch(&merged, applied, err, sizeof(err))) {
                kb__fail(c->resp, 400, "BadRequest", NULL, "%s", err);
                kb_value_free(merged);
                merged = NULL;
                goto out;
        }
        if (!kb_value_equal(kb_value_get(a.mine, "fieldsV1"), newset))
                touch(a.mine);
        kb_value_set(a.mine, "fieldsV1", newset);
        newset = NULL;
        drop_empty(a.entries);
        kb_value_set(kb_value_ensure_object(merged, "metadata"), "managedFields", a.entries);
        a.entries = NULL;
out:
        for (size_t i = 0; i < a.n; i++) {
                free(a.v[i].manager);
                free(a.v[i].path);
        }
        free(a.v);
        kb_value_free(newset);
        kb_value_free(a.entries);
        kb_value_free(a.applied);
        kb_value_free(a.live);
        kb_value_free(a.taken);
        kb_value_free(applied);
        return merged;
}

/*
 * Requests: routing from a path to a type and a verb.  Transport-independent:
 * server.c feeds it from libmicrohttpd, and the unit tests and fuzz targets
 * call kb_apiserver_handle directly.  The verbs live in read.c, write.c and
 * subresources.c; what they share (errors, bodies) in request.c.
 *
 * Every handler runs with srv->mu held from routing to the reply, so a
 * request sees and makes one consistent change.  What needs no state is
 * done before: the body is decoded (JSON, YAML or protobuf, which for a
 * large object is most of its cost) without the lock, so a request holds
 * the lock only for its own object's admission, storing and reply.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void method_not_allowed(struct kb_ctx *c)
{
        kb__fail(c->resp, 405, "MethodNotAllowed", NULL,
                 "the server does not allow this method on the requested resource");
}

/* A create-only type (bindings, access reviews): POST on the collection. */
static void create_only(struct kb_ctx *c)
{
        if (c->name || strcmp(c->req->method, "POST")) {
                method_not_allowed(c);
                return;
        }
        struct kb_value *body = kb__parse_body(c);
        if (!body)
                return;
        if (!kb__check_kind(c, body)) {
                kb_value_free(body);
                return;
        }
        c->rt->create(c, body);
}

/* The body of a POST or PUT, in the stored type's version. */
static struct kb_value *body_in(struct kb_ctx *c)
{
        struct kb_value *obj = kb__parse_body(c);
        if (obj && c->body)
                c->judged = c->body;
        if (!obj || !c->view)
                return obj;
        struct kb_rtype *stored = c->rt;
        c->rt = c->view;
        bool ok = kb__check_kind(c, obj);
        c->rt = stored;
        if (!ok) {
                kb_value_free(obj);
                return NULL;
        }
        return kb__event_from_v1(obj);
}

static void collection(struct kb_ctx *c)
{
        const char *m = c->req->method;
        if (!strcmp(m, "GET")) {
                if (kb__query_bool(c->req, "watch"))
                        kb__do_watch(c);
                else
                        kb__do_list(c);
        } else if (!strcmp(m, "POST")) {
                if (!kb__check_options(c, "CreateOptions"))
                        return;
                struct kb_value *obj = body_in(c);
                if (obj)
                        kb__do_create(c, obj, 201);
        } else if (!strcmp(m, "DELETE")) {
                if (kb__check_options(c, "DeleteOptions"))
                        kb__do_delete_collection(c);
        } else {
                method_not_allowed(c);
        }
}

/* Subresources other than status; false when there is none of that name. */
static bool pod_subresource(struct kb_ctx *c, struct kb_obj *o)
{
        const char *m = c->req->method;
        if (!c->rt->k || !c->rt->k->pod_subresources)
                return false;
        if (!strcmp(c->sub, "binding") || !strcmp(c->sub, "eviction")) {
                if (strcmp(m, "POST"))
                        method_not_allowed(c);
                else if (kb__check_options(c, "CreateOptions")) {
                        if (!strcmp(c->sub, "binding"))
                                kb__do_binding(c, o);
                        else
                                kb__do_eviction(c, o);
                }
                return true;
        }
        if (!strcmp(c->sub, "log")) {
                if (strcmp(m, "GET"))
                        method_not_allowed(c);
                else
                        kb__do_pod_log(c, o);
                return true;
        }
        return false;
}

static void item(struct kb_ctx *c)
{
        const char *m = c->req->method;
        struct kb_obj *o = kb__obj_find(c->rt, c->ns, c->name);
        if (c->sub && pod_subresource(c, o))
                return;
        if (c->sub && (strcmp(c->sub, "status") || !c->rt->has_status)) {
                kb__not_found_path(c->resp);
                return;
        }
        if (!strcmp(m, "GET")) {
                kb__do_item_get(c, o);
        } else if (!strcmp(m, "PUT")) {
                if (!kb__check_options(c, "UpdateOptions"))
                        return;
                if (!o) {
                        kb__not_found(c, c->rt, c->name);
                        return;
                }
                if (c->sub && kb__fault_write(c, "status write"))
                        return;
                struct kb_value *obj = body_in(c);
                if (obj)
                        kb__do_update(c, o, obj);
        } else if (!strcmp(m, "PATCH")) {
                if (!kb__check_options(c, "PatchOptions"))
                        return;
                if (c->sub && kb__fault_write(c, "status write"))
                        return;
                kb__do_patch(c, o);
        } else if (!strcmp(m, "DELETE") && !c->sub) {
                if (!kb__check_options(c, "DeleteOptions"))
                        return;
                if (!o) {
                        kb__not_found(c, c->rt, c->name);
                        return;
                }
                kb__do_delete(c, o);
        } else {
                method_not_allowed(c);
        }
}

static void resource(struct kb_ctx *c)
{
        if (c->rt->namespaced && c->name && !c->ns) {
                kb__not_found_path(c->resp);
                return;
        }
        if (c->rt->create) {
                create_only(c);
                return;
        }
        if (c->rt->view_of) {
                c->view = c->rt;
                c->rt = c->rt->view_of;
        }
        if (!c->name)
                collection(c);
        else
                item(c);
        if (c->view)
                kb__view_reply(c);
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
        kb__reply(resp, 200, v);
}

/* Aggregated discovery when the client offers it, echoing the version asked. */
static void discovery_root(struct kb_ctx *c, bool core)
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
                kb__reply(c->resp, 200, out);
                return;
        }
        kb__discovery_aggregated(c->srv, core, ver, out);
        kb__reply(c->resp, 200, out);
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

static void route(struct kb_ctx *c, char **seg, size_t n)
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
        if (n == 1 && !strcmp(seg[0], "metrics") && get) {
                c->resp->status = 200;
                c->resp->content_type = "text/plain; version=0.0.4";
                kb__reqcount_render(srv, &c->resp->body);
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
                        kb__not_found_path(c->resp);
                } else
                        kb__reply(c->resp, 200, out);
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
                        kb__not_found_path(c->resp);
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
                                kb__not_found_path(c->resp);
                        } else
                                kb__reply(c->resp, 200, out);
                        return;
                }
                if (n < 3) {
                        kb__not_found_path(c->resp);
                        return;
                }
                group = seg[1];
                ver = seg[2];
                i = 3;
        } else {
                kb__not_found_path(c->resp);
                return;
        }
        size_t rest = n - i;
        char **r = seg + i;
        if (rest == 0) {
                struct kb_value *out = kb_value_new(KB_VOBJECT);
                if (!get || kb__discovery_resources(srv, group, ver, out)) {
                        kb_value_free(out);
                        kb__not_found_path(c->resp);
                } else
                        kb__reply(c->resp, 200, out);
                return;
        }
        const char *res;
        if (!strcmp(r[0], "namespaces") && rest >= 3 && !(rest == 3 && is_ns_sub(r[2]))) {
                c->ns = r[1];
                res = r[2];
                c->name = rest >= 4 ? r[3] : NULL;
                c->sub = rest >= 5 ? r[4] : NULL;
                if (rest > 5) {
                        kb__not_found_path(c->resp);
                        return;
                }
        } else {
                res = r[0];
                c->name = rest >= 2 ? r[1] : NULL;
                c->sub = rest >= 3 ? r[2] : NULL;
                if (rest > 3) {
                        kb__not_found_path(c->resp);
                        return;
                }
        }
        c->rt = kb__type_find(srv, group, ver, res);
        if (!c->rt || (c->ns && !c->rt->namespaced) || (c->name && !c->name[0])) {
                kb__not_found_path(c->resp);
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
                kb__fail(resp, 401, "Unauthorized", NULL, "Unauthorized");
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
        struct kb_ctx c = {.srv = srv, .req = req, .resp = resp};
        /* The API answers JSON, and YAML to a client that prefers it (JSON
         * is YAML); a client that takes neither gets 406, as upstream says
         * it. */
        bool api = n > 0 && (!strcmp(seg[0], "api") || !strcmp(seg[0], "apis"));
        bool yaml = false;
        if (api && !kb__acceptable(req->accept, &yaml)) {
                kb__fail(resp, 406, "NotAcceptable", NULL,
                         "only the following media types are accepted: application/json, "
                         "application/yaml");
                KB_V(3, "%s %s -> 406 (Accept: %s)", req->method, req->path, req->accept);
                free(path);
                return;
        }
        /* An empty segment ("pods/", "pods//binding") is refused where
         * kube-apiserver would clean the path and act on the collection:
         * a DELETE of a name that came out empty must not take every pod
         * of the namespace (docs/apiserver.md, Limitations). */
        const char *rp = req->path ? req->path : "/";
        if (api && (strstr(rp, "//") || rp[strlen(rp) - 1] == '/')) {
                kb__fail(resp, 400, "BadRequest", NULL,
                         "the request path %s has an empty segment: a name cannot be empty", rp);
                KB_V(3, "%s %s -> 400 (empty segment)", req->method, req->path);
                free(path);
                return;
        }
        struct kb_body body = {0};
        if (api && !too_deep && req->body_len) {
                kb__body_decode(req, &body);
                c.body = &body;
        }
        pthread_mutex_lock(&srv->mu);
        if (too_deep)
                kb__not_found_path(resp);
        else if (n == 0) {
                struct kb_value *v = kb_value_new(KB_VOBJECT);
                struct kb_value *p = kb_value_new(KB_VARRAY);
                const char *paths[] = {"/api",     "/api/v1",  "/apis",   "/openapi/v3",
                                       "/version", "/healthz", "/metrics"};
                for (size_t i = 0; i < KB_ARRAY_SIZE(paths); i++)
                        kb_value_append(p, kb_value_new_string(paths[i]));
                kb_value_set(v, "paths", p);
                kb__reply(resp, 200, v);
        } else {
                route(&c, seg, n);
                kb__reqcount_add(&c);
        }
        pthread_mutex_unlock(&srv->mu);
        kb__body_release(&body);
        if (yaml && !resp->watch && !strcmp(resp->content_type, CT_JSON))
                resp->content_type = "application/yaml";
        KB_V(3, "%s %s -> %d", req->method, req->path, resp->status);
        free(path);
}

/*
 * GET /metrics: kube-apiserver's apiserver_request_total, a count of the
 * requests made to resources, by verb, group, version, resource,
 * subresource, scope and status code, in the Prometheus text format, so
 * that a test reads a client's writes from the server's side with the same
 * query on either server (test/e2e/scheduler_quiet.sh).
 *
 * The verbs are kube-apiserver's (its metrics.CleanVerb): LIST and WATCH
 * for a GET of a collection, APPLY for a server-side apply, DELETECOLLECTION
 * for a DELETE of one; scope is "resource" for a named object, "namespace"
 * or "cluster" for a collection.  Discovery, OpenAPI and health requests are
 * not counted (kube-apiserver counts them under an empty resource).
 *
 * The counts live in each resource type (a handful of rows each, found by
 * a linear scan), under srv->mu like everything else the handler touches.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver-http.h"

static const char *clean_verb(const struct kb_ctx *c)
{
        const char *m = c->req->method;
        if (!strcmp(m, "GET")) {
                if (c->name)
                        return "GET";
                return kb__query_bool(c->req, "watch") ? "WATCH" : "LIST";
        }
        if (!strcmp(m, "DELETE"))
                return c->name ? "DELETE" : "DELETECOLLECTION";
        if (!strcmp(m, "PATCH") && c->req->content_type &&
            kb_has_prefix(c->req->content_type, "application/apply-patch"))
                return "APPLY";
        static const char *const verbs[] = {"POST", "PUT", "PATCH", "HEAD", "OPTIONS"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(verbs); i++)
                if (!strcmp(m, verbs[i]))
                        return verbs[i];
        return "other";
}

void kb__reqcount_add(const struct kb_ctx *c)
{
        struct kb_rtype *rt = c->view ? c->view : c->rt;
        if (!rt)
                return;
        const char *verb = clean_verb(c);
        const char *sub = c->sub ? c->sub : "";
        const char *scope = c->name ? "resource" : c->ns ? "namespace" : "cluster";
        int code = c->resp->status;
        for (size_t i = 0; i < rt->ncounts; i++) {
                struct kb__req_count *r = &rt->counts[i];
                if (r->verb == verb && r->scope == scope && r->code == code &&
                    !strcmp(r->sub, sub)) {
                        r->n++;
                        return;
                }
        }
        if (rt->ncounts == rt->capcounts) {
                rt->capcounts = rt->capcounts ? 2 * rt->capcounts : 8;
                rt->counts = kb_xrealloc(rt->counts, rt->capcounts * sizeof(*rt->counts));
        }
        rt->counts[rt->ncounts++] = (struct kb__req_count){
            .verb = verb, .sub = kb_xstrdup(sub), .scope = scope, .code = code, .n = 1};
}

void kb__reqcount_render(struct kb_apiserver *srv, struct kb_buf *b)
{
        kb_buf_adds(b, "# HELP apiserver_request_total Counter of apiserver requests broken out "
                       "for each verb, group, version, resource, scope, component, and HTTP "
                       "response code.\n# TYPE apiserver_request_total counter\n");
        for (size_t t = 0; t < srv->ntypes; t++) {
                const struct kb_rtype *rt = srv->types[t];
                for (size_t i = 0; i < rt->ncounts; i++) {
                        const struct kb__req_count *r = &rt->counts[i];
                        kb_buf_printf(b,
                                      "apiserver_request_total{code=\"%d\",component=\"apiserver\","
                                      "dry_run=\"\",group=\"%s\",resource=\"%s\",scope=\"%s\","
                                      "subresource=\"%s\",verb=\"%s\",version=\"%s\"} %" PRIu64
                                      "\n",
                                      r->code, rt->group, rt->resource, r->scope, r->sub, r->verb,
                                      rt->version, r->n);
                }
        }
}

/*
 * What every request handler shares: query parameters, replies, the Status
 * errors kubectl prints (404, 409, 422 with causes) and the injected write
 * faults.  Bodies are decoded in body.c.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const char *kb__query(const struct kb_api_req *req, const char *key)
{
        for (size_t i = 0; i < req->nquery; i++)
                if (req->query[i].key && !strcmp(req->query[i].key, key))
                        return req->query[i].value ? req->query[i].value : "";
        return NULL;
}

void kb__reply(struct kb_api_resp *resp, int status, struct kb_value *v)
{
        char *text = kb_json_emit(v, false);
        kb_value_free(v);
        resp->status = status;
        resp->content_type = CT_JSON;
        kb_buf_reset(&resp->body);
        kb_buf_adds(&resp->body, text);
        free(text);
}

struct kb_value *kb__status_obj(int code, const char *reason, const char *msg)
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

void kb__fail(struct kb_api_resp *resp, int code, const char *reason, struct kb_value *details,
              const char *fmt, ...)
{
        struct kb_buf b;
        kb_buf_init(&b);
        va_list ap;
        va_start(ap, fmt);
        kb_buf_vprintf(&b, fmt, ap);
        va_end(ap);
        struct kb_value *s = kb__status_obj(code, reason, b.data);
        if (details)
                kb_value_set(s, "details", details);
        kb_value_set(s, "code", kb_value_new_int(code));
        kb__reply(resp, code, s);
        kb_buf_release(&b);
}

void kb__not_found_path(struct kb_api_resp *resp)
{
        kb__fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
}

/* "pods" or "podgroups.scheduling.volcano.sh", as messages name a resource. */
char *kb__qualified(const struct kb_rtype *rt)
{
        if (!rt->group[0])
                return kb_xstrdup(rt->resource);
        return kb_xasprintf("%s.%s", rt->resource, rt->group);
}

struct kb_value *kb__details(const struct kb_rtype *rt, const char *name, const char *kind)
{
        struct kb_value *d = kb_value_new(KB_VOBJECT);
        kb_value_set(d, "name", kb_value_new_string(name ? name : ""));
        if (rt->group[0])
                kb_value_set(d, "group", kb_value_new_string(rt->group));
        kb_value_set(d, "kind", kb_value_new_string(kind ? kind : rt->resource));
        return d;
}

void kb__not_found(struct kb_ctx *c, const struct kb_rtype *rt, const char *name)
{
        char *q = kb__qualified(rt);
        kb__fail(c->resp, 404, "NotFound", kb__details(rt, name, NULL), "%s \"%s\" not found", q,
                 name);
        free(q);
}

void kb__conflict(struct kb_ctx *c, const char *name)
{
        char *q = kb__qualified(c->rt);
        kb__fail(c->resp, 409, "Conflict", kb__details(c->rt, name, NULL),
                 "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
                 "apply your changes to the latest version and try again",
                 q, name);
        free(q);
}

void kb__invalid_kind(struct kb_api_resp *resp, const char *group, const char *kind,
                      const char *name, struct kb_causes *causes)
{
        struct kb_buf msg;
        kb_buf_init(&msg);
        struct kb_value *d = kb_value_new(KB_VOBJECT);
        kb_value_set(d, "name", kb_value_new_string(name ? name : ""));
        if (group[0])
                kb_value_set(d, "group", kb_value_new_string(group));
        kb_value_set(d, "kind", kb_value_new_string(kind));
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
        /* "Pod", or "PodGroup.scheduling.volcano.sh" for a group's kind. */
        char *gk = group[0] ? kb_xasprintf("%s.%s", kind, group) : kb_xstrdup(kind);
        kb__fail(resp, 422, "Invalid", d,
                 causes->n > 1 ? "%s \"%s\" is invalid: [%s]" : "%s \"%s\" is invalid: %s", gk,
                 name ? name : "", msg.data);
        free(gk);
        kb_buf_release(&msg);
}

void kb__invalid(struct kb_ctx *c, const char *name, struct kb_causes *causes)
{
        const struct kb_rtype *rt = c->view ? c->view : c->rt;
        kb__invalid_kind(c->resp, rt->group, rt->kind, name, causes);
}

bool kb__wants_table(const struct kb_api_req *req)
{
        return req->accept && strstr(req->accept, "as=Table");
}

bool kb__is_protobuf(const char *ct)
{
        return ct && kb_has_prefix(ct, "application/vnd.kubernetes.protobuf");
}

bool kb__fault_write(struct kb_ctx *c, const char *what)
{
        struct kb_apiserver *srv = c->srv;
        if (srv->opts.fault_write_rate <= 0 || !kb__fault_roll(srv, srv->opts.fault_write_rate))
                return false;
        int code = srv->opts.fault_write_code == 429 ? 429 : 500;
        KB_WARN("fault: failing %s %s with %d", what, c->req->path, code);
        if (code == 429) {
                c->resp->retry_after =
                    srv->opts.fault_retry_after > 0 ? srv->opts.fault_retry_after : 1;
                kb__fail(c->resp, 429, "TooManyRequests", NULL,
                         "the server has received too many requests and has asked us to try "
                         "again later (injected fault)");
        } else {
                kb__fail(c->resp, 500, "InternalError", NULL,
                         "an error on the server (\"injected fault\") has prevented the request "
                         "from succeeding");
        }
        return true;
}

bool kb__namespace_exists(struct kb_apiserver *srv, const char *ns)
{
        struct kb_rtype *nst = kb__type_find(srv, "", "v1", "namespaces");
        return nst && kb__obj_find(nst, NULL, ns);
}

/* Fills kind and apiVersion, or answers 400 when they name another type. */
bool kb__check_kind(struct kb_ctx *c, struct kb_value *obj)
{
        if (!kb_value_is(obj, KB_VOBJECT)) {
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "the object provided is not a JSON object");
                return false;
        }
        char *av = kb__api_version(c->rt);
        const char *kind = kb_value_str(kb_value_get(obj, "kind"));
        const char *have = kb_value_str(kb_value_get(obj, "apiVersion"));
        bool ok = (!kind || !strcmp(kind, c->rt->kind)) && (!have || !strcmp(have, av));
        if (!ok) {
                kb__fail(c->resp, 400, "BadRequest", NULL,
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
                kb__fail(c->resp, 400, "BadRequest", NULL, "metadata must be an object");
                return false;
        }
        return true;
}

bool kb__query_bool(const struct kb_api_req *req, const char *key)
{
        const char *v = kb__query(req, key);
        return v && strcmp(v, "0") && strcasecmp(v, "false");
}

bool kb__dry_run(const struct kb_api_req *req)
{
        return kb_streq(kb__query(req, "dryRun"), "All");
}

bool kb__check_options(struct kb_ctx *c, const char *options_kind)
{
        const struct kb_api_req *req = c->req;
        struct kb_causes causes = {0};
        for (size_t i = 0; i < req->nquery; i++) {
                const char *k = req->query[i].key, *v = req->query[i].value;
                if (!v)
                        v = "";
                if (kb_streq(k, "dryRun") && strcmp(v, "All"))
                        kb__cause_add(&causes, "FieldValueNotSupported", "dryRun",
                                      "Unsupported value: []string{\"%s\"}: supported values: "
                                      "\"All\"",
                                      v);
                if (kb_streq(k, "fieldValidation") && v[0] && strcmp(v, "Ignore") &&
                    strcmp(v, "Warn") && strcmp(v, "Strict"))
                        kb__cause_add(&causes, "FieldValueNotSupported", "fieldValidation",
                                      "Unsupported value: \"%s\": supported values: \"\", "
                                      "\"Ignore\", \"Strict\", \"Warn\"",
                                      v);
        }
        if (!causes.n)
                return true;
        kb__invalid_kind(c->resp, "meta.k8s.io", options_kind, "", &causes);
        kb__causes_release(&causes);
        return false;
}

/* Media types are case-insensitive; parameters (";as=Table", ";stream=watch",
 * ";q=0.9") do not change what the server can produce. */
static bool media_is(const char *range, size_t len, const char *type)
{
        size_t n = strlen(type);
        return len == n && !strncasecmp(range, type, n);
}

bool kb__acceptable(const char *accept, bool *yaml)
{
        *yaml = false;
        if (!accept || !accept[0])
                return true;
        const char *p = accept;
        while (*p) {
                p += strspn(p, " \t,");
                size_t len = strcspn(p, ";,");
                while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                        len--;
                if (media_is(p, len, "application/yaml")) {
                        *yaml = true;
                        return true;
                }
                if (media_is(p, len, "application/json") || media_is(p, len, "*/*") ||
                    media_is(p, len, "application/*"))
                        return true;
                p += strcspn(p, ",");
        }
        return false;
}

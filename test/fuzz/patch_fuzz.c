/*
 * Fuzz target: the three patch formats and server-side apply.  Input:
 *   byte 0       the mode (below, low 3 bits) and, for modes 3 to 7, bit 3
 *                picks the object patched (a pod, else a ConfigMap) and
 *                bit 4 force=true
 *   up to '\n'   a document (modes 0-2; JSON)
 *   the rest     the patch
 * Modes 0, 1, 2 apply a JSON merge, strategic merge or JSON patch to the
 * document directly (patch.c).  Modes 3 to 7 send the patch to a fresh
 * kbatch-apiserver as PATCH requests, the way kubectl does (merge,
 * strategic, JSON patch, apply as YAML, apply as JSON), so the body
 * decoding, validation and field managers of server-side apply run too;
 * apply is sent twice, by two managers, to reach its conflicts.  The server
 * is made anew per input, so a crash reproduces from its input alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver-int.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

static void request(struct kb_apiserver *srv, const char *method, const char *path,
                    const struct kb_api_query *q, size_t nq, const char *ctype, const char *body,
                    size_t len)
{
        struct kb_api_req req = {
            .method = method,
            .path = path,
            .query = q,
            .nquery = nq,
            .content_type = ctype,
            .accept = "application/json",
            .body = body,
            .body_len = len,
        };
        struct kb_api_resp resp;
        kb_apiserver_handle(srv, &req, &resp);
        kb_apiserver_watch_free(resp.watch);
        resp.watch = NULL;
        kb_api_resp_release(&resp);
}

static void direct(int mode, const char *doc, size_t dlen, const char *patch, size_t plen)
{
        struct kb_value *d = NULL, *p = NULL;
        char err[512];
        if (kb_json_parse(doc, dlen, &d, NULL, 0) || kb_json_parse(patch, plen, &p, NULL, 0))
                goto out;
        err[0] = 0;
        if (mode == 0) {
                kb__merge_patch(&d, p);
        } else {
                int rc = mode == 1 ? kb__strategic_patch(&d, p, err, sizeof(err))
                                   : kb__json_patch(&d, p, err, sizeof(err));
                if (rc && !err[0])
                        __builtin_trap(); /* a refusal says why */
        }
        free(kb_json_emit(d, false));
out:
        kb_value_free(d);
        kb_value_free(p);
}

static const char pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}}"
    ","
    "\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\","
    "\"ports\":[{\"containerPort\":80}],\"env\":[{\"name\":\"E\",\"value\":\"1\"}]}],"
    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}}";
static const char cm[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
    "\"annotations\":{\"x\":\"y\"}},\"data\":{\"k\":\"v\"}}";

static void served(int mode, bool on_pod, bool force, const char *patch, size_t plen)
{
        static const char *const types[] = {
            "application/merge-patch+json", "application/strategic-merge-patch+json",
            "application/json-patch+json", "application/apply-patch+yaml",
            "application/apply-patch+json"};
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.history = 16;
        o.seed = 1;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        const char *coll =
            on_pod ? "/api/v1/namespaces/default/pods" : "/api/v1/namespaces/default/configmaps";
        const char *item = on_pod ? "/api/v1/namespaces/default/pods/p"
                                  : "/api/v1/namespaces/default/configmaps/c";
        request(srv, "POST", coll, NULL, 0, "application/json", on_pod ? pod : cm,
                on_pod ? sizeof(pod) - 1 : sizeof(cm) - 1);
        const char *ctype = types[mode - 3];
        bool apply = strstr(ctype, "apply") != NULL;
        struct kb_api_query q[2] = {{"fieldManager", "one"}, {"force", "true"}};
        request(srv, "PATCH", item, q, force ? 2 : 1, ctype, patch, plen);
        if (apply) {
                /* A second manager applies the same, then the first gives
                 * it up (an empty apply). */
                q[0].value = "two";
                request(srv, "PATCH", item, q, force ? 2 : 1, ctype, patch, plen);
                q[0].value = "one";
                const char *empty = on_pod ? "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                                             "\"metadata\":{\"name\":\"p\"}}"
                                           : "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                                             "\"metadata\":{\"name\":\"c\"}}";
                request(srv, "PATCH", item, q, 1, "application/apply-patch+yaml", empty,
                        strlen(empty));
        }
        request(srv, "GET", item, NULL, 0, NULL, NULL, 0);
        kb_apiserver_free(srv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kb_log_set_hook(quiet, NULL);
        if (size < 1)
                return 0;
        int mode = data[0] & 7;
        const char *rest = (const char *)data + 1;
        size_t n = size - 1;
        const char *nl = memchr(rest, '\n', n);
        const char *doc = rest, *patch = nl ? nl + 1 : rest;
        size_t dlen = nl ? (size_t)(nl - rest) : 0, plen = nl ? n - dlen - 1 : n;
        if (mode < 3)
                direct(mode, doc, dlen, patch, plen);
        else
                served(mode, data[0] & 8, data[0] & 16, patch, plen);
        return 0;
}

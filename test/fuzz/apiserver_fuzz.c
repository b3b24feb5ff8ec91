/*
 * Fuzzes the apiserver's request path: routing, query parsing (selectors,
 * continue tokens), body decoding (JSON, YAML), validation and the three
 * patch formats.  Input layout:
 *   byte 0      method (low 3 bits) and content type (next 3 bits)
 *   up to '\n'  path?query
 *   the rest    body
 * One server lives for the whole run, so sequences of requests build state
 * (CRDs, objects) that later inputs patch and watch.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver.h"

static struct kb_apiserver *srv;

static void teardown(void)
{
        kb_apiserver_free(srv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const methods[] = {"GET",    "POST", "PUT",  "PATCH",
                                              "DELETE", "GET",  "POST", "PATCH"};
        static const char *const types[] = {
            "application/json",
            "application/yaml",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/json-patch+json",
            "application/apply-patch+yaml",
            "application/vnd.kubernetes.protobuf",
            NULL,
        };
        if (!srv) {
                struct kb_apiserver_opts o;
                kb_apiserver_opts_init(&o);
                o.history = 64;
                o.seed = 1;
                srv = kb_apiserver_new(&o);
                char err[128];
                kb_apiserver_add_nodes(srv, "2:cpu=4,memory=8Gi", err, sizeof(err));
                atexit(teardown);
        }
        if (size < 2)
                return 0;
        const char *method = methods[data[0] & 7];
        const char *ctype = types[(data[0] >> 3) & 7];
        const char *rest = (const char *)data + 1;
        size_t n = size - 1;
        const char *nl = memchr(rest, '\n', n);
        size_t plen = nl ? (size_t)(nl - rest) : n;
        char *target = strndup(rest, plen);
        const char *body = nl ? nl + 1 : "";
        size_t blen = nl ? n - plen - 1 : 0;

        /* Split path and query; keys and values point into target. */
        struct kb_api_query q[16];
        size_t nq = 0;
        char *qs = strchr(target, '?');
        if (qs) {
                *qs++ = 0;
                for (char *save = NULL, *t = strtok_r(qs, "&", &save); t && nq < 16;
                     t = strtok_r(NULL, "&", &save)) {
                        char *eq = strchr(t, '=');
                        if (eq)
                                *eq++ = 0;
                        q[nq].key = t;
                        q[nq].value = eq ? eq : "";
                        nq++;
                }
        }
        struct kb_api_req req = {
            .method = method,
            .path = target,
            .query = q,
            .nquery = nq,
            .content_type = ctype,
            .accept = (data[0] & 0x40) ? "application/json;as=Table;v=v1;g=meta.k8s.io"
                                       : "application/json",
            .body = body,
            .body_len = blen,
        };
        struct kb_api_resp resp;
        kb_apiserver_handle(srv, &req, &resp);
        if (resp.watch) {
                const char *out;
                kb_apiserver_watch_next(resp.watch, 0, &out);
                kb_apiserver_watch_next(resp.watch, 0, &out);
        }
        kb_api_resp_release(&resp);
        free(target);
        return 0;
}

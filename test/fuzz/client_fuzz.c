/*
 * Fuzz target: what the scheduler reads from the API server's answers
 * outside watch events — list pages (items, metadata.continue, the early
 * continue token, metadata.resourceVersion) as a reflector pages through
 * them into the cache, a Lease as leader election reads it and writes the
 * next one, and a Retry-After header line.  Byte 0:
 *   bits 0-1   0: Retry-After, 1: a Lease, 2 and 3: a reflector
 *   bit 2      the reflector's collection is optional (404 reads as empty)
 *   bits 3-5   the kind the reflector's cache decodes
 * For a reflector, each line of the rest is one answer to what it asked
 * for last: its first byte picks the HTTP status (see statuses), the rest
 * is the list page, or the watch line (status 200) while it watches.
 * The reflector talks to no server: its requests are withdrawn and these
 * answers given in their place, on a loop made afresh per input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "kube/kube-int.h"
#include "scheduler/scheduler-int.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

static void retry_after(const char *data, size_t size)
{
        /* As curl hands header lines over: len bytes, and no NUL after
         * them.  Whatever follows in memory must not count. */
        char *a = malloc(size + 2), *b = malloc(size + 1);
        memcpy(a, data, size);
        memcpy(a + size, "99", 2);
        memcpy(b, data, size);
        b[size] = 0;
        double v = kb__retry_after(a, size);
        if (!(v >= 0 && v <= 60) || v != kb__retry_after(b, size))
                __builtin_trap();
        free(a);
        free(b);
}

static void lease(const char *data, size_t size)
{
        struct kb__lease l;
        if (kb__lease_parse(data, size, &l))
                return;
        /* The next Lease as a candidate that takes it over writes it, then
         * as the holder renews it: valid JSON carrying the version read. */
        for (int mine = 0; mine < 2; mine++) {
                char *body = kb__lease_body("kbatch-system", "kbatch", l.rv, "me",
                                            mine ? l.acquire : NULL, l.transitions + !mine, 15);
                struct kb_value *v = NULL;
                if (kb_json_parse(body, strlen(body), &v, NULL, 0))
                        __builtin_trap();
                const char *rv = kb_value_str(kb_value_dig(v, "metadata", "resourceVersion", NULL));
                int64_t t = -1;
                kb_value_int(kb_value_dig(v, "spec", "leaseTransitions", NULL), &t);
                if ((l.rv && !kb_streq(rv, l.rv)) || t < 0 || t > INT32_MAX)
                        __builtin_trap();
                kb_value_free(v);
                free(body);
        }
        kb_value_free(l.doc);
}

static void reflector(unsigned flags, const char *data, size_t size)
{
        static const long statuses[] = {200, 200, 200, 200, 410, 404, 500, 429, 403, 0};
        static const enum kb_kind kinds[] = {
            KB_KIND_POD,           KB_KIND_NODE,      KB_KIND_PODGROUP,  KB_KIND_QUEUE,
            KB_KIND_PRIORITYCLASS, KB_KIND_NAMESPACE, KB_KIND_HYPERNODE, KB_KIND_POD};
        uv_loop_t loop;
        uv_loop_init(&loop);
        struct kb_kube_config cfg = {.server = "http://127.0.0.1:9"};
        struct kb_kube *k = kb_kube_new(&loop, &cfg, NULL);
        struct kb_cache *c = kb_cache_new();
        void *feed = kb_cache_feed_source(c, kinds[(flags >> 3) & 7], 0);
        struct kb_reflector *r =
            kb_reflector_new(k, "fuzz", "/api/v1/pods", NULL, &kb_cache_reflector_ops, feed);
        if (flags & 4)
                kb_reflector_set_optional(r);
        const char *p = data, *end = data + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                if (len) {
                        long status = statuses[(unsigned char)p[0] % KB_ARRAY_SIZE(statuses)];
                        /* The body is NUL-terminated, as the client's are. */
                        char *body = malloc(len);
                        memcpy(body, p + 1, len - 1);
                        body[len - 1] = 0;
                        struct kb_kube_resp resp = {.status = status,
                                                    .body = body,
                                                    .len = len - 1,
                                                    .error = status ? NULL : "refused",
                                                    .attempts = 1};
                        kb__reflector_retry_now(r);
                        if (!kb__reflector_watching(r))
                                kb__reflector_list_answer(r, &resp);
                        else if (status == 200 && len > 1)
                                kb__reflector_watch_line(r, body, len - 1);
                        else
                                kb__reflector_watch_end(r, &resp);
                        free(body);
                }
                p += len + 1;
        }
        kb_reflector_free(r);
        kb_kube_free(k);
        uv_run(&loop, UV_RUN_DEFAULT);
        if (uv_loop_close(&loop))
                __builtin_trap(); /* every handle closed */
        char *dump = kb_cache_dump_json(c);
        free(dump);
        kb_cache_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kb_log_set_hook(quiet, NULL);
        if (size < 1)
                return 0;
        const char *rest = (const char *)data + 1;
        switch (data[0] & 3) {
        case 0:
                retry_after(rest, size - 1);
                break;
        case 1:
                lease(rest, size - 1);
                break;
        default:
                reflector(data[0], rest, size - 1);
        }
        return 0;
}

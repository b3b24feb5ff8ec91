/*
 * Fuzz target: watch streams.  Each line of the input is a watch event as
 * a reflector reads it from the API server ({"type":...,"object":...});
 * it is decoded, and ADDED, MODIFIED and DELETED objects are fed to a
 * cache as the reflectors feed it (the kind named by the object's "kind",
 * else taken in turn), including the sources the pod reflectors use.  Then
 * a snapshot of whatever decoded is scheduled with the default conf.  No
 * input may crash, leak or trip a sanitizer; what does not decode is
 * rejected with a message and remembered as invalid.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "framework/framework.h"
#include "kube/kube.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

static enum kb_kind kind_of(const struct kb_value *obj, size_t n)
{
        static const struct {
                const char *name;
                enum kb_kind kind;
        } kinds[] = {
            {"Node", KB_KIND_NODE},
            {"Pod", KB_KIND_POD},
            {"PodGroup", KB_KIND_PODGROUP},
            {"Queue", KB_KIND_QUEUE},
            {"PriorityClass", KB_KIND_PRIORITYCLASS},
            {"Namespace", KB_KIND_NAMESPACE},
        };
        const char *k = kb_value_str(kb_value_get(obj, "kind"));
        for (size_t i = 0; k && i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (!strcmp(k, kinds[i].name))
                        return kinds[i].kind;
        return kinds[n % (sizeof(kinds) / sizeof(kinds[0]))].kind;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kb_log_set_hook(quiet, NULL);
        struct kb_cache *c = kb_cache_new();
        const char *p = (const char *)data, *end = p + size;
        size_t n = 0;
        char err[512];
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                struct kb_watch_event ev;
                if (len && kb_watch_event_parse(p, len, &ev, err, sizeof(err)) == 0) {
                        enum kb_kind kind = kind_of(ev.object, n);
                        /* Pods come from two reflectors (sources 0 and 1). */
                        unsigned src = kind == KB_KIND_POD ? (unsigned)(n & 1) : 0;
                        void *feed = kb_cache_feed_source(c, kind, src);
                        if (ev.type == KB_WATCH_ADDED || ev.type == KB_WATCH_MODIFIED)
                                kb_cache_reflector_ops.upsert(feed, ev.object);
                        else if (ev.type == KB_WATCH_DELETED)
                                kb_cache_reflector_ops.remove(feed, ev.object);
                        kb_watch_event_release(&ev);
                }
                n++;
                p += len + 1;
        }
        struct kb_conf conf;
        if (kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf, err,
                          sizeof(err)) == 0) {
                static const char *const names[] = {"kbatch"};
                struct kb_cache_snap *snap = kb_cache_snapshot(c, names, 1, "default");
                struct kb_result r;
                kb_session_run(&snap->snap, &conf, &r);
                kb_result_release(&r);
                kb_cache_snapshot_free(snap);
                kb_conf_release(&conf);
        }
        char *dump = kb_cache_dump_json(c);
        free(dump);
        kb_cache_free(c);
        return 0;
}

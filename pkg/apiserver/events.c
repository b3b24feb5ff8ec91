/*
 * events.k8s.io/v1 Events are the core/v1 Events under other names, as in
 * the real server: one object, stored once, seen through either group.  A
 * write through events.k8s.io converts to core/v1 before it is stored, and
 * every object read through it converts back.
 *
 *   core/v1                 events.k8s.io/v1
 *   involvedObject          regarding
 *   message                 note
 *   source                  deprecatedSource
 *   firstTimestamp          deprecatedFirstTimestamp
 *   lastTimestamp           deprecatedLastTimestamp
 *   count                   deprecatedCount
 *   reportingComponent      reportingController
 *
 * Everything else (reason, type, action, eventTime, series, related,
 * reportingInstance, metadata) has the same name in both.
 */
#include "apiserver/apiserver-http.h"

#include <stdlib.h>
#include <string.h>

static const char *const renames[][2] = {
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reportingComponent", "reportingController"},
};

/* Renames the members of v in place, column from to column to. */
static void rename_all(struct kb_value *v, int from, int to)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(renames); i++) {
                struct kb_value *x = kb_value_take(v, renames[i][from]);
                if (x)
                        kb_value_set(v, renames[i][to], x);
        }
}

struct kb_value *kb__event_to_v1(const struct kb_value *core)
{
        struct kb_value *v = kb_value_clone(core);
        if (!kb_value_is(v, KB_VOBJECT))
                return v;
        rename_all(v, 0, 1);
        kb_value_set(v, "apiVersion", kb_value_new_string("events.k8s.io/v1"));
        return v;
}

struct kb_value *kb__event_from_v1(struct kb_value *v1)
{
        if (!kb_value_is(v1, KB_VOBJECT))
                return v1;
        rename_all(v1, 1, 0);
        kb_value_set(v1, "kind", kb_value_new_string("Event"));
        kb_value_set(v1, "apiVersion", kb_value_new_string("v1"));
        return v1;
}

struct kb_value *kb__view_out(const struct kb_rtype *view, const struct kb_value *obj)
{
        if (view && !strcmp(view->group, "events.k8s.io"))
                return kb__event_to_v1(obj);
        return kb_value_clone(obj);
}

/* An Event or an EventList made for core/v1, in the view's version. */
static struct kb_value *convert_doc(const struct kb_rtype *view, struct kb_value *doc)
{
        const char *kind = kb_value_str(kb_value_get(doc, "kind"));
        if (kb_streq(kind, "Event")) {
                struct kb_value *out = kb__view_out(view, doc);
                kb_value_free(doc);
                return out;
        }
        if (kb_streq(kind, "EventList")) {
                struct kb_value *items = kb_value_get(doc, "items");
                for (size_t i = 0; kb_value_is(items, KB_VARRAY) && i < items->arr.n; i++) {
                        struct kb_value *out = kb__view_out(view, items->arr.v[i]);
                        kb_value_free(items->arr.v[i]);
                        items->arr.v[i] = out;
                }
                char *av = kb__api_version(view);
                kb_value_set(doc, "apiVersion", kb_value_new_string(av));
                free(av);
        }
        return doc;
}

void kb__view_reply(struct kb_ctx *c)
{
        struct kb_api_resp *resp = c->resp;
        if (resp->watch || resp->status >= 300 || strcmp(resp->content_type, CT_JSON) ||
            !resp->body.len)
                return;
        struct kb_value *doc;
        if (kb_json_parse(resp->body.data, resp->body.len, &doc, NULL, 0))
                return;
        kb__reply(resp, resp->status, convert_doc(c->view, doc));
}

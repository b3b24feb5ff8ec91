/*
 * Failed requests in kubectl's words.  The API server explains a refusal in
 * a Status object (kind Status, reason, message, details); kubectl prints
 * "Error from server (<reason>): <message>", and so does the plugin, so a
 * user reads the same sentence whichever tool asked.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"

/* The body as a Status object (caller frees), or NULL. */
static struct kb_value *status_of(const char *body, size_t len)
{
        struct kb_value *v = NULL;
        if (!body || !len || kb_json_parse(body, len, &v, NULL, 0))
                return NULL;
        if (!kb_streq(kb_value_str(kb_value_get(v, "kind")), "Status")) {
                kb_value_free(v);
                return NULL;
        }
        return v;
}

void kb_ctl_server_error(long code, const char *body, size_t len, struct kb_buf *out)
{
        struct kb_value *st = status_of(body, len);
        const char *reason = kb_value_str(kb_value_get(st, "reason"));
        const char *msg = kb_value_str(kb_value_get(st, "message"));
        if (msg && *msg && reason && *reason)
                kb_buf_printf(out, "Error from server (%s): %s", reason, msg);
        else if (msg && *msg)
                kb_buf_printf(out, "Error from server: %s", msg);
        else
                kb_buf_printf(out, "Error from server: HTTP %ld", code);
        kb_value_free(st);
}

bool kb_ctl_object_missing(const char *body, size_t len)
{
        struct kb_value *st = status_of(body, len);
        const char *name = kb_value_str(kb_value_dig(st, "details", "name"));
        bool missing = name && *name;
        kb_value_free(st);
        return missing;
}

/*
 * Pod subresources: binding (binding.c binds), eviction, and log.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void kb__do_binding(struct kb_ctx *c, struct kb_obj *o)
{
        struct kb_value *b = kb__parse_body(c);
        if (b)
                kb__bind(c, o, b);
}

void kb__do_eviction(struct kb_ctx *c, struct kb_obj *o)
{
        struct kb_value *b = kb__parse_body(c);
        if (!b)
                return;
        if (!o) {
                kb__not_found(c, c->rt, c->name);
                goto out;
        }
        /* The Eviction's deleteOptions as a DELETE's: its uid precondition,
         * and the grace period (the pod's own unless they say otherwise),
         * which the simulated kubelet honours before the pod goes. */
        const struct kb_value *opts = kb_value_get(b, "deleteOptions");
        const char *puid = kb_value_str(kb_value_dig(opts, "preconditions", "uid"));
        if (puid && strcmp(puid, kb__meta_str(o->doc->v, "uid"))) {
                kb__conflict(c, c->name);
                goto out;
        }
        /* The pod's disruption budgets may refuse (pdb.c). */
        int code = 0;
        struct kb_value *no = kb__pdb_refusal(c->srv, o->doc->v, &code);
        if (no) {
                kb__reply(c->resp, code, no);
                goto out;
        }
        if (!kb_value_dig(o->doc->v, "metadata", "deletionTimestamp"))
                kb__store_delete(c->srv, c->rt, o, kb__delete_grace(c, opts, o->doc->v));
        struct kb_value *s = kb__status_obj(201, NULL, NULL);
        kb_value_set(s, "code", kb_value_new_int(201));
        kb__reply(c->resp, 201, s);
out:
        kb_value_free(b);
}

/* ---- routing ------------------------------------------------------------------- */

/* One log line at the time ts (an RFC 3339 timestamp, UTC). */
static void log_line(struct kb_buf *out, bool stamps, const char *ts, const char *fmt, ...)
    KB_PRINTF(4, 5);
static void log_line(struct kb_buf *out, bool stamps, const char *ts, const char *fmt, ...)
{
        /* kubectl --timestamps shows nanoseconds; the times here are whole
         * seconds. */
        if (stamps && ts && strlen(ts) >= 19)
                kb_buf_printf(out, "%.19s.000000000Z ", ts);
        va_list ap;
        va_start(ap, fmt);
        kb_buf_vprintf(out, fmt, ap);
        va_end(ap);
        kb_buf_adds(out, "\n");
}

static const struct kb_value *container_status(const struct kb_value *pod, const char *name)
{
        const struct kb_value *css = kb_value_dig(pod, "status", "containerStatuses");
        for (size_t i = 0; kb_value_is(css, KB_VARRAY) && i < css->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(css->arr.v[i], "name")), name))
                        return css->arr.v[i];
        return NULL;
}

/*
 * GET pods/NAME/log.  No container runs, so a container's log is what the
 * simulated kubelet did to it, a line per state change:
 *   container c started from image busybox on node-1 (simulated by kbatch-apiserver)
 *   container c exited with code 0 (Completed)
 * Query parameters: container, timestamps, tailLines; previous finds no
 * earlier container (nothing restarts); follow returns what there is.
 */
void kb__do_pod_log(struct kb_ctx *c, struct kb_obj *o)
{
        if (!o) {
                kb__not_found(c, c->rt, c->name);
                return;
        }
        const struct kb_value *pod = o->doc->v;
        const struct kb_value *cs = kb_value_dig(pod, "spec", "containers");
        size_t ncs = kb_value_is(cs, KB_VARRAY) ? cs->arr.n : 0;
        const char *want = kb__query(c->req, "container");
        if (want && !want[0])
                want = NULL;
        if (!want && ncs == 1)
                want = kb_value_str(kb_value_get(cs->arr.v[0], "name"));
        if (!want) {
                struct kb_buf names;
                kb_buf_init(&names);
                for (size_t i = 0; i < ncs; i++) {
                        const char *n = kb_value_str(kb_value_get(cs->arr.v[i], "name"));
                        kb_buf_printf(&names, "%s%s", i ? " " : "", n ? n : "");
                }
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "a container name must be specified for pod %s, choose one of: [%s]",
                         c->name, names.data ? names.data : "");
                kb_buf_release(&names);
                return;
        }
        const struct kb_value *spec_c = NULL;
        for (size_t i = 0; i < ncs; i++)
                if (kb_streq(kb_value_str(kb_value_get(cs->arr.v[i], "name")), want))
                        spec_c = cs->arr.v[i];
        if (!spec_c) {
                kb__fail(c->resp, 400, "BadRequest", NULL, "container %s is not valid for pod %s",
                         want, c->name);
                return;
        }
        if (kb__query_bool(c->req, "previous")) {
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "previous terminated container \"%s\" in pod \"%s\" not found", want,
                         c->name);
                return;
        }
        const char *node = kb_value_str(kb_value_dig(pod, "spec", "nodeName"));
        if (!node || !node[0]) {
                kb__fail(c->resp, 400, "BadRequest", NULL, "pod %s does not have a host assigned",
                         c->name);
                return;
        }
        const struct kb_value *st = container_status(pod, want);
        const char *started = kb_value_str(kb_value_dig(st, "state", "running", "startedAt"));
        const struct kb_value *term = kb_value_dig(st, "state", "terminated");
        if (term)
                started = kb_value_str(kb_value_get(term, "startedAt"));
        if (!started) {
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating",
                         want, c->name);
                return;
        }
        bool stamps = kb__query_bool(c->req, "timestamps");
        struct kb_buf out;
        kb_buf_init(&out);
        const char *image = kb_value_str(kb_value_get(spec_c, "image"));
        log_line(&out, stamps, started,
                 "container %s started from image %s on %s (simulated by kbatch-apiserver)", want,
                 image ? image : "", node);
        if (term) {
                const char *reason = kb_value_str(kb_value_get(term, "reason"));
                log_line(&out, stamps, kb_value_str(kb_value_get(term, "finishedAt")),
                         "container %s exited with code %s (%s)", want,
                         kb_value_text(kb_value_get(term, "exitCode")),
                         reason ? reason : "Terminated");
        }
        const char *tail = kb__query(c->req, "tailLines");
        const char *text = out.data ? out.data : "";
        if (tail && strtol(tail, NULL, 10) >= 0) {
                long keep = strtol(tail, NULL, 10);
                const char *p = text + strlen(text);
                for (long n = 0; p > text && n <= keep; p--)
                        if (p[-1] == '\n' && ++n > keep)
                                break;
                text = p;
        }
        c->resp->status = 200;
        c->resp->content_type = "text/plain";
        kb_buf_reset(&c->resp->body);
        kb_buf_adds(&c->resp->body, text);
        kb_buf_release(&out);
}

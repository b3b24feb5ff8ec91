/*
 * Request bodies: JSON, YAML, or protobuf (protobuf.c), decoded before the
 * lock is taken, and handed to the handler that parses one.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * Decodes a request body: JSON, YAML when the content type says so, or
 * protobuf.  Touches no server state, so kb_apiserver_handle runs it before
 * taking the lock: a 1.3 MB body of 80,000 labels then holds up nobody.
 */
void kb__body_decode(const struct kb_api_req *req, struct kb_body *b)
{
        memset(b, 0, sizeof(*b));
        b->decoded = true;
        char err[256] = "";
        if (kb__is_protobuf(req->content_type)) {
                int rc = kb__protobuf_decode(req->body, req->body_len, &b->v, err, sizeof(err));
                if (rc == -ENOTSUP) {
                        b->status = 415;
                        b->reason = "UnsupportedMediaType";
                        snprintf(b->msg, sizeof(b->msg), "%s", err);
                } else if (rc) {
                        b->status = 400;
                        b->reason = "BadRequest";
                        snprintf(b->msg, sizeof(b->msg), "the object provided is unrecognized: %s",
                                 err);
                }
                return;
        }
        if (req->body_len == 0) {
                b->status = 400;
                b->reason = "BadRequest";
                snprintf(b->msg, sizeof(b->msg), "the request body is empty");
                return;
        }
        bool yaml = req->content_type && strstr(req->content_type, "yaml");
        if (kb_json_parse_dups(req->body, req->body_len, &b->v, &b->dups, err, sizeof(err)) == 0)
                return;
        kb_value_dups_release(&b->dups);
        if (yaml) {
                struct kb_value **docs;
                size_t n;
                err[0] = '\0';
                if (kb_yaml_parse_dups(req->body, req->body_len, &docs, &n, &b->dups, err,
                                       sizeof(err)) == 0) {
                        if (n == 1) {
                                b->v = docs[0];
                                b->yaml = true;
                                free(docs);
                                return;
                        }
                        kb_value_free_docs(docs, n);
                        snprintf(err, sizeof(err), "expected one document");
                }
                kb_value_dups_release(&b->dups);
        }
        b->status = 400;
        b->reason = "BadRequest";
        snprintf(b->msg, sizeof(b->msg), "the object provided is unrecognized: %s", err);
}

void kb__body_release(struct kb_body *b)
{
        kb_value_free(b->v);
        kb_value_dups_release(&b->dups);
        memset(b, 0, sizeof(*b));
}

/* The request's body, decoded before the lock when kb_apiserver_handle
 * could (see kb__body_decode), else now; NULL after answering why not.
 * The caller owns the value. */
#ifdef KB_TESTING
unsigned long kb__body_decodes_locked;
#endif

struct kb_value *kb__parse_body(struct kb_ctx *c)
{
        struct kb_body local, *b = c->body;
        if (!b || !b->decoded || b->taken) {
#ifdef KB_TESTING
                if (c->req->body_len)
                        kb__body_decodes_locked++;
#endif
                kb__body_decode(c->req, &local);
                b = &local;
        }
        b->taken = true;
        struct kb_value *v = b->v;
        b->v = NULL;
        if (b->status)
                kb__fail(c->resp, b->status, b->reason, NULL, "%s", b->msg);
        if (b == &local)
                kb__body_release(&local);
        return v;
}

/* Write faults: a fraction of binding, status and create writes fail. */

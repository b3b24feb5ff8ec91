/*
 * kubectl-kbatch's API client: the kubeconfig found as kubectl finds it,
 * and one request at a time.  Each request runs to completion on a private
 * libuv loop before the next starts: a command makes two or three
 * requests, so there is nothing to overlap.
 */
#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubectl-kbatch.h"

void kk_reply_release(struct kk_reply *r)
{
        free(r->body);
        free(r->error);
        memset(r, 0, sizeof(*r));
}

static void on_reply(void *arg, const struct kb_kube_resp *resp)
{
        struct kk_reply *r = arg;
        r->done = true;
        r->status = resp->status;
        r->len = resp->len;
        r->body = kb_xstrndup(resp->body ? resp->body : "", resp->len);
        r->error = resp->error ? kb_xstrdup(resp->error) : NULL;
}

int kk_call(struct kk_client *c, const char *method, const char *path, const char *body,
            const char *ctype, struct kk_reply *r)
{
        memset(r, 0, sizeof(*r));
        struct kb_kube_req req = {
            .method = method, .path = path, .body = body, .content_type = ctype};
        kb_kube_request(c->kube, &req, on_reply, r);
        while (!r->done)
                uv_run(&c->loop, UV_RUN_ONCE);
        if (r->status)
                return 0;
        fprintf(stderr, "error: cannot reach the server at %s: %s\n", c->cfg.server,
                r->error ? r->error : "no answer");
        kk_reply_release(r);
        return EXIT_FAIL;
}

int kk_refused(const struct kk_reply *r)
{
        struct kb_buf b;
        kb_buf_init(&b);
        if (r->status == 401)
                kb_buf_printf(&b, "error: You must be logged in to the server (Unauthorized): "
                                  "check the credentials of your kubeconfig's user");
        else
                kb_ctl_server_error(r->status, r->body, r->len, &b);
        fprintf(stderr, "%s\n", b.data);
        kb_buf_release(&b);
        return EXIT_FAIL;
}

struct kb_value *kk_body_json(const struct kk_reply *r, const char *what)
{
        struct kb_value *v = NULL;
        char err[256];
        if (kb_json_parse(r->body, r->len, &v, err, sizeof(err))) {
                fprintf(stderr, "error: the server's answer for %s is not JSON: %s\n", what, err);
                return NULL;
        }
        if (!kb_value_is(v, KB_VOBJECT)) {
                fprintf(stderr, "error: the server's answer for %s is not an object\n", what);
                kb_value_free(v);
                return NULL;
        }
        return v;
}

bool kk_valid_name(const char *s)
{
        if (!*s || strlen(s) > 253)
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '-' && *s != '.' && *s != '_')
                        return false;
        return true;
}

int kk_get_object(struct kk_client *c, const char *path, const char *what, struct kb_value **obj,
                  bool *served)
{
        struct kk_reply r;
        *obj = NULL;
        *served = true;
        if (kk_call(c, "GET", path, NULL, NULL, &r))
                return EXIT_FAIL;
        int rc = 0;
        if (r.status == 200) {
                *obj = kk_body_json(&r, what);
                rc = *obj ? 0 : EXIT_FAIL;
        } else if (r.status == 404) {
                *served = kb_ctl_object_missing(r.body, r.len);
        } else {
                rc = kk_refused(&r);
        }
        kk_reply_release(&r);
        return rc;
}

/* The kubeconfig as kubectl finds it: --kubeconfig, $KUBECONFIG, then
 * ~/.kube/config when it exists; in a pod without either, the service
 * account (pkg/kube's order puts that before ~/.kube/config, the scheduler's
 * order; kubectl's is this one). */
static int load_config(struct kk_client *c, const char *kubeconfig, const char *context,
                       const char *server)
{
        char err[1024];
        char *home = NULL;
        const char *env = getenv("KUBECONFIG");
        const char *h = getenv("HOME");
        if (!kubeconfig && !(env && *env) && h) {
                home = kb_xasprintf("%s/.kube/config", h);
                if (access(home, F_OK) == 0)
                        kubeconfig = home;
        }
        int e = kb_kube_config_load(kubeconfig, context, server, &c->cfg, err, sizeof(err));
        free(home);
        if (e) {
                fprintf(stderr, "error: %s\n", err);
                return EXIT_FAIL;
        }
        return 0;
}

int kk_client_open(struct kk_client *c, const struct kk_opts *o)
{
        memset(c, 0, sizeof(*c));
        if (load_config(c, o->kubeconfig, o->context, o->server))
                return EXIT_FAIL;
        c->ns = o->ns                                   ? o->ns
                : c->cfg.namespace && *c->cfg.namespace ? c->cfg.namespace
                                                        : "default";
        signal(SIGPIPE, SIG_IGN);
        uv_loop_init(&c->loop);
        struct kb_kube_opts kopts = {
            .timeout = 30, .max_attempts = 3, .user_agent = "kubectl-kbatch/" KB_VERSION};
        c->kube = kb_kube_new(&c->loop, &c->cfg, &kopts);
        return 0;
}

void kk_client_close(struct kk_client *c)
{
        kb_kube_free(c->kube);
        uv_run(&c->loop, UV_RUN_DEFAULT);
        if (uv_loop_close(&c->loop))
                KB_WARN("the loop still had handles at exit");
        kb_kube_config_release(&c->cfg);
}

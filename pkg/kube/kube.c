/*
 * Making a client: the options' defaults, the lanes' caps, a copy of the
 * config (without the credentials a plain http:// server would see), and
 * curl on the loop (transport.c) with client.c's two hooks around it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/kube-int.h"

static void global_init(void)
{
        curl_global_init(CURL_GLOBAL_ALL);
}

/* A bearer token (or an exec plugin's) over plain http:// is readable by
 * anyone on the path.  client-go reads a user's credentials only for a TLS
 * transport (clientcmd's ClientConfig: "only try to read the auth
 * information if we are secure"): for http:// it sends every request
 * without them and says nothing.  kbatch does the same unless told
 * otherwise, and says so once. */
static void plain_http_credentials(struct kb_kube_config *c)
{
        if (!c->server || strncasecmp(c->server, "http://", 7) || c->allow_insecure_token ||
            !(c->token || c->token_file || c->has_exec))
                return;
        KB_WARN("%s is plain http: the kubeconfig's %s is not sent over it (as client-go and "
                "kubectl do); use https, or --allow-insecure-token to send it anyway",
                c->server, c->has_exec ? "exec credential" : "token");
        if (c->token)
                memset(c->token, 0, strlen(c->token));
        free(c->token);
        free(c->token_file);
        c->token = c->token_file = NULL;
        if (c->has_exec)
                kb_kube_exec_release(&c->exec);
        c->has_exec = false;
}

struct kb_kube *kb_kube_new(uv_loop_t *loop, const struct kb_kube_config *cfg,
                            const struct kb_kube_opts *opts)
{
        static uv_once_t once = UV_ONCE_INIT;
        uv_once(&once, global_init);
        struct kb_kube *k = kb_xcalloc(1, sizeof(*k));
        k->loop = loop;
        k->opts.qps = opts && opts->qps > 0 ? opts->qps : 50;
        k->opts.burst = opts && opts->burst > 0 ? opts->burst : 100;
        k->opts.timeout = opts && opts->timeout > 0 ? opts->timeout : 30;
        k->opts.max_attempts = opts && opts->max_attempts > 0 ? opts->max_attempts : 6;
        k->opts.max_active = opts && opts->max_active > 0 ? opts->max_active : 32;
        k->opts.event_backlog = opts && opts->event_backlog > 0 ? opts->event_backlog : 1000;
        /* Status may fill half the window and events a few places, so
         * binds always find room as soon as a transfer ends. */
        k->lanes[KB_KUBE_LANE_STATUS].max_active = KB_MAX(1, (size_t)k->opts.max_active / 2);
        k->lanes[KB_KUBE_LANE_EVENT].max_active = KB_MAX(1, (size_t)k->opts.max_active / 8);
        k->lanes[KB_KUBE_LANE_EVENT].backlog = (size_t)k->opts.event_backlog;
        k->window = k->opts.max_active;
        k->window_cut = kb_now_mono() - 10;
        snprintf(k->user_agent, sizeof(k->user_agent), "%s",
                 opts && opts->user_agent ? opts->user_agent : "kbatch-scheduler");
        k->tokens = k->opts.burst;
        k->last_refill = kb_now_mono();
        k->rnd = (uint64_t)(kb_now_mono() * 1e9) | 1;
        pthread_mutex_init(&k->stats_lock, NULL);
#define DUP(f) k->cfg.f = cfg->f ? kb_xstrdup(cfg->f) : NULL
        DUP(server);
        DUP(ca_file);
        DUP(cert_file);
        DUP(key_file);
        DUP(token);
        DUP(token_file);
        DUP(namespace);
#undef DUP
#define BLOB(f, l)                                                                                 \
        if (cfg->f) {                                                                              \
                k->cfg.f = kb_xmalloc(cfg->l + 1);                                                 \
                memcpy(k->cfg.f, cfg->f, cfg->l + 1);                                              \
                k->cfg.l = cfg->l;                                                                 \
        }
        BLOB(ca_data, ca_len);
        BLOB(cert_data, cert_len);
        BLOB(key_data, key_len);
#undef BLOB
        k->cfg.insecure = cfg->insecure;
        k->cfg.allow_insecure_token = cfg->allow_insecure_token;
        if (cfg->has_exec) {
                kb_kube_exec_copy(&k->cfg.exec, &cfg->exec);
                k->cfg.has_exec = true;
        }
        plain_http_credentials(&k->cfg);
        kb__kube_transport_init(k, kb__kube_fence_check, kb__kube_check_info);
        return k;
}

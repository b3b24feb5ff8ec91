/*
 * curl on the loop: libcurl's multi interface driven by libuv, and the easy
 * handles' configuration (TLS, credentials, body).
 *
 * curl tells us which sockets to watch (socket_cb) and when to call it back
 * (timer_cb); libuv tells curl when a socket is ready (poll_cb) or the timer
 * fires (on_timeout).  One uv_poll_t per socket, attached to curl's socket
 * with curl_multi_assign; a poll error is passed on as CURL_CSELECT_ERR; a
 * 0 ms timeout becomes 1 ms so the loop never spins inside a callback; and
 * every socket_action is followed by reading curl's finished transfers.
 * Before curl touches a socket the fence is checked, so a process that was
 * paused past its lease aborts its fenced transfers before curl can send a
 * byte of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "kube/kube-int.h"

struct kb__sock {
        uv_poll_t poll;
        struct kb_kube *k;
        curl_socket_t fd;
        struct kb__sock *prev, *next;
};

void kb__kube_handle_gone(struct kb_kube *k)
{
        if (--k->open_handles == 0 && k->freeing) {
                pthread_mutex_destroy(&k->stats_lock);
                free(k->stats);
                kb_kube_config_release(&k->cfg);
                if (k->token)
                        memset(k->token, 0, strlen(k->token));
                free(k->token);
                kb_kube_cred_release(&k->cred);
                free(k);
        }
}

static void sock_closed(uv_handle_t *h)
{
        struct kb__sock *s = (struct kb__sock *)h;
        struct kb_kube *k = s->k;
        free(s);
        kb__kube_handle_gone(k);
}

static void poll_cb(uv_poll_t *p, int status, int events)
{
        struct kb__sock *s = (struct kb__sock *)p;
        struct kb_kube *k = s->k;
        int flags = 0, running;
        if (status < 0)
                flags = CURL_CSELECT_ERR;
        else {
                if (events & UV_READABLE)
                        flags |= CURL_CSELECT_IN;
                if (events & UV_WRITABLE)
                        flags |= CURL_CSELECT_OUT;
        }
        k->before_io(k);
        curl_multi_socket_action(k->multi, s->fd, flags, &running);
        k->after_io(k);
}

static void sock_drop(struct kb_kube *k, struct kb__sock *s)
{
        if (s->prev)
                s->prev->next = s->next;
        else
                k->socks = s->next;
        if (s->next)
                s->next->prev = s->prev;
        uv_poll_stop(&s->poll);
        uv_close((uv_handle_t *)&s->poll, sock_closed);
}

static int socket_cb(CURL *easy, curl_socket_t fd, int action, void *userp, void *socketp)
{
        struct kb_kube *k = userp;
        struct kb__sock *s = socketp;
        if (action == CURL_POLL_REMOVE) {
                if (s) {
                        curl_multi_assign(k->multi, fd, NULL);
                        sock_drop(k, s);
                }
                return 0;
        }
        if (!s) {
                s = kb_xcalloc(1, sizeof(*s));
                s->k = k;
                s->fd = fd;
                if (uv_poll_init_socket(k->loop, &s->poll, fd)) {
                        free(s);
                        return -1;
                }
                k->open_handles++;
                s->next = k->socks;
                if (k->socks)
                        k->socks->prev = s;
                k->socks = s;
                curl_multi_assign(k->multi, fd, s);
        }
        int ev = 0;
        if (action == CURL_POLL_IN || action == CURL_POLL_INOUT)
                ev |= UV_READABLE;
        if (action == CURL_POLL_OUT || action == CURL_POLL_INOUT)
                ev |= UV_WRITABLE;
        uv_poll_start(&s->poll, ev, poll_cb);
        return 0;
}

static void on_timeout(uv_timer_t *t)
{
        struct kb_kube *k = t->data;
        int running;
        k->before_io(k);
        curl_multi_socket_action(k->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        k->after_io(k);
}

static int timer_cb(CURLM *multi, long ms, void *userp)
{
        struct kb_kube *k = userp;
        if (ms < 0)
                uv_timer_stop(&k->curl_timer);
        else
                uv_timer_start(&k->curl_timer, on_timeout, ms == 0 ? 1 : (uint64_t)ms, 0);
        return 0;
}

static void handle_closed(uv_handle_t *h)
{
        kb__kube_handle_gone(h->data);
}

void kb__kube_transport_init(struct kb_kube *k, void (*before_io)(struct kb_kube *k),
                             void (*after_io)(struct kb_kube *k))
{
        k->before_io = before_io;
        k->after_io = after_io;
        k->multi = curl_multi_init();
        curl_multi_setopt(k->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        curl_multi_setopt(k->multi, CURLMOPT_SOCKETDATA, k);
        curl_multi_setopt(k->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        curl_multi_setopt(k->multi, CURLMOPT_TIMERDATA, k);
        curl_multi_setopt(k->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
        /* No per-host connection limit: the client's window bounds the
         * transfers (so connections: the window, the watches and a lease),
         * and a limit here would make a lease request wait inside curl for
         * a connection that binds hold. */
        uv_timer_init(k->loop, &k->curl_timer);
        uv_timer_init(k->loop, &k->rl_timer);
        k->curl_timer.data = k;
        k->rl_timer.data = k;
        k->open_handles = 2;
}

/* Easy handles are reused (reset, not freed): a handle is a few kilobytes
 * and its setup a good part of a small request's cost at 10,000 binds a
 * second.  Connections live in the multi handle either way. */
void kb__kube_easy_put(struct kb_kube *k, CURL *e)
{
        if (k->nspare == KB_ARRAY_SIZE(k->spare) || k->freeing) {
                curl_easy_cleanup(e);
                return;
        }
        curl_easy_reset(e);
        k->spare[k->nspare++] = e;
}

void kb__kube_transport_close(struct kb_kube *k)
{
        while (k->nspare)
                curl_easy_cleanup(k->spare[--k->nspare]);
        /* Cleanup closes curl's sockets, which calls socket_cb with REMOVE
         * and closes their poll handles. */
        curl_multi_cleanup(k->multi);
        k->multi = NULL;
        while (k->socks)
                sock_drop(k, k->socks);
        uv_close((uv_handle_t *)&k->curl_timer, handle_closed);
        uv_close((uv_handle_t *)&k->rl_timer, handle_closed);
}

/* ---- easy handles --------------------------------------------------------------- */

static size_t write_cb(char *data, size_t size, size_t n, void *arg)
{
        struct kb_kube_call *c = arg;
        size_t len = size * n;
        kb_buf_add(&c->resp, data, len);
        if (c->stream) {
                long status = 0;
                curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
                if (status != 200)
                        return len;
                /* Hand out whole lines; keep the partial tail. */
                size_t start = 0;
                for (size_t i = 0; i < c->resp.len; i++) {
                        if (c->resp.data[i] != '\n')
                                continue;
                        c->resp.data[i] = 0;
                        if (i > start) {
                                c->in_write = true;
                                c->line(c->arg, c->resp.data + start, i - start);
                                c->in_write = false;
                        }
                        if (c->cancelled)
                                return 0; /* aborts the transfer; finish reaps it */
                        start = i + 1;
                }
                if (start) {
                        memmove(c->resp.data, c->resp.data + start, c->resp.len - start);
                        c->resp.len -= start;
                        c->resp.data[c->resp.len] = 0;
                }
        }
        return len;
}

/*
 * The seconds a "Retry-After: N" header line asks for, at most 60, or 0
 * for another header or a value that is not a positive number (an
 * HTTP-date among them).  curl's header lines are len bytes with no NUL
 * after them, so the value is copied out before it is read.
 */
KB_TESTABLE double kb__retry_after(const char *data, size_t len)
{
        if (len <= 12 || strncasecmp(data, "retry-after:", 12))
                return 0;
        char v[32];
        size_t n = KB_MIN(len - 12, sizeof(v) - 1);
        memcpy(v, data + 12, n);
        v[n] = 0;
        double s = atof(v);
        return s > 0 ? KB_MIN(s, 60.0) : 0;
}

static size_t header_cb(char *data, size_t size, size_t n, void *arg)
{
        struct kb_kube_call *c = arg;
        size_t len = size * n;
        double v = kb__retry_after(data, len);
        if (v > 0)
                c->retry_after = v;
        return len;
}

/* The bearer token, re-read from its file when the file changed (a service
 * account token rotates) and at most once a second. */
static const char *current_token(struct kb_kube *k)
{
        if (!k->cfg.token_file)
                return k->cfg.token;
        double now = kb_now_mono();
        if (k->token && now - k->token_read < 1.0)
                return k->token;
        k->token_read = now;
        struct stat st;
        if (stat(k->cfg.token_file, &st) == 0 && k->token &&
            st.st_mtim.tv_sec == k->token_mtime.tv_sec &&
            st.st_mtim.tv_nsec == k->token_mtime.tv_nsec)
                return k->token;
        char *t = NULL;
        size_t n;
        if (kb_read_file(k->cfg.token_file, &t, &n) == 0) {
                while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
                        t[--n] = 0;
                if (k->token)
                        memset(k->token, 0, strlen(k->token));
                free(k->token);
                k->token = t;
                k->token_mtime = st.st_mtim;
        } else {
                KB_WARN("cannot read the token file %s", k->cfg.token_file);
        }
        return k->token ? k->token : k->cfg.token;
}

/* Runs the exec credential plugin when there is no credential yet or it
 * has expired (its expirationTimestamp passed, or a 401 said so).  This
 * blocks the loop while the plugin runs, as it does at startup and about
 * once per credential lifetime; a failing plugin is tried again at most
 * every 5 seconds, and meanwhile the old credential (if any) is sent. */
static void exec_refresh(struct kb_kube *k)
{
        if (!k->cfg.has_exec)
                return;
        if (k->have_cred && (k->cred.expiry == 0 || kb_now_wall() < k->cred.expiry))
                return;
        if (k->cred_failed && kb_now_mono() - k->cred_failed < 5.0)
                return;
        struct kb_kube_cred cred;
        char err[512];
        if (kb_kube_exec_credential(&k->cfg.exec, &cred, err, sizeof(err))) {
                KB_WARN("%s", err);
                k->cred_failed = kb_now_mono();
                return;
        }
        k->cred_failed = 0;
        kb_kube_cred_release(&k->cred);
        k->cred = cred;
        k->have_cred = true;
        char exp[40] = "no expiry";
        if (cred.expiry)
                kb_format_time(cred.expiry, exp, sizeof(exp));
        KB_V(1, "exec credential plugin %s: new %s (%s)", k->cfg.exec.command,
             cred.token ? "token" : "client certificate", exp);
}

void kb__kube_setup_easy(struct kb_kube_call *c)
{
        struct kb_kube *k = c->k;
        const struct kb_kube_config *cfg = &k->cfg;
        exec_refresh(k);
        CURL *e = k->nspare ? k->spare[--k->nspare] : curl_easy_init();
        if (!e)
                kb_die("curl_easy_init failed");
        c->easy = e;
        kb_buf_reset(&c->resp);
        c->retry_after = 0;
        curl_easy_setopt(e, CURLOPT_URL, c->url);
        curl_easy_setopt(e, CURLOPT_PRIVATE, c);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(KB_MIN(c->timeout, 10.0) * 1000));
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->timeout * 1000));
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        /* Over HTTP/2 (TLS only) every request shares one connection rather
         * than each opening its own while the first is being set up. */
        if (!strncmp(c->url, "https:", 6))
                curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(e, CURLOPT_USERAGENT, k->user_agent);
        curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
        if (cfg->insecure) {
                curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (cfg->ca_file)
                curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
        if (cfg->ca_data) {
                struct curl_blob b = {cfg->ca_data, cfg->ca_len, CURL_BLOB_COPY};
                curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
        }
        if (cfg->cert_file)
                curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->cert_file);
        if (cfg->cert_data) {
                struct curl_blob b = {cfg->cert_data, cfg->cert_len, CURL_BLOB_COPY};
                curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
                curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        }
        if (cfg->key_file)
                curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->key_file);
        if (cfg->key_data) {
                struct curl_blob b = {cfg->key_data, cfg->key_len, CURL_BLOB_COPY};
                curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
                curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
        }
        if (k->have_cred && k->cred.cert) {
                struct curl_blob cb = {k->cred.cert, k->cred.cert_len, CURL_BLOB_COPY};
                struct curl_blob kb = {k->cred.key, k->cred.key_len, CURL_BLOB_COPY};
                curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
                curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
                curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
                curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
        }
        curl_slist_free_all(c->hdrs);
        c->hdrs = curl_slist_append(NULL, "Accept: application/json");
        const char *tok = k->have_cred && k->cred.token ? k->cred.token : current_token(k);
        if (tok && *tok) {
                char *h = kb_xasprintf("Authorization: Bearer %s", tok);
                c->hdrs = curl_slist_append(c->hdrs, h);
                memset(h, 0, strlen(h));
                free(h);
        }
        if (c->body) {
                char *h = kb_xasprintf("Content-Type: %s",
                                       c->content_type ? c->content_type : "application/json");
                c->hdrs = curl_slist_append(c->hdrs, h);
                free(h);
                curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
                curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(c->body));
        }
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->hdrs);
        if (strcmp(c->method, "GET") && strcmp(c->method, "POST"))
                curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, c->method);
        else if (!strcmp(c->method, "POST") && !c->body)
                curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
}

/*
 * The HTTP client: libcurl's multi interface driven by a libuv loop.
 *
 * curl tells us which sockets to watch (socket_cb) and when to call it back
 * (timer_cb); libuv tells curl when a socket is ready (poll_cb) or the timer
 * fires (on_timeout).  One uv_poll_t per socket, attached to curl's socket
 * with curl_multi_assign; a poll error is passed on as CURL_CSELECT_ERR; a
 * 0 ms timeout becomes 1 ms so the loop never spins inside a callback; and
 * every socket_action is followed by reading curl's finished transfers.
 *
 * A call lives from kb_kube_request until its done callback (or cancel).
 * Its uv_timer_t serves the rate limiter and the retry backoff; the call is
 * freed in that timer's close callback, so nothing outlives its handle.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "kube/kube.h"

enum call_state {
        CALL_WAITING, /* for a rate-limiter token or a backoff timer */
        CALL_RUNNING,
        CALL_DONE,
};

struct kb_kube_call {
        struct kb_kube *k;
        struct kb_kube_call *prev, *next; /* every live call */
        struct kb_kube_call *qnext;       /* the rate limiter's queue */
        uv_timer_t timer;
        CURL *easy;
        struct curl_slist *hdrs;
        char method[8];
        char *url;
        char *path; /* for logs: the path without the query */
        char *body;
        char *content_type;
        bool stream;
        double timeout;
        int attempt, max_attempts;
        double retry_after;
        enum call_state state;
        bool queued;
        bool active;    /* a transfer counted against MAX_ACTIVE */
        bool in_write;  /* inside write_cb: curl must not be touched */
        bool cancelled; /* cancelled from a line callback; reaped in finish */
        kb_kube_done_fn done;
        kb_kube_line_fn line;
        void *arg;
        struct kb_buf resp;
};

struct stat_entry {
        char verb[8];
        long code;
        uint64_t n;
};

struct kb_kube {
        uv_loop_t *loop;
        CURLM *multi;
        uv_timer_t curl_timer;
        uv_timer_t rl_timer;
        int open_handles; /* curl_timer, rl_timer and socket polls not closed yet */
        struct kb_kube_config cfg;
        struct kb_kube_opts opts;
        char user_agent[64];
        double tokens, last_refill;
        struct kb_kube_call *qhead, *qtail;
        struct kb_kube_call *calls;
        struct sock_ctx *socks;
        size_t inflight;
        size_t active; /* non-watch transfers inside curl */
        bool freeing;
        char *token;
        double token_read;
        struct timespec token_mtime;
        /* The exec plugin's last answer (cfg.has_exec). */
        struct kb_kube_cred cred;
        bool have_cred;
        double cred_failed; /* monotonic time of the last failed run, 0 if none */
        uint64_t rnd;
        pthread_mutex_t stats_lock;
        struct stat_entry *stats;
        size_t nstats, capstats;
};

struct sock_ctx {
        uv_poll_t poll;
        struct kb_kube *k;
        curl_socket_t fd;
        struct sock_ctx *prev, *next;
};

static void check_info(struct kb_kube *k);
static void start_transfer(struct kb_kube_call *c);
static void rl_kick(struct kb_kube *k);

bool kb_kube_retryable(long status)
{
        return status == 0 || status == 429 || status >= 500;
}

double kb_kube_backoff(int n, double base, double cap, double rnd)
{
        double d = base;
        for (int i = 1; i < n && d < cap; i++)
                d *= 2;
        if (d > cap)
                d = cap;
        return d * (0.5 + rnd);
}

static double rand01(struct kb_kube *k)
{
        k->rnd ^= k->rnd << 13;
        k->rnd ^= k->rnd >> 7;
        k->rnd ^= k->rnd << 17;
        return (double)(k->rnd >> 11) / 9007199254740992.0;
}

/* ---- stats ----------------------------------------------------------------- */

static void stat_add(struct kb_kube *k, const char *verb, long code)
{
        pthread_mutex_lock(&k->stats_lock);
        for (size_t i = 0; i < k->nstats; i++) {
                if (k->stats[i].code == code && !strcmp(k->stats[i].verb, verb)) {
                        k->stats[i].n++;
                        goto out;
                }
        }
        struct stat_entry e = {.code = code, .n = 1};
        snprintf(e.verb, sizeof(e.verb), "%s", verb);
        KB_PUSH(k->stats, k->nstats, k->capstats, e);
out:
        pthread_mutex_unlock(&k->stats_lock);
}

void kb_kube_stats(struct kb_kube *k, kb_kube_stat_fn fn, void *arg)
{
        pthread_mutex_lock(&k->stats_lock);
        for (size_t i = 0; i < k->nstats; i++)
                fn(arg, k->stats[i].verb, k->stats[i].code, k->stats[i].n);
        pthread_mutex_unlock(&k->stats_lock);
}

/* ---- curl <-> libuv ---------------------------------------------------------- */

static void handle_gone(struct kb_kube *k)
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

static void handle_closed(uv_handle_t *h)
{
        handle_gone(h->data);
}

static void sock_closed(uv_handle_t *h)
{
        struct sock_ctx *s = (struct sock_ctx *)h;
        struct kb_kube *k = s->k;
        free(s);
        handle_gone(k);
}

static void poll_cb(uv_poll_t *p, int status, int events)
{
        struct sock_ctx *s = (struct sock_ctx *)p;
        int flags = 0, running;
        if (status < 0)
                flags = CURL_CSELECT_ERR;
        else {
                if (events & UV_READABLE)
                        flags |= CURL_CSELECT_IN;
                if (events & UV_WRITABLE)
                        flags |= CURL_CSELECT_OUT;
        }
        curl_multi_socket_action(s->k->multi, s->fd, flags, &running);
        check_info(s->k);
}

static void sock_drop(struct kb_kube *k, struct sock_ctx *s)
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
        struct sock_ctx *s = socketp;
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
        curl_multi_socket_action(k->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        check_info(k);
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

/* ---- calls --------------------------------------------------------------------- */

/*
 * At most this many requests (watches aside) are inside curl at once; the
 * rest wait in the rate limiter's queue.  Without the window, a session's
 * thousands of binds would all wait inside curl for one of its connections
 * (CURLMOPT_MAX_HOST_CONNECTIONS), and curl's per-request timeout, which
 * counts that wait, would expire them before they were sent.
 */
#define MAX_ACTIVE 64

static void deactivate(struct kb_kube_call *c)
{
        if (c->active) {
                c->active = false;
                c->k->active--;
        }
}

static void call_closed(uv_handle_t *h)
{
        struct kb_kube_call *c = h->data;
        struct kb_kube *k = c->k;
        free(c->url);
        free(c->path);
        free(c->body);
        free(c->content_type);
        kb_buf_release(&c->resp);
        free(c);
        handle_gone(k);
}

static void rl_unqueue(struct kb_kube *k, struct kb_kube_call *c)
{
        if (!c->queued)
                return;
        struct kb_kube_call **pp = &k->qhead;
        k->qtail = NULL;
        while (*pp) {
                if (*pp == c)
                        *pp = c->qnext;
                else {
                        k->qtail = *pp;
                        pp = &(*pp)->qnext;
                }
        }
        c->queued = false;
}

/* Takes a call out of everything and frees it (through its timer's close). */
static void call_dispose(struct kb_kube_call *c)
{
        struct kb_kube *k = c->k;
        if (c->easy) {
                curl_multi_remove_handle(k->multi, c->easy);
                curl_easy_cleanup(c->easy);
                c->easy = NULL;
        }
        deactivate(c);
        curl_slist_free_all(c->hdrs);
        c->hdrs = NULL;
        rl_unqueue(k, c);
        if (c->prev)
                c->prev->next = c->next;
        else
                k->calls = c->next;
        if (c->next)
                c->next->prev = c->prev;
        if (c->state != CALL_DONE)
                k->inflight--;
        c->state = CALL_DONE;
        uv_timer_stop(&c->timer);
        uv_close((uv_handle_t *)&c->timer, call_closed);
        if (!k->freeing)
                rl_kick(k); /* a place in the window may have opened */
}

void kb_kube_cancel(struct kb_kube_call *c)
{
        if (!c)
                return;
        if (c->in_write) {
                c->cancelled = true;
                return;
        }
        call_dispose(c);
}

uv_loop_t *kb_kube_loop(struct kb_kube *k)
{
        return k->loop;
}

size_t kb_kube_inflight(const struct kb_kube *k)
{
        return k->inflight;
}

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

static size_t header_cb(char *data, size_t size, size_t n, void *arg)
{
        struct kb_kube_call *c = arg;
        size_t len = size * n;
        if (len > 12 && !strncasecmp(data, "retry-after:", 12)) {
                double v = atof(data + 12);
                if (v > 0)
                        c->retry_after = KB_MIN(v, 60.0);
        }
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

static double wall_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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
        if (k->have_cred && (k->cred.expiry == 0 || wall_now() < k->cred.expiry))
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

static void setup_easy(struct kb_kube_call *c)
{
        struct kb_kube *k = c->k;
        const struct kb_kube_config *cfg = &k->cfg;
        exec_refresh(k);
        CURL *e = curl_easy_init();
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
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->timeout * 1000));
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
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

static void start_transfer(struct kb_kube_call *c)
{
        c->state = CALL_RUNNING;
        c->attempt++;
        if (!c->stream) {
                c->active = true;
                c->k->active++;
        }
        setup_easy(c);
        KB_V(4, "%s %s (attempt %d)", c->method, c->path, c->attempt);
        curl_multi_add_handle(c->k->multi, c->easy);
}

/* ---- rate limiting -------------------------------------------------------------- */

static void rl_refill(struct kb_kube *k)
{
        double now = kb_now_mono();
        k->tokens += (now - k->last_refill) * k->opts.qps;
        if (k->tokens > k->opts.burst)
                k->tokens = k->opts.burst;
        k->last_refill = now;
}

static void rl_timer_cb(uv_timer_t *t)
{
        rl_kick(t->data);
}

/* Starts queued calls while tokens last, then arms the timer for the next. */
static void rl_kick(struct kb_kube *k)
{
        rl_refill(k);
        while (k->qhead && k->tokens >= 1 && (k->qhead->stream || k->active < MAX_ACTIVE)) {
                struct kb_kube_call *c = k->qhead;
                k->qhead = c->qnext;
                if (!k->qhead)
                        k->qtail = NULL;
                c->queued = false;
                k->tokens -= 1;
                start_transfer(c);
        }
        /* Short of tokens: wait for the next one.  Short of window: the
         * next transfer to end kicks the queue. */
        if (k->qhead && k->tokens < 1) {
                double wait = (1 - k->tokens) / k->opts.qps;
                uv_timer_start(&k->rl_timer, rl_timer_cb, (uint64_t)(wait * 1000) + 1, 0);
        }
}

static void rl_submit(struct kb_kube_call *c)
{
        struct kb_kube *k = c->k;
        c->state = CALL_WAITING;
        c->qnext = NULL;
        c->queued = true;
        if (k->qtail)
                k->qtail->qnext = c;
        else
                k->qhead = c;
        k->qtail = c;
        rl_kick(k);
}

static void backoff_fired(uv_timer_t *t)
{
        rl_submit(t->data);
}

/* ---- completion ---------------------------------------------------------------- */

static void finish(struct kb_kube_call *c, CURLcode res)
{
        struct kb_kube *k = c->k;
        long status = 0;
        if (c->cancelled) {
                call_dispose(c);
                return;
        }
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
        if (res != CURLE_OK && !c->stream)
                status = 0; /* a partial answer is no answer */
        stat_add(k, c->stream ? "WATCH" : c->method, res == CURLE_OK || c->stream ? status : 0);
        curl_multi_remove_handle(k->multi, c->easy);
        curl_easy_cleanup(c->easy);
        c->easy = NULL;
        deactivate(c);
        /* As client-go: a 401 with an exec credential means it no longer
         * works; the next request runs the plugin again. */
        if (status == 401 && k->have_cred)
                k->cred.expiry = 1;

        if (!c->stream && kb_kube_retryable(status) && c->attempt < c->max_attempts) {
                double d = kb_kube_backoff(c->attempt, 0.2, 10.0, rand01(k));
                if (status == 429 && c->retry_after > 0)
                        d = c->retry_after;
                if (status)
                        KB_V(2, "%s %s: %ld, retrying in %.2fs", c->method, c->path, status, d);
                else
                        KB_V(2, "%s %s: %s, retrying in %.2fs", c->method, c->path,
                             curl_easy_strerror(res), d);
                c->state = CALL_WAITING;
                uv_timer_start(&c->timer, backoff_fired, (uint64_t)(d * 1000), 0);
                rl_kick(k);
                return;
        }
        struct kb_kube_resp r = {
            .status = status,
            .curl_code = (int)res,
            .error = res == CURLE_OK ? NULL : curl_easy_strerror(res),
            .body = c->resp.data,
            .len = c->resp.len,
            .attempts = c->attempt,
        };
        kb_kube_done_fn done = c->done;
        void *arg = c->arg;
        /* Leave the call list first so done may start new calls freely; the
         * body lives until the timer's close callback. */
        call_dispose(c);
        if (done)
                done(arg, &r);
}

static void check_info(struct kb_kube *k)
{
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(k->multi, &left))) {
                if (m->msg != CURLMSG_DONE)
                        continue;
                struct kb_kube_call *c = NULL;
                curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
                finish(c, m->data.result);
        }
}

/* ---- public ---------------------------------------------------------------------- */

static struct kb_kube_call *new_call(struct kb_kube *k, const char *method, const char *path)
{
        struct kb_kube_call *c = kb_xcalloc(1, sizeof(*c));
        c->k = k;
        snprintf(c->method, sizeof(c->method), "%s", method);
        c->url = kb_xasprintf("%s%s", k->cfg.server, path);
        c->path = kb_xstrndup(path, strcspn(path, "?"));
        kb_buf_init(&c->resp);
        uv_timer_init(k->loop, &c->timer);
        c->timer.data = c;
        k->open_handles++;
        c->next = k->calls;
        if (k->calls)
                k->calls->prev = c;
        k->calls = c;
        k->inflight++;
        return c;
}

struct kb_kube_call *kb_kube_request(struct kb_kube *k, const struct kb_kube_req *req,
                                     kb_kube_done_fn done, void *arg)
{
        if (k->freeing)
                kb_die("kb_kube_request %s %s while the client is being freed", req->method,
                       req->path);
        struct kb_kube_call *c = new_call(k, req->method, req->path);
        c->body = req->body ? kb_xstrdup(req->body) : NULL;
        c->content_type = req->content_type ? kb_xstrdup(req->content_type) : NULL;
        c->timeout = k->opts.timeout;
        c->max_attempts = req->max_attempts > 0 ? req->max_attempts : k->opts.max_attempts;
        c->done = done;
        c->arg = arg;
        rl_submit(c);
        return c;
}

struct kb_kube_call *kb_kube_watch(struct kb_kube *k, const char *path, double timeout,
                                   kb_kube_line_fn line, kb_kube_done_fn done, void *arg)
{
        struct kb_kube_call *c = new_call(k, "GET", path);
        c->stream = true;
        c->timeout = timeout;
        c->max_attempts = 1;
        c->line = line;
        c->done = done;
        c->arg = arg;
        start_transfer(c);
        return c;
}

static void global_init(void)
{
        curl_global_init(CURL_GLOBAL_ALL);
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
        if (cfg->has_exec) {
                kb_kube_exec_copy(&k->cfg.exec, &cfg->exec);
                k->cfg.has_exec = true;
        }
        k->multi = curl_multi_init();
        curl_multi_setopt(k->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        curl_multi_setopt(k->multi, CURLMOPT_SOCKETDATA, k);
        curl_multi_setopt(k->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        curl_multi_setopt(k->multi, CURLMOPT_TIMERDATA, k);
        curl_multi_setopt(k->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
        curl_multi_setopt(k->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 32L);
        uv_timer_init(loop, &k->curl_timer);
        uv_timer_init(loop, &k->rl_timer);
        k->curl_timer.data = k;
        k->rl_timer.data = k;
        k->open_handles = 2;
        return k;
}

void kb_kube_free(struct kb_kube *k)
{
        if (!k)
                return;
        k->freeing = true;
        while (k->calls) {
                struct kb_kube_call *c = k->calls;
                kb_kube_done_fn done = c->stream ? NULL : c->done;
                void *arg = c->arg;
                call_dispose(c);
                if (done) {
                        struct kb_kube_resp r = {
                            .error = "cancelled", .body = "", .cancelled = true};
                        done(arg, &r);
                }
        }
        /* Cleanup closes curl's sockets, which calls socket_cb with REMOVE
         * and closes their poll handles. */
        curl_multi_cleanup(k->multi);
        k->multi = NULL;
        while (k->socks)
                sock_drop(k, k->socks);
        uv_close((uv_handle_t *)&k->curl_timer, handle_closed);
        uv_close((uv_handle_t *)&k->rl_timer, handle_closed);
}

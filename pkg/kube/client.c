/*
 * The HTTP client's calls: lanes, the rate limiter, the window, retries and
 * completion (curl's side is in transport.c).
 *
 * A call lives from kb_kube_request until its done callback (or cancel).
 * It waits in its lane's queue (QUEUED) until it is the first of the
 * highest lane that may go — a token (lease aside), a place in the window
 * (lease aside), the lane's own cap, and the fence for fenced lanes — then
 * runs inside curl (RUNNING).  A retryable failure parks it on its timer
 * (BACKOFF) and then puts it back at the tail of its lane.  Its uv_timer_t
 * serves the backoff; the call is freed in that timer's close callback, so
 * nothing outlives its handle.
 *
 * For example, with a window of 2, binds b1..b3 and an event e1 queued and
 * a lease renewal l1 arriving last: b1 and b2 go; l1 goes at once (outside
 * the window); when b1 answers, b3 goes, and e1 only after b2 or b3 does.
 *
 * kube.c makes a client, path.c checks the paths it is asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/kube-int.h"

static const struct {
        const char *name;
        int prio;
        bool fenced;
} lane_info[KB_KUBE_NLANES] = {
#define KB_KUBE_LANE_INFO(id, name, prio, fenced) [KB_KUBE_LANE_##id] = {name, prio, fenced},
    KB_KUBE_LANES(KB_KUBE_LANE_INFO)
#undef KB_KUBE_LANE_INFO
};

static void kick(struct kb_kube *k);

const char *kb_kube_lane_name(enum kb_kube_lane lane)
{
        return (unsigned)lane < KB_KUBE_NLANES ? lane_info[lane].name : "?";
}

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
        struct kb__stat e = {.code = code, .n = 1};
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

/* ---- lanes ----------------------------------------------------------------------- */

static void lane_push(struct kb_kube *k, struct kb_kube_call *c)
{
        struct kb__lane *l = &k->lanes[c->lane];
        c->state = KB__CALL_QUEUED;
        c->qnext = NULL;
        c->qprev = l->tail;
        if (l->tail)
                l->tail->qnext = c;
        else
                l->head = c;
        l->tail = c;
        l->waiting++;
}

static void lane_unlink(struct kb_kube *k, struct kb_kube_call *c)
{
        struct kb__lane *l = &k->lanes[c->lane];
        if (c->qprev)
                c->qprev->qnext = c->qnext;
        else
                l->head = c->qnext;
        if (c->qnext)
                c->qnext->qprev = c->qprev;
        else
                l->tail = c->qprev;
        c->qprev = c->qnext = NULL;
        l->waiting--;
}

/* Whether the call counts against the window (and takes a token). */
static bool windowed(const struct kb_kube_call *c)
{
        return !c->stream && c->lane != KB_KUBE_LANE_LEASE;
}

static void deactivate(struct kb_kube_call *c)
{
        struct kb_kube *k = c->k;
        if (!c->active)
                return;
        c->active = false;
        k->lanes[c->lane].active--;
        if (windowed(c))
                k->active--;
        if (lane_info[c->lane].fenced)
                k->fenced_wire--;
}

static void start_transfer(struct kb_kube_call *c)
{
        struct kb_kube *k = c->k;
        c->state = KB__CALL_RUNNING;
        c->attempt++;
        c->active = true;
        k->lanes[c->lane].active++;
        if (windowed(c))
                k->active++;
        if (lane_info[c->lane].fenced)
                k->fenced_wire++;
        kb__kube_setup_easy(c);
        KB_V(4, "%s %s (attempt %d, %s)", c->method, c->path, c->attempt, lane_info[c->lane].name);
        curl_multi_add_handle(k->multi, c->easy);
}

/* ---- calls --------------------------------------------------------------------- */

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
        kb__kube_handle_gone(k);
}

/* Takes a call out of everything and frees it (through its timer's
 * close); kick says whether to start what may go now. */
static void call_dispose(struct kb_kube_call *c, bool kick_after)
{
        struct kb_kube *k = c->k;
        if (c->easy) {
                curl_multi_remove_handle(k->multi, c->easy);
                kb__kube_easy_put(k, c->easy);
                c->easy = NULL;
        }
        deactivate(c);
        curl_slist_free_all(c->hdrs);
        c->hdrs = NULL;
        if (c->state == KB__CALL_QUEUED)
                lane_unlink(k, c);
        if (c->prev)
                c->prev->next = c->next;
        else
                k->calls = c->next;
        if (c->next)
                c->next->prev = c->prev;
        if (c->state != KB__CALL_DONE)
                k->inflight--;
        c->state = KB__CALL_DONE;
        uv_timer_stop(&c->timer);
        uv_close((uv_handle_t *)&c->timer, call_closed);
        if (kick_after && !k->freeing)
                kick(k); /* a place in the window may have opened */
}

void kb_kube_cancel(struct kb_kube_call *c)
{
        if (!c)
                return;
        if (c->in_write) {
                c->cancelled = true;
                return;
        }
        call_dispose(c, true);
}

bool kb_kube_supersede(struct kb_kube_call *c)
{
        if (!c || (c->state != KB__CALL_QUEUED && c->state != KB__CALL_BACKOFF))
                return false;
        call_dispose(c, true);
        return true;
}

uv_loop_t *kb_kube_loop(struct kb_kube *k)
{
        return k->loop;
}

size_t kb_kube_inflight(const struct kb_kube *k)
{
        return k->inflight;
}

size_t kb_kube_waiting(const struct kb_kube *k, enum kb_kube_lane lane)
{
        return k->lanes[lane].waiting;
}

bool kb_kube_lane_full(const struct kb_kube *k, enum kb_kube_lane lane)
{
        const struct kb__lane *l = &k->lanes[lane];
        return l->backlog && l->waiting >= l->backlog;
}

/* ---- ends that are not answers ------------------------------------------------ */

struct victim {
        kb_kube_done_fn done;
        void *arg;
};

/* Disposes the calls (none may be a stream), then runs their callbacks
 * with cancelled set; the lanes are kicked once, after. */
static void end_calls(struct kb_kube *k, struct kb_kube_call **v, size_t n)
{
        struct victim *cb = kb_xmalloc((n + 1) * sizeof(*cb));
        for (size_t i = 0; i < n; i++) {
                cb[i].done = v[i]->done;
                cb[i].arg = v[i]->arg;
                call_dispose(v[i], false);
        }
        struct kb_kube_resp r = {.error = "dropped", .body = "", .cancelled = true};
        for (size_t i = 0; i < n; i++)
                if (cb[i].done)
                        cb[i].done(cb[i].arg, &r);
        free(cb);
        kick(k);
}

unsigned kb_kube_fenced_lanes(void)
{
        unsigned m = 0;
        for (int i = 0; i < KB_KUBE_NLANES; i++)
                if (lane_info[i].fenced)
                        m |= 1u << i;
        return m;
}

size_t kb_kube_drop(struct kb_kube *k, unsigned lanes, bool wire)
{
        size_t n = 0, cap = 0;
        struct kb_kube_call **v = NULL;
        for (struct kb_kube_call *c = k->calls; c; c = c->next)
                if (!c->stream && (lanes & (1u << c->lane)) &&
                    (wire || c->state != KB__CALL_RUNNING))
                        KB_PUSH(v, n, cap, c);
        if (n)
                end_calls(k, v, n);
        free(v);
        return n;
}

void kb__kube_fence_check(struct kb_kube *k)
{
        if (!k->fenced_wire || !k->fence || k->fence(k->fence_arg))
                return;
        size_t n = 0, cap = 0;
        struct kb_kube_call **v = NULL;
        for (struct kb_kube_call *c = k->calls; c; c = c->next)
                if (c->state == KB__CALL_RUNNING && lane_info[c->lane].fenced)
                        KB_PUSH(v, n, cap, c);
        KB_V(1, "fence closed: aborting %zu requests on the wire", n);
        end_calls(k, v, n);
        free(v);
}

void kb_kube_set_fence(struct kb_kube *k, kb_kube_fence_fn fn, void *arg)
{
        k->fence = fn;
        k->fence_arg = arg;
        kick(k);
}

/* ---- rate limiting and priorities ------------------------------------------------ */

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
        kick(t->data);
}

/* The first waiting call that may go now, in strict lane priority; sets
 * *short_of_token when the best one waits only for a token (then nothing
 * below it goes either). */
static struct kb_kube_call *next_call(struct kb_kube *k, bool fence_open, bool *short_of_token)
{
        for (int p = 0; p < KB_KUBE_NLANES; p++) {
                for (int i = 0; i < KB_KUBE_NLANES; i++) {
                        if (lane_info[i].prio != p)
                                continue;
                        struct kb__lane *l = &k->lanes[i];
                        if (!l->head)
                                continue;
                        if (i == KB_KUBE_LANE_LEASE)
                                return l->head;
                        if (lane_info[i].fenced && !fence_open)
                                continue;
                        if (k->active >= (size_t)k->window ||
                            (l->max_active && l->active >= l->max_active))
                                continue;
                        if (k->tokens < 1) {
                                *short_of_token = true;
                                return NULL;
                        }
                        return l->head;
                }
        }
        return NULL;
}

/* Starts what may go, then arms the timer for the next token.  Short of a
 * window place, the next transfer to end kicks again. */
static void kick(struct kb_kube *k)
{
        if (k->freeing)
                return;
        rl_refill(k);
        bool fence_open = !k->fence || k->fence(k->fence_arg);
        bool short_of_token = false;
        struct kb_kube_call *c;
        while ((c = next_call(k, fence_open, &short_of_token))) {
                lane_unlink(k, c);
                if (windowed(c))
                        k->tokens -= 1;
                start_transfer(c);
        }
        if (short_of_token) {
                double wait = (1 - k->tokens) / k->opts.qps;
                uv_timer_start(&k->rl_timer, rl_timer_cb, (uint64_t)(wait * 1000) + 1, 0);
        }
}

static void backoff_fired(uv_timer_t *t)
{
        struct kb_kube_call *c = t->data;
        lane_push(c->k, c);
        kick(c->k);
}

/* ---- completion ---------------------------------------------------------------- */

/*
 * The window adapts to the server, as TCP's congestion window does: every
 * answer that is not a refusal widens it by 1/window (one place per
 * window of answers), up to max_active; a 429 (API Priority and Fairness,
 * or max-requests-inflight, saying the server is saturated) halves it, at
 * most once a second, down to MIN_WINDOW.  So against a slow or busy
 * server the client keeps few requests in flight, and its rate follows
 * what the server answers, whatever the token bucket would allow.
 */
#define MIN_WINDOW 2.0

static void adapt_window(struct kb_kube *k, long status)
{
        if (status == 429) {
                double now = kb_now_mono();
                if (now - k->window_cut < 1.0)
                        return;
                k->window_cut = now;
                k->window = KB_MAX(MIN_WINDOW, k->window / 2);
                KB_V(1, "the server refuses requests (429): window down to %.0f", k->window);
                return;
        }
        if (status > 0 && k->window < k->opts.max_active)
                k->window = KB_MIN((double)k->opts.max_active, k->window + 1 / k->window);
}

double kb_kube_window(const struct kb_kube *k)
{
        return k->window;
}

static void finish(struct kb_kube_call *c, CURLcode res)
{
        struct kb_kube *k = c->k;
        long status = 0;
        if (c->cancelled) {
                call_dispose(c, true);
                return;
        }
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
        if (res != CURLE_OK && !c->stream)
                status = 0; /* a partial answer is no answer */
        stat_add(k, c->stream ? "WATCH" : c->method, res == CURLE_OK || c->stream ? status : 0);
        curl_multi_remove_handle(k->multi, c->easy);
        kb__kube_easy_put(k, c->easy);
        c->easy = NULL;
        /* A 429 that answers the request itself says nothing of the
         * server's load. */
        bool refused = status == 429 && c->final_429;
        if (windowed(c) && !refused)
                adapt_window(k, status);
        deactivate(c);
        /* As client-go: a 401 with an exec credential means it no longer
         * works; the next request runs the plugin again. */
        if (status == 401 && k->have_cred)
                k->cred.expiry = 1;

        if (!c->stream && !refused && kb_kube_retryable(status) && c->attempt < c->max_attempts) {
                double d = kb_kube_backoff(c->attempt, 0.2, 10.0, rand01(k));
                if (status == 429 && c->retry_after > 0)
                        d = c->retry_after;
                if (status)
                        KB_V(2, "%s %s: %ld, retrying in %.2fs", c->method, c->path, status, d);
                else
                        KB_V(2, "%s %s: %s, retrying in %.2fs", c->method, c->path,
                             curl_easy_strerror(res), d);
                c->state = KB__CALL_BACKOFF;
                uv_timer_start(&c->timer, backoff_fired, (uint64_t)(d * 1000), 0);
                kick(k);
                return;
        }
        struct kb_kube_resp r = {
            .status = status,
            .curl_code = (int)res,
            .error = res == CURLE_OK ? NULL : curl_easy_strerror(res),
            .body = c->resp.data ? c->resp.data : "",
            .len = c->resp.len,
            .attempts = c->attempt,
        };
        kb_kube_done_fn done = c->done;
        void *arg = c->arg;
        /* Leave the call list first so done may start new calls freely; the
         * body lives until the timer's close callback. */
        call_dispose(c, true);
        if (done)
                done(arg, &r);
}

void kb__kube_check_info(struct kb_kube *k)
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

static void refused_fired(uv_timer_t *t)
{
        struct kb_kube_call *c = t->data;
        struct kb_kube_resp r = {
            .status = 400,
            .error = c->refused,
            .body = c->resp.data ? c->resp.data : "",
            .len = c->resp.len,
        };
        kb_kube_done_fn done = c->done;
        void *arg = c->arg;
        call_dispose(c, true);
        if (done)
                done(arg, &r);
}

/* A call whose path kb_kube_path_ok refuses: its answer is a Status of
 * 400, on the next loop turn, and it never reaches the wire. */
static bool refuse_path(struct kb_kube_call *c, const char *path)
{
        char why[160];
        if (kb_kube_path_ok(path, why, sizeof(why)))
                return false;
        snprintf(c->refused, sizeof(c->refused), "not sent: %s", why);
        KB_ERROR("%s %.*s: %s", c->method, (int)strcspn(path, "?"), path, c->refused);
        kb_buf_printf(&c->resp,
                      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                      "\"reason\":\"BadRequest\",\"code\":400,\"message\":\"%s\"}",
                      why);
        c->state = KB__CALL_BACKOFF;
        uv_timer_start(&c->timer, refused_fired, 0, 0);
        return true;
}

static struct kb_kube_call *new_call(struct kb_kube *k, const char *method, const char *path,
                                     enum kb_kube_lane lane)
{
        struct kb_kube_call *c = kb_xcalloc(1, sizeof(*c));
        c->k = k;
        snprintf(c->method, sizeof(c->method), "%s", method);
        c->lane = (unsigned)lane < KB_KUBE_NLANES ? lane : KB_KUBE_LANE_READ;
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
        struct kb_kube_call *c = new_call(k, req->method, req->path, req->lane);
        c->body = req->body ? kb_xstrdup(req->body) : NULL;
        c->content_type = req->content_type ? kb_xstrdup(req->content_type) : NULL;
        c->timeout = req->timeout > 0 ? req->timeout : k->opts.timeout;
        c->max_attempts = req->max_attempts > 0 ? req->max_attempts : k->opts.max_attempts;
        c->final_429 = req->final_429;
        c->done = done;
        c->arg = arg;
        if (refuse_path(c, req->path))
                return c;
        lane_push(k, c);
        kick(k);
        return c;
}

struct kb_kube_call *kb_kube_watch(struct kb_kube *k, const char *path, double timeout,
                                   kb_kube_line_fn line, kb_kube_done_fn done, void *arg)
{
        struct kb_kube_call *c = new_call(k, "GET", path, KB_KUBE_LANE_READ);
        c->stream = true;
        c->timeout = timeout;
        c->max_attempts = 1;
        c->line = line;
        c->done = done;
        c->arg = arg;
        if (!refuse_path(c, path))
                start_transfer(c);
        return c;
}

void kb_kube_free(struct kb_kube *k)
{
        if (!k)
                return;
        k->freeing = true;
        struct kb_kube_resp r = {.error = "cancelled", .body = "", .cancelled = true};
        while (k->calls) {
                struct kb_kube_call *c = k->calls;
                kb_kube_done_fn done = c->stream ? NULL : c->done;
                void *arg = c->arg;
                call_dispose(c, false);
                if (done)
                        done(arg, &r);
        }
        kb__kube_transport_close(k);
}

/*
 * Stopping the daemon, and the signals that ask for it.
 *
 * Signals are blocked before any thread starts, so every thread (libuv's
 * pool, libmicrohttpd's, curl's resolver threads) inherits the mask and
 * none is interrupted by them; one thread sigwaits for them and hands them
 * to the loop with uv_async_send, as kbatch-apiserver handles its own.
 *
 * Shutdown (SIGTERM, SIGINT) ends within STOP_LIMIT whatever is queued:
 * stop the timers (no new sessions) -> drop every write still waiting in
 * the client (binds, status, events: the next leader recomputes them) ->
 * give the binds and evictions on the wire STOP_GRACE to answer, then
 * abort them -> release the lease -> stop reflectors, the client and the
 * HTTP endpoints -> close the remaining handles -> the loop runs dry and
 * closes (after a session still running on its worker, whose result is
 * not dispatched).  A lost lease skips the grace and the release: nothing
 * more may leave, and the lease is not ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/scheduler-int.h"

static void close_all(struct kb_sched *s)
{
        if (s->closed)
                return;
        s->closed = true;
        /* The HTTP thread reads the client's stats: stop it first. */
        kb__http_stop(s);
        for (int i = 0; i < KB__NREFL; i++) {
                kb_reflector_free(s->refl[i]);
                s->refl[i] = NULL;
        }
        for (size_t i = 0; i < s->npod_refl; i++)
                kb_reflector_free(s->pod_refl[i]);
        free(s->pod_refl);
        s->pod_refl = NULL;
        s->npod_refl = 0;
        kb__workloads_stop(s);
        kb_kube_free(s->kube);
        s->kube = NULL;
        uv_close((uv_handle_t *)&s->tick, NULL);
        uv_close((uv_handle_t *)&s->lease_timer, NULL);
        uv_close((uv_handle_t *)&s->fence_timer, NULL);
        uv_close((uv_handle_t *)&s->stop_timer, NULL);
        uv_close((uv_handle_t *)&s->soon, NULL);
        uv_close((uv_handle_t *)&s->sig_async, NULL);
}

static void close_fired(uv_timer_t *t)
{
        close_all(t->data);
}

/* Closing frees the client, which must not happen inside one of its own
 * callbacks: do it from a fresh loop iteration (the tick timer is idle by
 * now). */
static void close_soon(struct kb_sched *s)
{
        uv_timer_start(&s->tick, close_fired, 0, 0);
}

static void released(struct kb_sched *s)
{
        close_soon(s);
}

/* Binds and evictions on the wire get this long to answer after a stop;
 * the whole stop never takes longer than STOP_LIMIT (the lease release
 * gets what is left, two requests of at most 0.4 s). */
#define STOP_GRACE 0.5
#define STOP_LIMIT 1.8

void kb__sched_settled(struct kb_sched *s)
{
        if (!s->stopping || s->closed)
                return;
        if (s->binds_inflight && !s->stop_grace_over)
                return; /* each answer calls back here */
        if (s->lease_inflight)
                return; /* the lease answer calls back here */
        if (s->leader && !s->lease_released) {
                kb__leader_release(s, released);
                return;
        }
        close_soon(s);
}

static void stop_fired(uv_timer_t *t)
{
        struct kb_sched *s = t->data;
        if (!s->stop_grace_over) {
                s->stop_grace_over = true;
                size_t n = kb_kube_drop(s->kube, kb_kube_fenced_lanes(), true);
                if (n)
                        KB_WARN("stop: %zu writes on the wire did not answer in %.1fs; aborted", n,
                                STOP_GRACE);
                uv_timer_start(&s->stop_timer, stop_fired,
                               (uint64_t)((STOP_LIMIT - STOP_GRACE) * 1000), 0);
                kb__sched_settled(s);
                return;
        }
        KB_WARN("stop: the lease release did not finish in time; closing");
        close_soon(s);
}

void kb__sched_stop(struct kb_sched *s, int code)
{
        if (s->stopping || s->closed)
                return;
        s->stopping = true;
        s->exit_code = code;
        uv_timer_stop(&s->tick);
        uv_timer_stop(&s->lease_timer);
        uv_timer_stop(&s->fence_timer);
        uv_timer_stop(&s->soon);
        unsigned fenced = kb_kube_fenced_lanes();
        size_t backlog = kb__binds_drop(s);
        if (code != 0) {
                /* A failure (the lease is lost): nothing more leaves. */
                s->stop_grace_over = true;
                size_t n = kb_kube_drop(s->kube, fenced, true);
                KB_INFO("stopping: %zu writes dropped", backlog + n);
                close_soon(s);
                return;
        }
        size_t n = kb_kube_drop(s->kube, fenced, false);
        KB_INFO("stopping: %zu queued writes dropped (%zu binds of the backlog), %zu binds on the "
                "wire",
                backlog + n, backlog, s->binds_inflight);
        uv_timer_start(&s->stop_timer, stop_fired, (uint64_t)(STOP_GRACE * 1000), 0);
        kb__sched_settled(s);
}

static void on_signal(struct kb_sched *s, int sig)
{
        KB_INFO("signal %d: stopping", sig);
        kb__sched_stop(s, 0);
}

/* Writes the cache as JSON to DIR/kbatch-cache-PID-TIME.json, 0600, never
 * through a symlink or over an existing file (O_NOFOLLOW | O_EXCL): the
 * dump directory defaults to the shared /tmp, where anyone could plant
 * a link under the predictable name. */
static void on_usr1(struct kb_sched *s)
{
        const char *dir = s->o->dump_dir ? s->o->dump_dir : getenv("TMPDIR");
        if (!dir || !*dir)
                dir = "/tmp";
        char *path =
            kb_xasprintf("%s/kbatch-cache-%d-%ld.json", dir, (int)getpid(), (long)time(NULL));
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                KB_ERROR("cache dump %s: %s%s", path, strerror(errno),
                         errno == EEXIST || errno == ELOOP ? " (not following or replacing it)"
                                                           : "");
                free(path);
                return;
        }
        char *json = kb_cache_dump_json(s->cache);
        size_t len = strlen(json), off = 0;
        int err = 0;
        while (off < len) {
                ssize_t n = write(fd, json + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        err = n < 0 ? errno : EIO;
                        break;
                }
                off += (size_t)n;
        }
        if (close(fd) != 0 && !err)
                err = errno;
        if (err)
                KB_ERROR("cache dump %s: %s", path, strerror(err));
        else
                KB_INFO("cache dumped to %s", path);
        free(path);
        free(json);
}

/* The loop's side: drain the pending signals (sends coalesce). */
void kb__sched_signals_arrived(uv_async_t *h)
{
        struct kb_sched *s = h->data;
        unsigned bits = __atomic_exchange_n(&s->sig_pending, 0, __ATOMIC_ACQ_REL);
        if (bits & (1u << SIGUSR1))
                on_usr1(s);
        if (bits & (1u << SIGTERM))
                on_signal(s, SIGTERM);
        if (bits & (1u << SIGINT))
                on_signal(s, SIGINT);
}

void kb__sched_signal_set(sigset_t *set)
{
        sigemptyset(set);
        sigaddset(set, SIGTERM);
        sigaddset(set, SIGINT);
        sigaddset(set, SIGUSR1);
}

/* The signal thread: waits for the blocked signals and hands them over.
 * It ends when the loop is gone (sig_async closed): the main thread then
 * sends it a SIGUSR1 of its own with sig_pending's top bit set. */
void *kb__sched_signal_thread(void *arg)
{
        struct kb_sched *s = arg;
        sigset_t set;
        kb__sched_signal_set(&set);
        for (;;) {
                int sig = 0;
                if (sigwait(&set, &sig) != 0)
                        continue;
                unsigned prev = __atomic_fetch_or(&s->sig_pending, 1u << sig, __ATOMIC_ACQ_REL);
                if (prev & (1u << 31))
                        return NULL;
                uv_async_send(&s->sig_async);
        }
}

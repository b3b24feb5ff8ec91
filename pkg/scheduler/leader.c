/*
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection does it, with a fence:
 *
 *  - every retry period, read the lease;
 *  - another holder's lease counts as expired when its record (holder and
 *    renewTime) has not changed for a lease duration *as observed here*, so
 *    clocks need not agree;
 *  - acquire or renew with an update that carries the resourceVersion read,
 *    so of two candidates only one wins (the other gets 409);
 *  - the fence: this process acts as the leader only while its last
 *    successful renew *left* less than the renew deadline ago.  A standby
 *    takes over no sooner than a lease duration after it saw that renew,
 *    which is later than when it left, so with renew deadline < lease
 *    duration the old leader's fence closes first, by at least their
 *    difference (5 s with the defaults).  A timer fires at the deadline
 *    even while a lease request is in flight, the client asks the fence
 *    before every fenced request and before touching a socket, so a
 *    process resumed after a long pause (SIGSTOP, a stalled VM) sends
 *    nothing more;
 *  - lease requests travel in the client's lease lane, ahead of every
 *    other request and outside the rate limit and the window;
 *  - a leader that loses the lease (the deadline passes, or the lease
 *    shows another holder) drops every queued write and exits 1 at once,
 *    as Volcano and kube-scheduler do, and the deployment restarts it.  A
 *    restart, rather than stepping back to standby, because the process
 *    holds state that assumed leadership (binds marked in the cache, the
 *    status it believes it wrote, event series), and a fresh list is the
 *    simple way to be sure none of it outlives the lease;
 *  - on a clean stop the leader releases the lease (empty holder) so the
 *    next one takes over at its next retry rather than after expiry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler-int.h"

static void lease_tick(uv_timer_t *t);

static char *lease_path(struct kb_sched *s, bool item)
{
        if (item)
                return kb_xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
                                    s->o->lock_namespace, s->o->lock_name);
        return kb_xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases",
                            s->o->lock_namespace);
}

bool kb__leading(struct kb_sched *s)
{
        if (!s->leader || (s->stopping && s->exit_code != 0))
                return false;
        return !s->o->leader_elect || kb_now_mono() - s->lease_renewed < s->o->renew_deadline;
}

static void set_leader(struct kb_sched *s, bool leader)
{
        if (leader == s->leader)
                return;
        s->leader = leader;
        kb__metrics_set_leader(s, leader);
        if (leader)
                KB_INFO("became the leader (lease %s/%s, identity %s)", s->o->lock_namespace,
                        s->o->lock_name, s->identity);
        else
                KB_INFO("no longer the leader");
}

void kb__leader_lost(struct kb_sched *s, const char *why)
{
        if (!s->leader)
                return;
        KB_ERROR("leader election lost: %s; dropping queued writes and exiting", why);
        set_leader(s, false);
        s->stop(s, 1);
}

/* Whether the renew deadline passed; if so, leadership is lost. */
static bool check_deadline(struct kb_sched *s)
{
        if (!s->leader || kb_now_mono() - s->lease_renewed < s->o->renew_deadline)
                return false;
        char why[96];
        snprintf(why, sizeof(why), "could not renew the lease for %.3gs", s->o->renew_deadline);
        kb__leader_lost(s, why);
        return true;
}

static void fence_fired(uv_timer_t *t)
{
        check_deadline(t->data);
}

/* Arms the fence timer for the deadline of the renew that just
 * succeeded. */
static void arm_fence(struct kb_sched *s)
{
        double left = s->lease_renewed + s->o->renew_deadline - kb_now_mono();
        uv_timer_start(&s->fence_timer, fence_fired, left > 0 ? (uint64_t)(left * 1000) + 1 : 0, 0);
}

/* The Lease ns/name as this candidate writes it: holder, acquire time
 * (now when NULL), renewed now, with rv (none when NULL) for optimistic
 * concurrency.  Caller frees. */
KB_TESTABLE char *kb__lease_body(const char *ns, const char *name, const char *rv,
                                 const char *holder, const char *acquire, int64_t transitions,
                                 int duration)
{
        char now[64];
        kb_now_micro_time(now, sizeof(now));
        struct kb_value *v = kb_value_new(KB_VOBJECT);
        kb_value_set(v, "apiVersion", kb_value_new_string("coordination.k8s.io/v1"));
        kb_value_set(v, "kind", kb_value_new_string("Lease"));
        struct kb_value *md = kb_value_ensure_object(v, "metadata");
        kb_value_set(md, "name", kb_value_new_string(name));
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        if (rv)
                kb_value_set(md, "resourceVersion", kb_value_new_string(rv));
        struct kb_value *sp = kb_value_ensure_object(v, "spec");
        kb_value_set(sp, "holderIdentity", kb_value_new_string(holder));
        kb_value_set(sp, "leaseDurationSeconds", kb_value_new_int(duration));
        kb_value_set(sp, "acquireTime", kb_value_new_string(acquire ? acquire : now));
        kb_value_set(sp, "renewTime", kb_value_new_string(now));
        /* An int32 in the API, never negative (ValidateLeaseSpec). */
        kb_value_set(sp, "leaseTransitions",
                     kb_value_new_int(transitions < 0 ? 0 : KB_MIN(transitions, INT32_MAX)));
        char *text = kb_json_emit(v, false);
        kb_value_free(v);
        return text;
}

static void lease_request(struct kb_sched *s, const char *method, bool item, const char *body,
                          kb_kube_done_fn done, void *arg)
{
        char *path = lease_path(s, item);
        /* A renew that takes longer than the deadline is no use. */
        struct kb_kube_req req = {.method = method,
                                  .path = path,
                                  .body = body,
                                  .max_attempts = 1,
                                  .lane = KB_KUBE_LANE_LEASE,
                                  .timeout = s->o->renew_deadline};
        s->lease_inflight = true;
        s->lease_sent = kb_now_mono();
        kb_kube_request(s->kube, &req, done, arg);
        free(path);
}

/* RBAC that does not fit is worth saying plainly (once a minute). */
static void forbidden_hint(struct kb_sched *s, long status)
{
        if (status != 403 || kb_now_mono() - s->lease_forbidden_warned < 60)
                return;
        s->lease_forbidden_warned = kb_now_mono();
        KB_WARN("lease %s/%s: forbidden: the scheduler needs get and update on this Lease, and "
                "create unless it exists (deploy/ creates it and grants the first two)",
                s->o->lock_namespace, s->o->lock_name);
}

static void lease_written(void *arg, const struct kb_kube_resp *r)
{
        struct kb_sched *s = arg;
        s->lease_inflight = false;
        if (r->cancelled)
                return;
        if (r->status == 200 || r->status == 201) {
                s->lease_renewed = s->lease_sent;
                set_leader(s, true);
                arm_fence(s);
        } else {
                KB_V(1, "lease update: %ld", r->status);
                forbidden_hint(s, r->status);
                if (r->status == 409)
                        kb__leader_lost(s, "another candidate updated the lease first");
                else
                        check_deadline(s);
        }
        s->settled(s);
}

/*
 * Reads a Lease as the API server sent it: 0 with l filled (its strings
 * point into l->doc, which the caller frees), or KB_EBADINPUT for a body
 * that is not JSON.  Absent fields read as NULL and 0.  leaseTransitions
 * is an int32 >= 0 in the API; what the server sends is kept within that,
 * and held as an int64, so one more for the next transition cannot
 * overflow (kb__lease_body keeps what it writes within it too).
 */
KB_TESTABLE int kb__lease_parse(const char *body, size_t len, struct kb__lease *l)
{
        memset(l, 0, sizeof(*l));
        if (kb_json_parse(body, len, &l->doc, NULL, 0))
                return KB_EBADINPUT;
        const struct kb_value *sp = kb_value_get(l->doc, "spec");
        l->holder = kb_value_str(kb_value_get(sp, "holderIdentity"));
        l->renew = kb_value_str(kb_value_get(sp, "renewTime"));
        l->acquire = kb_value_str(kb_value_get(sp, "acquireTime"));
        l->rv = kb_value_str(kb_value_dig(l->doc, "metadata", "resourceVersion", NULL));
        kb_value_int(kb_value_get(sp, "leaseTransitions"), &l->transitions);
        kb_value_int(kb_value_get(sp, "leaseDurationSeconds"), &l->duration);
        l->transitions = KB_MAX(0, KB_MIN(l->transitions, INT32_MAX));
        return 0;
}

static void lease_read(void *arg, const struct kb_kube_resp *r)
{
        struct kb_sched *s = arg;
        s->lease_inflight = false;
        if (r->cancelled)
                return;
        if (s->stopping) {
                s->settled(s);
                return;
        }
        if (check_deadline(s))
                return;
        int duration = (int)(s->o->lease_duration + 0.5);
        if (r->status == 404) {
                char *body = kb__lease_body(s->o->lock_namespace, s->o->lock_name, NULL,
                                            s->identity, NULL, 0, duration);
                lease_request(s, "POST", false, body, lease_written, s);
                free(body);
                return;
        }
        struct kb__lease l;
        if (r->status != 200 || kb__lease_parse(r->body, r->len, &l)) {
                KB_V(1, "lease read: %ld", r->status);
                forbidden_hint(s, r->status);
                return;
        }
        struct kb_value *doc = l.doc;
        const char *holder = l.holder, *renew = l.renew, *acquire = l.acquire, *rv = l.rv;
        int64_t trans = l.transitions, ldur = l.duration;
        double now = kb_now_mono();
        if (!kb_streq(holder, s->lease_holder) || !kb_streq(renew, s->lease_renew)) {
                free(s->lease_holder);
                free(s->lease_renew);
                s->lease_holder = holder ? kb_xstrdup(holder) : NULL;
                s->lease_renew = renew ? kb_xstrdup(renew) : NULL;
                s->lease_observed = now;
        }
        bool mine = kb_streq(holder, s->identity);
        bool free_lease = !holder || !*holder;
        if (s->leader && !mine) {
                kb_value_free(doc);
                kb__leader_lost(s, "the lease names another holder");
                return;
        }
        double dur = ldur > 0 ? (double)ldur : s->o->lease_duration;
        if (!mine && !free_lease && now - s->lease_observed < dur) {
                kb_value_free(doc);
                return;
        }
        char *body = kb__lease_body(s->o->lock_namespace, s->o->lock_name, rv, s->identity,
                                    mine ? acquire : NULL, trans + (mine ? 0 : 1), duration);
        lease_request(s, "PUT", true, body, lease_written, s);
        free(body);
        kb_value_free(doc);
}

static void lease_tick(uv_timer_t *t)
{
        struct kb_sched *s = t->data;
        /* The deadline first, whether or not a lease request is in flight. */
        if (s->stopping || check_deadline(s) || s->lease_inflight)
                return;
        lease_request(s, "GET", true, NULL, lease_read, s);
}

void kb__leader_start(struct kb_sched *s)
{
        s->lease_observed = kb_now_mono();
        uint64_t ms = (uint64_t)(s->o->retry_period * 1000);
        uv_timer_start(&s->lease_timer, lease_tick, 0, ms ? ms : 1000);
}

/* ---- release ------------------------------------------------------------------------ */

/* Each release request gets this long: a stop must end within 2 s. */
#define RELEASE_TIMEOUT 0.4

struct release_ctx {
        struct kb_sched *s;
        void (*done)(struct kb_sched *s);
};

static void released(void *arg, const struct kb_kube_resp *r)
{
        struct release_ctx *c = arg;
        if (r->cancelled) {
                free(c);
                return;
        }
        if (r->status == 200)
                KB_INFO("lease released");
        else
                KB_WARN("releasing the lease: %ld", r->status);
        c->s->lease_inflight = false;
        c->done(c->s);
        free(c);
}

static void release_read(void *arg, const struct kb_kube_resp *r)
{
        struct release_ctx *c = arg;
        struct kb_sched *s = c->s;
        struct kb__lease l = {0};
        if (r->cancelled) {
                free(c);
                return;
        }
        if (r->status != 200 || kb__lease_parse(r->body, r->len, &l) ||
            !kb_streq(l.holder, s->identity)) {
                kb_value_free(l.doc);
                s->lease_inflight = false;
                c->done(s);
                free(c);
                return;
        }
        struct kb_value *doc = l.doc;
        char *body =
            kb__lease_body(s->o->lock_namespace, s->o->lock_name, l.rv, "", NULL, l.transitions, 1);
        char *path = lease_path(s, true);
        struct kb_kube_req req = {.method = "PUT",
                                  .path = path,
                                  .body = body,
                                  .max_attempts = 1,
                                  .lane = KB_KUBE_LANE_LEASE,
                                  .timeout = RELEASE_TIMEOUT};
        kb_kube_request(s->kube, &req, released, c);
        free(path);
        free(body);
        kb_value_free(doc);
}

void kb__leader_release(struct kb_sched *s, void (*done)(struct kb_sched *s))
{
        s->lease_released = true;
        /* Past the renew deadline too: the write carries the version read
         * and only clears a lease that still names us. */
        if (!s->o->leader_elect || !s->leader) {
                done(s);
                return;
        }
        struct release_ctx *c = kb_xcalloc(1, sizeof(*c));
        c->s = s;
        c->done = done;
        char *path = lease_path(s, true);
        struct kb_kube_req req = {.method = "GET",
                                  .path = path,
                                  .max_attempts = 1,
                                  .lane = KB_KUBE_LANE_LEASE,
                                  .timeout = RELEASE_TIMEOUT};
        s->lease_inflight = true;
        kb_kube_request(s->kube, &req, release_read, c);
        free(path);
}

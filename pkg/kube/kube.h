/*
 * kube: a Kubernetes API client for the scheduler daemon — kubeconfig and
 * in-cluster configuration, an HTTP client on libcurl's multi interface
 * driven by a libuv loop, and reflectors (list, then watch) that keep a
 * consumer current.
 *
 * Threads.  Everything here except config loading runs on the loop thread
 * that owns the kb_kube: requests are started, and their callbacks run, on
 * that thread only.  kb_kube_stats is the one exception (it locks).
 *
 * Retries.  A request (not a watch) that fails to connect, times out, or is
 * answered 429 or 5xx is retried with exponential backoff and jitter, up to
 * its attempt limit; a 429's Retry-After sets the delay.  A request marked
 * final_429 takes a 429 as its answer instead (an eviction a disruption
 * budget refuses is answered 429 too, and asking again at once only asks
 * the budget again).
 *
 * Lanes.  Every request travels in a lane (kb_kube_lane).  Lanes are served
 * in strict priority: whenever a place opens, the first waiting request of
 * the highest lane goes.  The lease lane is outside every limit (no token,
 * no window); the others take a token from the client-side rate limiter
 * (qps, burst; retries too) and a place in a window of at most max_active
 * transfers on the wire, so a burst of binds never waits inside curl for a
 * connection and a lease request never waits behind one.  The window
 * halves when the server answers 429 and grows back one place per window
 * of answers.  Watches take neither, as they are long-lived.
 *
 * Fence.  Requests in fenced lanes (the writes a leader makes) leave only
 * while the fence function says so; it is asked before each one starts and
 * whenever curl is about to touch a socket, and a closed fence aborts the
 * fenced transfers still on the wire.
 *
 * Tokens never appear in logs: requests are logged by method and path only.
 */
#ifndef KB_PKG_KUBE_H
#define KB_PKG_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"
#include "value/value.h"

/* ---- configuration -------------------------------------------------------- */

/* A kubeconfig user's exec credential plugin (users[].user.exec). */
struct kb_kube_exec {
        char *api_version; /* client.authentication.k8s.io/v1 or v1beta1 */
        char *command;     /* a path (relative ones resolved against the
                            * kubeconfig's directory) or a name in PATH */
        char **args;
        size_t nargs;
        char **env; /* "NAME=value" */
        size_t nenv;
};

/* What a plugin answered.  PEM strings for the certificate and key. */
struct kb_kube_cred {
        char *token;
        char *cert;
        size_t cert_len;
        char *key;
        size_t key_len;
        double expiry; /* wall-clock seconds; 0 when the plugin gave none */
};

struct kb_kube_config {
        char *server; /* "https://host:port", no trailing slash */
        char *ca_file;
        char *ca_data; /* PEM, decoded from certificate-authority-data */
        size_t ca_len;
        char *cert_file;
        char *cert_data;
        size_t cert_len;
        char *key_file;
        char *key_data;
        size_t key_len;
        char *token;      /* a static token, or NULL */
        char *token_file; /* re-read when it changes (service account rotation) */
        bool insecure;    /* insecure-skip-tls-verify */
        char *namespace;  /* the context's namespace, or NULL */
        bool has_exec;
        struct kb_kube_exec exec; /* when has_exec */
        /* Send the token and run the exec plugin for a plain http:// server
         * too.  Without it kb_kube_new drops them for such a server, as
         * client-go does (it reads a user's credentials only when the
         * transport is TLS), and says so in a warning. */
        bool allow_insecure_token;
};

/*
 * Loads the client configuration as Volcano's flags do: with --kubeconfig
 * (kubeconfig non-NULL) that file, else $KUBECONFIG, else the in-cluster
 * service account when KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
 * context selects a context (NULL: current-context); master, when set,
 * overrides the server.  Returns 0, or KB_EBADINPUT with a message naming
 * the file and field in err.  Any thread.
 */
int kb_kube_config_load(const char *kubeconfig, const char *context, const char *master,
                        struct kb_kube_config *cfg, char *err, size_t errlen);
void kb_kube_config_release(struct kb_kube_config *cfg);
/* Parses a kubeconfig held in memory (text, len); file names it in
 * messages and anchors relative paths (its directory).  context as for
 * kb_kube_config_load; the server is taken as written.  Returns 0, or
 * KB_EBADINPUT with a message naming the file and field (cfg is then
 * empty).  Any thread. */
int kb_kube_config_parse(const char *text, size_t len, const char *file, const char *context,
                         struct kb_kube_config *cfg, char *err, size_t errlen);

/*
 * Runs an exec credential plugin once and parses its ExecCredential
 * (blocking, at most 30 s).  Returns 0 and fills out (release with
 * kb_kube_cred_release), or KB_EBADINPUT with a message naming the command
 * and what is wrong (never the secret).  Any thread.
 */
int kb_kube_exec_credential(const struct kb_kube_exec *x, struct kb_kube_cred *out, char *err,
                            size_t errlen);
void kb_kube_cred_release(struct kb_kube_cred *c);
void kb_kube_exec_copy(struct kb_kube_exec *dst, const struct kb_kube_exec *src);
void kb_kube_exec_release(struct kb_kube_exec *x);

/* Decodes standard base64 (whitespace ignored).  Returns a NUL-terminated
 * heap buffer (caller frees) and its length, or NULL on bad input. */
char *kb_base64_decode(const char *in, size_t *outlen);

/* ---- the client ------------------------------------------------------------- */

struct kb_kube;
struct kb_kube_call;

struct kb_kube_resp {
        long status;       /* HTTP status, 0 when no response arrived */
        int curl_code;     /* CURLcode, 0 when the transfer completed */
        const char *error; /* a short reason when status is 0 */
        const char *body;  /* NUL-terminated; "" for none */
        size_t len;
        int attempts;
        /* The call ended unanswered: the client is being freed, or the
         * request was dropped (kb_kube_drop, or the fence closed on it).
         * The callback must only release what it holds and start nothing
         * new. */
        bool cancelled;
};

/* Called once per request, on the loop thread, cancelled ones included
 * (resp->cancelled).  resp and its body are valid during the call only. */
typedef void (*kb_kube_done_fn)(void *arg, const struct kb_kube_resp *resp);
/* A watch stream's lines, one per call, without the newline. */
typedef void (*kb_kube_line_fn)(void *arg, const char *line, size_t len);

struct kb_kube_opts {
        double qps;        /* default 50 */
        int burst;         /* default 100 */
        double timeout;    /* per attempt, seconds; default 30 */
        int max_attempts;  /* default 6 */
        int max_active;    /* transfers on the wire, watches and leases aside; default 32 */
        int event_backlog; /* events waiting in their lane; default 1000 */
        /* The User-Agent header (copied, at most 63 bytes); default
         * "kbatch-scheduler". */
        const char *user_agent;
};

/*
 * The lanes, highest priority first in the third column (0 is served
 * first), with whether the fence holds them and their name for logs and
 * metrics.  READ is the default (zero) lane.
 *
 *   LEASE   leader election: never waits for a token or a window place
 *   BIND    binds and evictions, and the reads that settle them
 *   READ    lists and other reads (changes nothing, so never fenced)
 *   STATUS  status patches (at most half the window)
 *   EVENT   events (a few places; the backlog is bounded and the
 *           recorder drops and aggregates when it is full)
 */
#define KB_KUBE_LANES(X)                                                                           \
        X(READ, "read", 2, false)                                                                  \
        X(LEASE, "lease", 0, false)                                                                \
        X(BIND, "bind", 1, true)                                                                   \
        X(STATUS, "status", 3, true)                                                               \
        X(EVENT, "event", 4, true)

enum kb_kube_lane {
#define KB_KUBE_LANE_ENUM(id, name, prio, fenced) KB_KUBE_LANE_##id,
        KB_KUBE_LANES(KB_KUBE_LANE_ENUM)
#undef KB_KUBE_LANE_ENUM
            KB_KUBE_NLANES,
};

/* The lane's name ("bind").  Any thread. */
const char *kb_kube_lane_name(enum kb_kube_lane lane);

/* A new client on loop with a copy of cfg.  Loop thread. */
struct kb_kube *kb_kube_new(uv_loop_t *loop, const struct kb_kube_config *cfg,
                            const struct kb_kube_opts *opts);
/* Ends every request with a cancelled answer (so callers free what they
 * hold; cancelled watches get no callback), closes the handles and frees the
 * client once the loop has run their close callbacks.  NULL is fine.  Loop
 * thread. */
void kb_kube_free(struct kb_kube *k);

struct kb_kube_req {
        const char *method;       /* GET, POST, PUT, PATCH, DELETE */
        const char *path;         /* "/api/v1/namespaces/x/pods?limit=500" */
        const char *body;         /* NULL for none */
        const char *content_type; /* default application/json */
        int max_attempts;         /* 0: the client's default; 1: no retries */
        enum kb_kube_lane lane;   /* default READ */
        double timeout;           /* per attempt, seconds; 0: the client's default */
        /* A 429 is this request's answer, not the server's load (a
         * PodDisruptionBudget refusing an eviction): it comes back to done
         * at once, unretried, and does not narrow the window. */
        bool final_429;
};

/*
 * Whether a request path (its query aside) means what it says: every
 * segment non-empty and neither "." nor "..", of the characters a
 * Kubernetes path can hold unescaped (letters, digits, '-', '.', '_',
 * ':'), the one after "namespaces" a DNS-1123 label and an object's name
 * (the segment after its resource) a DNS-1123 subdomain.  Names come from
 * the API's objects; one the server should have refused ("../pods", "",
 * "a%2Fb") would otherwise make another request, with the scheduler's
 * identity.  On false, why says which segment, in n bytes.
 */
bool kb_kube_path_ok(const char *path, char *why, size_t n);

/*
 * Starts a request; done runs with the final answer after retries.  The
 * returned handle is valid until done runs or kb_kube_cancel is called.
 * A path kb_kube_path_ok refuses never goes out: done runs on the next
 * loop turn with status 400 and the reason in error and body (a watch's
 * done, likewise).  Loop thread.
 */
struct kb_kube_call *kb_kube_request(struct kb_kube *k, const struct kb_kube_req *req,
                                     kb_kube_done_fn done, void *arg);

/* Whether fenced lanes may send now.  Called on the loop thread, often:
 * it must be cheap and must not call the client. */
typedef bool (*kb_kube_fence_fn)(void *arg);
/* Sets the fence (NULL: none, everything may go).  Loop thread. */
void kb_kube_set_fence(struct kb_kube *k, kb_kube_fence_fn fn, void *arg);

/*
 * Ends the unfinished calls in the lanes of the mask (1u << lane) that wait
 * for a token, a place or a retry, and with wire also those on the wire
 * (the transfer is aborted).  Each done callback runs now, with cancelled
 * set, so it must only release what it holds.  Returns how many were
 * ended.  O(calls).  Loop thread (from a done callback too).
 */
size_t kb_kube_drop(struct kb_kube *k, unsigned lanes, bool wire);
/* The mask of the fenced lanes (the writes a leader makes). */
unsigned kb_kube_fenced_lanes(void);

/* Withdraws a call that has not gone out (waiting for a token, a place or
 * a retry): returns true, and its callback will not run.  Returns false
 * and does nothing when it is on the wire (its answer will come).  Loop
 * thread. */
bool kb_kube_supersede(struct kb_kube_call *c);

/* The window now: max_active, halved by 429s and grown back by answers. */
double kb_kube_window(const struct kb_kube *k);

/* Requests waiting in a lane, and whether its bounded backlog is full (a
 * request submitted to a full lane still goes in; the caller decides). */
size_t kb_kube_waiting(const struct kb_kube *k, enum kb_kube_lane lane);
bool kb_kube_lane_full(const struct kb_kube *k, enum kb_kube_lane lane);
/* Starts a watch: line runs per line of a 200 answer; done runs when the
 * stream ends (status 200, any error, or another status with its body). */
struct kb_kube_call *kb_kube_watch(struct kb_kube *k, const char *path, double timeout,
                                   kb_kube_line_fn line, kb_kube_done_fn done, void *arg);
/* Stops a call; its callbacks will not run.  Loop thread. */
void kb_kube_cancel(struct kb_kube_call *c);
uv_loop_t *kb_kube_loop(struct kb_kube *k);
/* Number of calls started and not yet done. */
size_t kb_kube_inflight(const struct kb_kube *k);

/* Requests by verb and code ("GET", 200, 1234); code 0 is a connection
 * failure.  Calls fn for each, under the client's stats lock.  Any thread. */
typedef void (*kb_kube_stat_fn)(void *arg, const char *verb, long code, uint64_t n);
void kb_kube_stats(struct kb_kube *k, kb_kube_stat_fn fn, void *arg);

/* Whether a status is worth retrying (connection failure, 429, 5xx). */
bool kb_kube_retryable(long status);

/* A backoff delay in seconds for attempt n (1-based): base * 2^(n-1),
 * capped, times a jitter in [0.5, 1.5).  rnd is in [0, 1). */
double kb_kube_backoff(int n, double base, double cap, double rnd);

/* ---- reflectors ------------------------------------------------------------- */

enum kb_watch_type {
        KB_WATCH_ADDED,
        KB_WATCH_MODIFIED,
        KB_WATCH_DELETED,
        KB_WATCH_BOOKMARK,
        KB_WATCH_ERROR,
};

/* One line of a watch stream ({"type":...,"object":{...}}), decoded. */
struct kb_watch_event {
        enum kb_watch_type type;
        const struct kb_value *object;
        const char *resource_version; /* the object's, or NULL */
        int64_t code;                 /* ERROR: the Status's code (410: expired) */
        const char *message;          /* ERROR: the Status's message, or NULL */
        struct kb_pool pool;          /* holds the above (a read-only tree) */
};

/* Parses one watch line.  Returns 0 (release ev with kb_watch_event_release)
 * or KB_EBADINPUT with a message (bad JSON, no type or object, an unknown
 * type).  Any thread. */
int kb_watch_event_parse(const char *line, size_t len, struct kb_watch_event *ev, char *err,
                         size_t errlen);
void kb_watch_event_release(struct kb_watch_event *ev);

/*
 * What a reflector feeds its consumer, on the loop thread.  A list calls
 * list_begin, upsert per item, then list_end (objects not seen since
 * list_begin are gone); a watch calls upsert and remove per event.  The
 * object passed is only valid during the call.  Items of a list carry no
 * kind; consumers decode by what they watch.
 */
struct kb_reflector_ops {
        void (*list_begin)(void *arg);
        void (*upsert)(void *arg, const struct kb_value *obj);
        void (*remove)(void *arg, const struct kb_value *obj);
        void (*list_end)(void *arg);
};

struct kb_reflector;
/* name is for logs ("pods"); path the collection ("/api/v1/pods"); query
 * extra parameters ("fieldSelector=...") or NULL.  Starts listing at once. */
struct kb_reflector *kb_reflector_new(struct kb_kube *k, const char *name, const char *path,
                                      const char *query, const struct kb_reflector_ops *ops,
                                      void *arg);
/* Marks r's collection optional (call right after kb_reflector_new): a
 * 404, the API server not serving it (a CRD not installed), reads as an
 * empty list, synced, and the list is tried again every 10 s. */
void kb_reflector_set_optional(struct kb_reflector *r);
/* Whether a first list has completed. */
bool kb_reflector_synced(const struct kb_reflector *r);
/* Counts of lists and watches started, for tests and metrics. */
void kb_reflector_counts(const struct kb_reflector *r, unsigned *lists, unsigned *watches);
/* Stops and frees (after the loop runs the close callbacks).  NULL is fine. */
void kb_reflector_free(struct kb_reflector *r);

#endif /* KB_PKG_KUBE_H */

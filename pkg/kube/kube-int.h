/* Shared between the client's files (client.c, transport.c); not a public
 * interface. */
#ifndef KB_PKG_KUBE_INT_H
#define KB_PKG_KUBE_INT_H

#include <pthread.h>
#include <time.h>

#include <curl/curl.h>

#include "kube/kube.h"

enum kb__call_state {
        KB__CALL_QUEUED,  /* in its lane, for a token or a window place */
        KB__CALL_BACKOFF, /* waiting to retry (its timer runs) */
        KB__CALL_RUNNING, /* on the wire (inside curl) */
        KB__CALL_DONE,
};

struct kb_kube_call {
        struct kb_kube *k;
        struct kb_kube_call *prev, *next;   /* every live call */
        struct kb_kube_call *qprev, *qnext; /* its lane's queue while queued */
        uv_timer_t timer;                   /* the retry backoff */
        CURL *easy;
        struct curl_slist *hdrs;
        char method[8];
        enum kb_kube_lane lane;
        char *url;
        char *path; /* for logs: the path without the query */
        char *body;
        char *content_type;
        bool stream;
        double timeout;
        int attempt, max_attempts;
        bool final_429; /* kb_kube_req.final_429 */
        double retry_after;
        enum kb__call_state state;
        bool active;    /* counted in its lane's and the window's transfers */
        bool in_write;  /* inside write_cb: curl must not be touched */
        bool cancelled; /* cancelled from a line callback; reaped in finish */
        char refused[192]; /* why kb_kube_path_ok refused the path, or "" */
        kb_kube_done_fn done;
        kb_kube_line_fn line;
        void *arg;
        struct kb_buf resp;
};

struct kb__lane {
        struct kb_kube_call *head, *tail;
        size_t waiting; /* queued */
        size_t active;  /* on the wire */
        size_t max_active;
        size_t backlog; /* a full backlog: kb_kube_lane_full (0: unbounded) */
};

struct kb__stat {
        char verb[8];
        long code;
        uint64_t n;
};

struct kb__sock;

struct kb_kube {
        uv_loop_t *loop;
        CURLM *multi;
        uv_timer_t curl_timer;
        uv_timer_t rl_timer;
        int open_handles; /* curl_timer, rl_timer, call timers and socket polls not closed yet */
        struct kb_kube_config cfg;
        struct kb_kube_opts opts;
        char user_agent[64];
        double tokens, last_refill;
        double window;     /* transfers allowed on the wire: adapts (client.c) */
        double window_cut; /* monotonic: when a 429 last halved it */
        struct kb__lane lanes[KB_KUBE_NLANES];
        struct kb_kube_call *calls;
        struct kb__sock *socks;
        CURL *spare[64]; /* reset easy handles, for the next requests */
        size_t nspare;
        size_t inflight;
        size_t active;      /* windowed transfers on the wire */
        size_t fenced_wire; /* transfers of fenced lanes on the wire */
        bool freeing;
        bool kicking; /* inside kick: no recursion */
        kb_kube_fence_fn fence;
        void *fence_arg;
        char *token;
        double token_read;
        struct timespec token_mtime;
        /* The exec plugin's last answer (cfg.has_exec). */
        struct kb_kube_cred cred;
        bool have_cred;
        double cred_failed; /* monotonic time of the last failed run, 0 if none */
        uint64_t rnd;
        pthread_mutex_t stats_lock;
        struct kb__stat *stats;
        size_t nstats, capstats;
        /* Given to kb__kube_transport_init by client.c, so that transport.c
         * calls nothing above it: before_io runs before curl touches a
         * socket, after_io after (see kb__kube_transport_init). */
        void (*before_io)(struct kb_kube *k);
        void (*after_io)(struct kb_kube *k);
};

/* transport.c: curl on the loop.  Around every curl_multi_socket_action,
 * transport.c calls before_io (client.c: a closed fence aborts the fenced
 * transfers on the wire first) and after_io (client.c: reads curl's
 * finished transfers and completes them). */
void kb__kube_transport_init(struct kb_kube *k, void (*before_io)(struct kb_kube *k),
                             void (*after_io)(struct kb_kube *k));
/* Closes the sockets' poll handles after curl_multi_cleanup. */
void kb__kube_transport_close(struct kb_kube *k);
/* A configured easy handle for c (URL, TLS, credentials, body). */
void kb__kube_setup_easy(struct kb_kube_call *c);
/* Takes back an easy handle removed from the multi handle, for reuse. */
void kb__kube_easy_put(struct kb_kube *k, CURL *e);
/* One of the client's handles finished closing; the last frees k. */
void kb__kube_handle_gone(struct kb_kube *k);

/* client.c: the two hooks kb_kube_new (kube.c) gives the transport.
 * Reads curl's finished transfers and completes them. */
void kb__kube_check_info(struct kb_kube *k);
/* Called before curl touches a socket: a closed fence aborts the fenced
 * transfers on the wire first. */
void kb__kube_fence_check(struct kb_kube *k);

#ifdef KB_TESTING
/* File-local parsers, for the unit tests and fuzz targets (KB_TESTABLE). */
/* transport.c: the seconds a "Retry-After:" header line of len bytes (no
 * NUL after them) asks for, at most 60; 0 for anything else. */
double kb__retry_after(const char *data, size_t len);
/* exec.c: an exec plugin's output (text, len) read as the ExecCredential
 * x asks for; who names the plugin in messages.  As
 * kb_kube_exec_credential, without running anything. */
int kb__exec_parse_cred(const char *who, const struct kb_kube_exec *x, const char *text, size_t len,
                        struct kb_kube_cred *out, char *err, size_t errlen);
/* reflector.c: answers r's call in flight as the server would have: the
 * list page resp (when r lists), or the watch lines and then the end of
 * the stream resp (when r watches).  Whether r lists or watches now. */
void kb__reflector_list_answer(struct kb_reflector *r, const struct kb_kube_resp *resp);
void kb__reflector_watch_line(struct kb_reflector *r, const char *line, size_t len);
void kb__reflector_watch_end(struct kb_reflector *r, const struct kb_kube_resp *resp);
bool kb__reflector_watching(const struct kb_reflector *r);
/* Starts at once what r's backoff timer waits to start. */
void kb__reflector_retry_now(struct kb_reflector *r);
#endif

#endif /* KB_PKG_KUBE_INT_H */

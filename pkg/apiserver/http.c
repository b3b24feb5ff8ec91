/*
 * The HTTP daemon (libmicrohttpd): connections and their limits, request
 * bodies, watch streams fed to MHD, and the answer callback that hands
 * each request to kb_apiserver_handle.  server.c starts it.
 */
#include "apiserver/apiserver-http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A TCP connection (MHD's socket context): its place in the limits and
 * whether a request ever began on it. */
struct sock {
        struct kb_conn_slot *slot;
        bool requested;
        char ip[64];
};

/* A request (MHD's per-request context). */
struct conn {
        struct kb_buf body;
        bool too_big;
        bool unauthorized; /* answered 401 once the body (dropped) is in */
        /* watch streaming */
        bool counted; /* counted in srv->watches */
        struct kb_watch *watch;
        int fd;
        const char *data;
        size_t len, off;
};

static bool hung_up(int fd)
{
        struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
        if (poll(&p, 1, 0) <= 0)
                return false;
        /* POLLRDHUP: the client shut its side.  Over TLS the peek below
         * would see its close_notify alert, never the EOF behind it. */
        if (p.revents & (POLLHUP | POLLERR | POLLNVAL | POLLRDHUP))
                return true;
        char b;
        ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
        struct conn *c = cls;
        (void)pos;
        for (;;) {
                if (c->off < c->len) {
                        size_t n = KB_MIN(max, c->len - c->off);
                        memcpy(buf, c->data + c->off, n);
                        c->off += n;
                        return (ssize_t)n;
                }
                const char *data;
                long n = kb_apiserver_watch_next(c->watch, 1.0, &data);
                if (n < 0)
                        return MHD_CONTENT_READER_END_OF_STREAM;
                if (n == 0) {
                        if (c->fd >= 0 && hung_up(c->fd))
                                return MHD_CONTENT_READER_END_WITH_ERROR;
                        continue;
                }
                c->data = data;
                c->len = (size_t)n;
                c->off = 0;
        }
}

static void watch_done(void *cls)
{
        (void)cls; /* the conn owns the watch; completed() frees both */
}

struct qcollect {
        struct kb_api_query *q;
        size_t n, cap;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
        struct qcollect *qc = cls;
        (void)kind;
        if (qc->n == qc->cap)
                kb_grow((void **)&qc->q, &qc->cap, qc->n + 1, sizeof(*qc->q));
        qc->q[qc->n].key = key;
        qc->q[qc->n].value = value;
        qc->n++;
        return MHD_YES;
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Percent-decoding of the path and the query, in place, as MHD's own does
 * it, except that %00 stays as it is: decoded, the NUL ended the path
 * there, and DELETE .../pods/%00 named the whole collection (every pod of
 * the namespace went).  Kept, it is a name no object has: kube-apiserver
 * answers 404 for it too. */
static size_t unescape(void *cls, struct MHD_Connection *con, char *s)
{
        (void)cls;
        (void)con;
        char *w = s;
        for (const char *r = s; *r;) {
                int hi = r[0] == '%' ? hexval(r[1]) : -1;
                int lo = hi >= 0 ? hexval(r[2]) : -1;
                if (lo >= 0 && (hi | lo)) {
                        *w++ = (char)(hi * 16 + lo);
                        r += 3;
                } else {
                        *w++ = *r++;
                }
        }
        *w = 0;
        return (size_t)(w - s);
}

/* Whether another watch may stream; if not, resp becomes kube-apiserver's
 * answer to a request over its limits: 429, Retry-After: 1 and the text
 * "Too many requests, please try again later." (k8s.io/apiserver,
 * pkg/server/filters: tooManyRequests, as max-requests-inflight and API
 * Priority and Fairness answer; plain text, not a Status). */
static bool watch_admit(struct kb_apiserver *srv, struct MHD_Connection *con,
                        struct kb_api_resp *resp)
{
        if (!srv->opts.max_watches)
                return true;
        unsigned n = __atomic_add_fetch(&srv->watches, 1, __ATOMIC_RELAXED);
        if (n <= srv->opts.max_watches)
                return true;
        __atomic_sub_fetch(&srv->watches, 1, __ATOMIC_RELAXED);
        uint64_t skipped;
        if (kb_ratelog_due(&srv->watch_log, 10, &skipped)) {
                const union MHD_ConnectionInfo *ci =
                    MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                char ip[64];
                kb_sockaddr_str(ci ? ci->client_addr : NULL, ip, sizeof(ip));
                KB_WARN("refusing a watch from %s with 429: %u watches are streaming, the limit "
                        "(--max-watches); %llu more refused since the last such line",
                        ip, srv->opts.max_watches, (unsigned long long)skipped);
        }
        kb_buf_release(&resp->body);
        kb_buf_init(&resp->body);
        kb_buf_adds(&resp->body, "Too many requests, please try again later.\n");
        resp->status = 429;
        resp->content_type = "text/plain; charset=utf-8";
        resp->retry_after = 1;
        return false;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *con, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
        struct kb_apiserver *srv = cls;
        struct conn *c = *con_cls;
        (void)version;
        if (!c) {
                c = kb_xcalloc(1, sizeof(*c));
                kb_buf_init(&c->body);
                c->fd = -1;
                /* The headers are in: from here on the connection may be
                 * idle for the request timeout (a body, the answer, the
                 * next request on a kept-alive connection). */
                const union MHD_ConnectionInfo *si =
                    MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
                if (si && si->socket_context)
                        ((struct sock *)si->socket_context)->requested = true;
                MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT,
                                          (unsigned)srv->opts.request_timeout);
                const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                             MHD_HTTP_HEADER_CONTENT_LENGTH);
                if (cl && strtoull(cl, NULL, 10) > srv->opts.max_body)
                        c->too_big = true;
                /* Decided on the headers, so a client without the token
                 * cannot make the server buffer a body. */
                c->unauthorized =
                    !kb__authorized(srv, url,
                                    MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                                MHD_HTTP_HEADER_AUTHORIZATION));
                *con_cls = c;
                return MHD_YES;
        }
        if (*upload_size) {
                if (!c->too_big && !c->unauthorized) {
                        if (c->body.len + *upload_size > srv->opts.max_body) {
                                c->too_big = true;
                                kb_buf_release(&c->body);
                                kb_buf_init(&c->body);
                        } else {
                                kb_buf_add(&c->body, upload, *upload_size);
                        }
                }
                *upload_size = 0;
                return MHD_YES;
        }
        struct kb_api_resp resp;
        if (c->unauthorized) {
                /* kb_apiserver_handle checks again and answers the 401. */
                struct kb_api_req req = {.method = method, .path = url};
                kb_apiserver_handle(srv, &req, &resp);
        } else if (c->too_big) {
                memset(&resp, 0, sizeof(resp));
                kb_buf_init(&resp.body);
                resp.status = 413;
                resp.content_type = "application/json";
                kb_buf_printf(&resp.body,
                              "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                              "\"status\":\"Failure\",\"message\":\"the request body is larger "
                              "than the limit of %zu bytes\",\"reason\":\"RequestEntityTooLarge\","
                              "\"code\":413}",
                              srv->opts.max_body);
        } else {
                struct qcollect qc = {0};
                MHD_get_connection_values(con, MHD_GET_ARGUMENT_KIND, collect_arg, &qc);
                struct kb_api_req req = {
                    .method = method,
                    .path = url,
                    .query = qc.q,
                    .nquery = qc.n,
                    .content_type = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                                MHD_HTTP_HEADER_CONTENT_TYPE),
                    .accept =
                        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
                    .authorization = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                                 MHD_HTTP_HEADER_AUTHORIZATION),
                    .user_agent = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                              MHD_HTTP_HEADER_USER_AGENT),
                    .body = c->body.data,
                    .body_len = c->body.len,
                };
                kb_apiserver_handle(srv, &req, &resp);
                free(qc.q);
        }
        if (resp.watch && !watch_admit(srv, con, &resp)) {
                kb_apiserver_watch_free(resp.watch);
                resp.watch = NULL;
        }
        struct MHD_Response *r;
        if (resp.watch) {
                c->watch = resp.watch;
                c->counted = srv->opts.max_watches > 0;
                resp.watch = NULL;
                /* A watch streams for as long as the client wants it: no
                 * inactivity timeout (events may be minutes apart). */
                MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT, 0);
                const union MHD_ConnectionInfo *ci =
                    MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
                c->fd = ci ? ci->connect_fd : -1;
                r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, watch_reader, c,
                                                      watch_done);
        } else {
                size_t len = resp.body.len;
                char *body = kb_buf_detach(&resp.body);
                r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp.content_type);
        /* One header per warning, each a quoted string (RFC 9111). */
        for (char *save = NULL, *t = resp.warning ? strtok_r(resp.warning, "\n", &save) : NULL; t;
             t = strtok_r(NULL, "\n", &save)) {
                struct kb_buf w;
                kb_buf_init(&w);
                kb_buf_adds(&w, "299 - \"");
                for (const char *q = t; *q; q++) {
                        if (*q == '"' || *q == '\\')
                                kb_buf_adds(&w, "\\");
                        kb_buf_add(&w, q, 1);
                }
                kb_buf_adds(&w, "\"");
                MHD_add_response_header(r, "Warning", w.data);
                kb_buf_release(&w);
        }
        if (resp.retry_after > 0) {
                char buf[16];
                snprintf(buf, sizeof(buf), "%d", resp.retry_after);
                MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, buf);
        }
        enum MHD_Result rc = MHD_queue_response(con, (unsigned)resp.status, r);
        MHD_destroy_response(r);
        kb_api_resp_release(&resp);
        return rc;
}

static void completed(void *cls, struct MHD_Connection *con, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
        struct kb_apiserver *srv = cls;
        struct conn *c = *con_cls;
        if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED) {
                uint64_t skipped;
                const union MHD_ConnectionInfo *si =
                    MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
                const struct sock *k = si ? si->socket_context : NULL;
                if (kb_ratelog_due(&srv->stall_log, 10, &skipped))
                        KB_WARN("closed a connection from %s: idle for %.0f s within a request "
                                "(--request-timeout); %llu more closed since the last such line",
                                k ? k->ip : "a client", srv->opts.request_timeout,
                                (unsigned long long)skipped);
        }
        if (!c)
                return;
        if (c->counted)
                __atomic_sub_fetch(&srv->watches, 1, __ATOMIC_RELAXED);
        kb_apiserver_watch_free(c->watch);
        kb_buf_release(&c->body);
        free(c);
        *con_cls = NULL;
}

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
        struct kb_apiserver *srv = cls;
        (void)len;
        if (srv->opts.fault_refuse_for > 0) {
                double t = kb_now_mono() - srv->started;
                if (t >= srv->opts.fault_refuse_from &&
                    t < srv->opts.fault_refuse_from + srv->opts.fault_refuse_for) {
                        KB_WARN("fault: refusing a connection (%.1fs into the %.1fs window)",
                                t - srv->opts.fault_refuse_from, srv->opts.fault_refuse_for);
                        return MHD_NO;
                }
        }
        return kb_connlimit_admit(srv->limit, addr) ? MHD_YES : MHD_NO;
}

/* Each connection is counted in the limits from its start to its end; one
 * that ends with no request begun after the header timeout was closed for
 * it (MHD says why only for connections with a request), and is logged. */
static void notify_conn(void *cls, struct MHD_Connection *con, void **socket_context,
                        enum MHD_ConnectionNotificationCode code)
{
        struct kb_apiserver *srv = cls;
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci =
                    MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                struct sock *k = kb_xcalloc(1, sizeof(*k));
                k->slot = kb_connlimit_opened(srv->limit, ci ? ci->client_addr : NULL);
                kb_sockaddr_str(ci ? ci->client_addr : NULL, k->ip, sizeof(k->ip));
                *socket_context = k;
                return;
        }
        struct sock *k = *socket_context;
        if (!k)
                return;
        double open = kb_connlimit_closed(srv->limit, k->slot);
        uint64_t skipped;
        if (!k->requested && open >= srv->opts.header_timeout - 0.5 &&
            kb_ratelog_due(&srv->idle_log, 10, &skipped))
                KB_WARN("closed a connection from %s: no request within %.0f s "
                        "(--request-header-timeout); %llu more closed since the last such line",
                        k->ip, srv->opts.header_timeout, (unsigned long long)skipped);
        free(k);
        *socket_context = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
        (void)cls;
        if (kb_verbosity < 2)
                return;
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_vprintf(&b, fmt, ap);
        while (b.len && b.data[b.len - 1] == '\n')
                b.data[--b.len] = 0;
        KB_INFO("microhttpd: %s", b.data);
        kb_buf_release(&b);
}

/* The daemon, with what every way of serving shares: the callbacks, the
 * logger, the unescaper and the limits.  sa NULL: no listening socket. */
struct MHD_Daemon *kb__mhd_start(struct kb_apiserver *srv, unsigned flags, int port,
                                 const struct sockaddr_in *sa)
{
        /* Without TLS the two HTTPS options are skipped: MHD_OPTION_ARRAY
         * ends at the first MHD_OPTION_END; without sa, so is the
         * address. */
        struct MHD_OptionItem more[] = {
            {MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key},
            {MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert},
            {MHD_OPTION_SOCK_ADDR, 0, (void *)sa},
            {MHD_OPTION_END, 0, NULL},
        };
        struct MHD_OptionItem *opts = more + (srv->tls_cert ? 0 : 2);
        if (!sa)
                more[2].option = MHD_OPTION_END;
        /* The total stays below the open-files limit (raised to its hard
         * limit first, as Go's runtime does for kube-apiserver), with room
         * for the server's own files. */
        unsigned long nofile = kb_nofile_raise();
        unsigned total = srv->opts.max_conns;
        if (nofile < (unsigned long)total + 64)
                total = nofile > 64 + 16 ? (unsigned)(nofile - 64) : 16;
        srv->limit = kb_connlimit_new("kbatch-apiserver", srv->opts.max_conns_per_client, total,
                                      "--max-connections-per-client", "--max-connections");
        /* The logger goes first, or MHD prints what comes before it (TLS
         * set-up errors among them) on stderr itself.  The unescaper keeps
         * %00 (see unescape).  Each connection's memory pool holds its
         * request line and headers and MHD's record of every query
         * parameter: 2 MiB takes a URL of 10,000 repeated parameters
         * (kube-apiserver allows 1 MiB of headers).  Pools this large are
         * mapped, not touched, so an idle connection does not cost them.
         * MHD's own connection cap sits above ours, so that ours, which
         * logs, applies. */
        struct MHD_Daemon *d = MHD_start_daemon(
            flags, (uint16_t)port, accept_policy, srv, answer, srv, MHD_OPTION_EXTERNAL_LOGGER,
            mhd_log, srv, MHD_OPTION_NOTIFY_COMPLETED, completed, srv, MHD_OPTION_NOTIFY_CONNECTION,
            notify_conn, srv, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->opts.header_timeout,
            MHD_OPTION_CONNECTION_LIMIT, total + 16, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
            (size_t)2 * 1024 * 1024, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_ARRAY,
            opts, MHD_OPTION_END);
        if (!d) {
                kb_connlimit_free(srv->limit);
                srv->limit = NULL;
        }
        return d;
}

#ifdef KB_TESTING
struct MHD_Daemon *kb__apiserver_mhd_external(struct kb_apiserver *srv)
{
        return kb__mhd_start(srv, MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET, 0, NULL);
}
#endif

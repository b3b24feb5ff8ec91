/*
 * The HTTP endpoints /metrics (metrics.c renders it), /healthz and /readyz,
 * on libmicrohttpd's own thread.
 *
 * The server must stay up for the kubelet's probes whatever else connects:
 * it waits on epoll (or poll), not select, so it is not capped near
 * FD_SETSIZE; a connection idle for HTTP_TIMEOUT seconds is closed; and a
 * client (an IP address) may hold HTTP_PER_CLIENT connections, all clients
 * HTTP_TOTAL (less where the open-files limit is lower).  A scrape or a probe
 * needs one.  deploy/'s NetworkPolicy admits only those to the port.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include "scheduler/scheduler-int.h"

enum { HTTP_TIMEOUT = 10, HTTP_PER_CLIENT = 16, HTTP_TOTAL = 2048 };

/* A connection: its place in the limits, whether it ever sent a request,
 * and its client for the log. */
struct http_sock {
        struct kb_conn_slot *slot;
        bool requested;
        char ip[64];
};

static struct kb_ratelog idle_log;

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **con_cls)
{
        struct kb_sched *s = cls;
        unsigned code = 200;
        char *text;
        const union MHD_ConnectionInfo *si =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        if (si && si->socket_context)
                ((struct http_sock *)si->socket_context)->requested = true;
        const char *ctype = "text/plain; charset=utf-8";
        if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
                code = 405;
                text = kb_xstrdup("method not allowed\n");
        } else if (!strcmp(url, "/metrics")) {
                text = kb__metrics_render(s);
                ctype = "text/plain; version=0.0.4; charset=utf-8";
        } else if (!strcmp(url, "/healthz")) {
                text = kb_xstrdup("ok\n");
        } else if (!strcmp(url, "/readyz")) {
                bool ready = __atomic_load_n(&s->ready, __ATOMIC_RELAXED);
                code = ready ? 200 : 503;
                text = kb_xstrdup(ready ? "ok\n" : "caches not synced\n");
        } else {
                code = 404;
                text = kb_xstrdup("not found\n");
        }
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(resp, "Content-Type", ctype);
        enum MHD_Result rc = MHD_queue_response(conn, code, resp);
        MHD_destroy_response(resp);
        return rc;
}

static enum MHD_Result http_admit(void *cls, const struct sockaddr *addr, socklen_t len)
{
        struct kb_sched *s = cls;
        (void)len;
        return kb_connlimit_admit(s->http_limit, addr) ? MHD_YES : MHD_NO;
}

static void http_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode code)
{
        struct kb_sched *s = cls;
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci =
                    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                struct http_sock *k = kb_xcalloc(1, sizeof(*k));
                k->slot = kb_connlimit_opened(s->http_limit, ci ? ci->client_addr : NULL);
                kb_sockaddr_str(ci ? ci->client_addr : NULL, k->ip, sizeof(k->ip));
                *socket_context = k;
                return;
        }
        struct http_sock *k = *socket_context;
        if (!k)
                return;
        double open = kb_connlimit_closed(s->http_limit, k->slot);
        /* One that never asked for anything and lived out the timeout was
         * closed by it.  (A scraper's kept-alive connection idling between
         * scrapes is closed by it too, which is routine and not logged.) */
        uint64_t skipped;
        if (!k->requested && open >= HTTP_TIMEOUT - 0.5 && kb_ratelog_due(&idle_log, 10, &skipped))
                KB_WARN("metrics server: closed a connection from %s: no request within %d s; "
                        "%llu more closed since the last such line",
                        k->ip, HTTP_TIMEOUT, (unsigned long long)skipped);
        free(k);
        *socket_context = NULL;
}

/* HTTP_TOTAL, or fewer where the open-files limit leaves less room: the
 * daemon keeps 256 descriptors for its API connections and files. */
static unsigned http_total(void)
{
        unsigned long nofile = kb_nofile_raise();
        if (nofile >= (unsigned long)HTTP_TOTAL + 256)
                return HTTP_TOTAL;
        return nofile > 256 + 16 ? (unsigned)(nofile - 256) : 16;
}

int kb__http_start(struct kb_sched *s, const char *addr)
{
        const char *colon = strrchr(addr, ':');
        if (!colon)
                return -1;
        char host[128];
        size_t hl = (size_t)(colon - addr);
        if (hl >= sizeof(host))
                return -1;
        memcpy(host, addr, hl);
        host[hl] = 0;
        int port = atoi(colon + 1);
        if (port < 0 || port > 65535)
                return -1;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (!*host || !strcmp(host, "0.0.0.0"))
                sa.sin_addr.s_addr = htonl(INADDR_ANY);
        else if (!strcmp(host, "localhost"))
                sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
                return -1;
        unsigned total = http_total();
        s->http_limit = kb_connlimit_new("metrics server", HTTP_PER_CLIENT, total, "16 per client",
                                         "the open-files limit or 2048");
        /* MHD's own cap sits above ours, so that ours, which logs, applies. */
        s->http = MHD_start_daemon(
            MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, http_admit, s, answer,
            s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)HTTP_TIMEOUT, MHD_OPTION_CONNECTION_LIMIT, (unsigned)(total + 16),
            MHD_OPTION_NOTIFY_CONNECTION, http_notify, s, MHD_OPTION_END);
        if (!s->http) {
                kb_connlimit_free(s->http_limit);
                s->http_limit = NULL;
                return -1;
        }
        KB_INFO("serving /metrics, /healthz and /readyz on %s (idle connections closed after %d "
                "s; at most %d connections per client, %u in total)",
                addr, HTTP_TIMEOUT, HTTP_PER_CLIENT, total);
        return 0;
}

void kb__http_stop(struct kb_sched *s)
{
        /* The HTTP thread reads the client's stats: stop it before the
         * client goes. */
        if (s->http)
                MHD_stop_daemon(s->http);
        s->http = NULL;
        kb_connlimit_free(s->http_limit);
        s->http_limit = NULL;
}

/*
 * Fuzz target: kbatch-apiserver's HTTP layer — the request line, the
 * headers (Content-Length, Content-Type, Accept, Authorization,
 * User-Agent, chunked bodies), the percent-decoding of the path and the
 * query (server.c's unescaper), the body limit and the bearer token check
 * — as libmicrohttpd parses a request and hands it to the server.  The
 * input is what a client writes on the connection.  Byte 0, bit 0: the
 * server requires the token "fuzz-token"; bit 1: a small body limit (64
 * bytes).
 *
 * No socket is listened on: the daemon is the server's own (same
 * callbacks and options) with no listening socket, the input goes in
 * through one end of a socketpair handed to MHD_add_connection, and
 * MHD_run moves it along on this thread.  Server and daemon are made anew
 * per input, and watches end at once, so a crash reproduces from its
 * input alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "apiserver/apiserver-http.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

/* Reads what the server wrote, so that it never blocks on a full buffer. */
static size_t drain(int fd)
{
        char buf[16384];
        size_t total = 0;
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                total += (size_t)n;
        return total;
}

static unsigned connections(struct MHD_Daemon *d)
{
        const union MHD_DaemonInfo *di =
            MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        return di ? di->num_connections : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kb_log_set_hook(quiet, NULL);
        if (size < 1)
                return 0;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.history = 16;
        o.seed = 1;
        o.fault_watch_close = 1e-6;
        if (data[0] & 1)
                o.token = "fuzz-token";
        if (data[0] & 2)
                o.max_body = 64;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct MHD_Daemon *d = kb__apiserver_mhd_external(srv);
        if (!d)
                __builtin_trap();
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
                __builtin_trap();
        struct sockaddr_in peer = {.sin_family = AF_INET,
                                   .sin_port = htons(40000),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (MHD_add_connection(d, sv[0], (const struct sockaddr *)&peer, sizeof(peer)) != MHD_YES) {
                close(sv[1]);
                goto out;
        }
        /* The request, then as many turns as it takes to answer it (a
         * keep-alive connection stays open, waiting for the next). */
        const uint8_t *p = data + 1;
        size_t left = size - 1;
        for (int turn = 0; turn < 64 && connections(d); turn++) {
                if (left) {
                        ssize_t n = write(sv[1], p, left);
                        if (n > 0) {
                                p += n;
                                left -= (size_t)n;
                        }
                }
                MHD_run(d);
                drain(sv[1]);
        }
        /* The client goes; the server notices and ends the connection. */
        close(sv[1]);
        for (int turn = 0; turn < 64 && connections(d); turn++)
                MHD_run(d);
out:
        MHD_stop_daemon(d);
        kb_apiserver_free(srv);
        return 0;
}

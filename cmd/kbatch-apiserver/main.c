/*
 * kbatch-apiserver: a local, in-memory Kubernetes API for kubectl and the
 * kbatch scheduler, with simulated nodes, kubelets and Job controller.  For
 * local use, demos and tests; production clusters run the real API server.
 * Flags are read in flags.c, and what they ask for is set up in setup.c.
 *
 * HTTPS and tokens: --tls makes (or reuses) a private CA and a server
 * certificate in --tls-cert-dir, by default a fresh private temp directory
 * removed at exit; the kubeconfig carries the CA.  A token is never logged:
 * it goes only into the kubeconfig and --token-file.
 *
 * Signals: SIGINT and SIGTERM are blocked in every thread and taken with
 * sigwait here, so shutdown runs on the main thread and frees everything.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver.h"
#include "base/base.h"
#include "cmd/kbatch-apiserver/cli.h"

/* Serves until SIGINT or SIGTERM; returns the exit code. */
static int serve(const struct cli *c, struct kb_apiserver_opts *o, const sigset_t *sigs,
                 const struct kb_apiserver_tls *certs, const char *token)
{
        struct kb_apiserver *srv = kb_apiserver_new(o);
        int rc = 2;
        for (size_t i = 0; i < c->nnodes; i++) {
                char err[256];
                if (kb_apiserver_add_nodes(srv, c->nodes[i], err, sizeof(err))) {
                        fprintf(stderr, "kbatch-apiserver: %s\n", err);
                        goto out;
                }
        }
        int err = kb_apiserver_start(srv, c->host, c->port);
        rc = 1;
        if (err) {
                fprintf(stderr, "kbatch-apiserver: cannot listen on %s: %s\n", c->listen,
                        kb_strerror(err));
                goto out;
        }
        int port = kb_apiserver_port(srv);
        KB_INFO("kbatch-apiserver listening on %s://%s:%d%s (local use, demos and tests only)",
                c->tls ? "https" : "http", c->host, port, token ? " with a bearer token" : "");
        if (cli_write_files(c, port, certs->ca_cert, token))
                goto out;
        int sig;
        sigwait(sigs, &sig);
        KB_INFO("kbatch-apiserver: signal %d, shutting down", sig);
        rc = 0;
out:
        kb_apiserver_free(srv);
        return rc;
}

int main(int argc, char **argv)
{
        /* Two malloc arenas, not glibc's eight a core: every connection
         * thread would otherwise get its own, and a document written by one
         * and freed by another leaves holes in each (1.2 KiB a pod at
         * 140,000 pods; docs/PERFORMANCE.md).  The work runs under one
         * lock anyway (pkg/apiserver/apiserver-int.h). */
        mallopt(M_ARENA_MAX, 2);
        struct cli c;
        int rc = cli_parse(&c, argc, argv);
        if (rc || c.help) {
                if (c.help)
                        cli_usage(stdout);
                cli_release(&c);
                return rc;
        }
        struct kb_apiserver_tls certs;
        kb_apiserver_tls_init(&certs);
        char *token = NULL, *made_dir = NULL;
        if ((rc = cli_check(&c)) || (rc = cli_auth(&c, &token)) ||
            (c.tls && (rc = cli_tls(&c, &certs, &made_dir))))
                goto out;
        c.o.tls_cert = certs.cert;
        c.o.tls_key = certs.key;
        c.o.token = token;

        /* Block the shutdown signals before any thread starts, so they all
         * inherit the mask and only sigwait sees them. */
        sigset_t sigs;
        sigemptyset(&sigs);
        sigaddset(&sigs, SIGINT);
        sigaddset(&sigs, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &sigs, NULL);
        signal(SIGPIPE, SIG_IGN);
        rc = serve(&c, &c.o, &sigs, &certs, token);
out:
        kb_apiserver_tls_release(&certs);
        if (made_dir) {
                kb_apiserver_tls_remove(made_dir);
                free(made_dir);
        }
        if (token) {
                explicit_bzero(token, strlen(token));
                free(token);
        }
        cli_release(&c);
        return rc;
}

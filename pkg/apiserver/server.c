/*
 * The server's lifecycle and its HTTP transport on libmicrohttpd.
 *
 * Threads: MHD's listening thread plus one thread per connection (so a
 * watch may block in its content callback without holding up anyone else),
 * and one simulation thread that ticks every opts.tick seconds.  All share
 * the store under srv->mu (see apiserver-int.h).
 *
 * Watches: the content callback waits for events a second at a time and,
 * between waits, peeks at the socket; a client that hung up (readable with
 * EOF) ends the stream, so abandoned watches do not pile up.
 */
#include "apiserver/apiserver-http.h"
#include "kubesim/kubesim.h"

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

void kb_apiserver_opts_init(struct kb_apiserver_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->history = 100000;
        o->max_body = 3 * 1024 * 1024;
        o->bookmark_interval = 30;
        o->kubelet = true;
        o->job_controller = true;
        o->tick = 0.2;
        o->fault_write_code = 500;
        o->fault_retry_after = 1;
        o->header_timeout = 32;
        o->request_timeout = 60;
        o->max_conns_per_client = 256;
        o->max_conns = 2048;
        o->max_watches = 1024;
}

static struct kb_value *namespace_obj(const char *name)
{
        struct kb_value *ns = kb_value_new(KB_VOBJECT);
        kb_value_set(ns, "kind", kb_value_new_string("Namespace"));
        kb_value_set(ns, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(kb_value_ensure_object(ns, "metadata"), "name", kb_value_new_string(name));
        kb_value_set(ns, "spec", kb_value_new(KB_VOBJECT));
        return ns;
}

struct kb_apiserver *kb_apiserver_new(const struct kb_apiserver_opts *o)
{
        struct kb_apiserver *srv = kb_xcalloc(1, sizeof(*srv));
        srv->opts = *o;
        /* The server keeps its own copies of the strings in the options. */
        srv->tls_cert = o->tls_cert ? kb_xstrdup(o->tls_cert) : NULL;
        srv->tls_key = o->tls_key ? kb_xstrdup(o->tls_key) : NULL;
        srv->token = o->token ? kb_xstrdup(o->token) : NULL;
        srv->opts.tls_cert = srv->tls_cert;
        srv->opts.tls_key = srv->tls_key;
        srv->opts.token = srv->token;
        if (srv->opts.history == 0)
                srv->opts.history = 100000;
        if (srv->opts.max_body == 0)
                srv->opts.max_body = 3 * 1024 * 1024;
        if (srv->opts.tick <= 0)
                srv->opts.tick = 0.2;
        if (srv->opts.header_timeout <= 0)
                srv->opts.header_timeout = 32;
        if (srv->opts.request_timeout <= 0)
                srv->opts.request_timeout = 60;
        if (srv->opts.max_conns == 0)
                srv->opts.max_conns = 2048;
        srv->hist = kb_xcalloc(srv->opts.history, sizeof(*srv->hist));
        srv->rng = o->seed ? o->seed : (uint64_t)kb__now() * 1000003ULL ^ (uint64_t)getpid();
        if (!srv->rng)
                srv->rng = 88172645463325252ULL;
        srv->started = kb_now_mono();
        pthread_mutex_init(&srv->mu, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&srv->cond, &ca);
        pthread_condattr_destroy(&ca);
        pthread_mutex_lock(&srv->mu);
        kb_kubesim_attach(srv);
        srv->defs = kb__schemas_new();
        kb__builtin_types(srv);
        srv->pods = kb__type_find(srv, "", "v1", "pods");
        srv->jobs = kb__type_find(srv, "batch", "v1", "jobs");
        struct kb_rtype *nst = kb__type_find(srv, "", "v1", "namespaces");
        const char *names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(names); i++) {
                struct kb_value *ns = namespace_obj(names[i]);
                kb__prepare_create(srv, nst, ns);
                kb__store_put(srv, nst, ns);
                kb__namespace_created(srv, names[i]);
        }
        pthread_mutex_unlock(&srv->mu);
        return srv;
}

int kb_apiserver_add_nodes(struct kb_apiserver *srv, const char *spec, char *err, size_t errlen)
{
        pthread_mutex_lock(&srv->mu);
        int rc = kb_kubesim_add_nodes(srv, spec, err, errlen);
        pthread_mutex_unlock(&srv->mu);
        return rc;
}

/* ---- the simulation thread ------------------------------------------------- */

static void *sim_main(void *arg)
{
        struct kb_apiserver *srv = arg;
        pthread_mutex_lock(&srv->mu);
        double next = kb_now_mono();
        while (!srv->stopping) {
                next += srv->opts.tick;
                double t0 = kb_now_mono();
                kb_kubesim_tick(srv);
                double took = kb_now_mono() - t0;
                if (took > 0.05)
                        KB_V(2, "simulation tick took %.0f ms", took * 1000);
                struct timespec ts;
                double whole = (double)(time_t)next;
                ts.tv_sec = (time_t)whole;
                ts.tv_nsec = (long)((next - whole) * 1e9);
                while (!srv->stopping && kb_now_mono() < next)
                        pthread_cond_timedwait(&srv->cond, &srv->mu, &ts);
                if (kb_now_mono() > next + 1)
                        next = kb_now_mono();
        }
        pthread_mutex_unlock(&srv->mu);
        return NULL;
}

int kb_apiserver_start(struct kb_apiserver *srv, const char *host, int port)
{
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        if (!strcmp(host, "localhost"))
                host = "127.0.0.1";
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
                return -EINVAL;
        unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                         MHD_USE_POLL | MHD_USE_ERROR_LOG;
        if (srv->tls_cert) {
                if (!srv->tls_key || !kb_apiserver_tls_supported())
                        return -ENOTSUP;
                flags |= MHD_USE_TLS;
        }
        srv->mhd = kb__mhd_start(srv, flags, port, &sa);
        if (!srv->mhd)
                return -EADDRINUSE;
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
        srv->port = di ? di->port : port;
        if (pthread_create(&srv->sim, NULL, sim_main, srv) == 0)
                srv->sim_started = true;
        return 0;
}

int kb_apiserver_port(const struct kb_apiserver *srv)
{
        return srv->port;
}

void kb_apiserver_free(struct kb_apiserver *srv)
{
        if (!srv)
                return;
        pthread_mutex_lock(&srv->mu);
        srv->stopping = true;
        pthread_cond_broadcast(&srv->cond);
        pthread_mutex_unlock(&srv->mu);
        if (srv->mhd)
                MHD_stop_daemon(srv->mhd);
        kb_connlimit_free(srv->limit);
        if (srv->sim_started)
                pthread_join(srv->sim, NULL);
        kb__store_free(srv);
        kb_kubesim_free(srv);
        kb_value_free(srv->defs);
        pthread_cond_destroy(&srv->cond);
        pthread_mutex_destroy(&srv->mu);
        free(srv->tls_cert);
        if (srv->tls_key) {
                explicit_bzero(srv->tls_key, strlen(srv->tls_key));
                free(srv->tls_key);
        }
        if (srv->token) {
                explicit_bzero(srv->token, strlen(srv->token));
                free(srv->token);
        }
        free(srv);
}

int kb_apiserver_write_kubeconfig(const char *path, const char *host, int port, const char *ca_pem,
                                  const char *token)
{
        struct kb_buf b;
        kb_buf_init(&b);
        if (!strcmp(host, "0.0.0.0"))
                host = "127.0.0.1";
        kb_buf_printf(&b,
                      "apiVersion: v1\n"
                      "kind: Config\n"
                      "clusters:\n"
                      "- name: kbatch\n"
                      "  cluster:\n"
                      "    server: %s://%s:%d\n",
                      ca_pem ? "https" : "http", host, port);
        if (ca_pem) {
                gnutls_datum_t in = {(unsigned char *)ca_pem, (unsigned)strlen(ca_pem)}, out;
                if (gnutls_base64_encode2(&in, &out) < 0)
                        kb_die("out of memory encoding the CA certificate");
                kb_buf_adds(&b, "    certificate-authority-data: ");
                kb_buf_add(&b, (const char *)out.data, out.size);
                kb_buf_adds(&b, "\n");
                gnutls_free(out.data);
        }
        kb_buf_adds(&b, "contexts:\n"
                        "- name: kbatch\n"
                        "  context:\n"
                        "    cluster: kbatch\n"
                        "    user: kbatch\n"
                        "    namespace: default\n"
                        "current-context: kbatch\n"
                        "users:\n"
                        "- name: kbatch\n");
        /* Quoted so that YAML reads a token such as 12345 as a string;
         * kb_apiserver_token_valid's alphabet needs no escapes in quotes. */
        if (token)
                kb_buf_printf(&b, "  user:\n    token: \"%s\"\n", token);
        else
                kb_buf_adds(&b, "  user: {}\n");
        int rc = kb_write_file(path, b.data, b.len, 0600);
        explicit_bzero(b.data, b.len);
        kb_buf_release(&b);
        return rc;
}

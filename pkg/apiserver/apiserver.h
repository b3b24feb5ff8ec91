/*
 * apiserver: a small, in-memory, Kubernetes-compatible API server for local
 * use, demos and tests (kbatch-apiserver).  It serves what kubectl and the
 * kbatch scheduler need: discovery, OpenAPI v3 (minimal), server-side
 * tables, list/watch with one global resourceVersion, optimistic
 * concurrency, patches, CRDs and their custom resources, pods' binding, and
 * a simulation of nodes, kubelets and the Job controller.  Production
 * clusters run the real API server; this is not a replacement for it.
 *
 * Requests can be answered without HTTP through kb_apiserver_handle, which
 * is what the unit tests and fuzz targets call.
 */
#ifndef KB_PKG_APISERVER_H
#define KB_PKG_APISERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct kb_apiserver_opts {
        size_t history;           /* watch events retained (410 beyond); default 100000 */
        size_t max_body;          /* request body limit in bytes; default 3 MiB */
        double bookmark_interval; /* seconds between watch bookmarks; default 30 */
        bool kubelet;             /* simulate kubelets (bound pods run) */
        bool job_controller;      /* simulate the batch/v1 Job controller */
        double tick;              /* simulation period in seconds; default 0.2 */
        /* Connections (kube-apiserver's own figures where it has one). */
        double header_timeout;         /* idle seconds before a request's headers are in; 32 */
        double request_timeout;        /* idle seconds within a request, and between requests
                                          on a kept-alive connection; 60 (never for a watch
                                          that has begun streaming) */
        unsigned max_conns_per_client; /* per IP address; default 256; 0: none */
        unsigned max_conns;            /* in all; default 2048 (less under a lower
                                          open-files limit); 0: that default */
        unsigned max_watches;          /* watches streaming at once; default 1024; 0: none */
        /* Faults for tests; all zero means none. */
        double fault_write_rate;  /* fraction of binding/status/create writes failed */
        int fault_write_code;     /* 500 or 429 */
        int fault_retry_after;    /* seconds, for 429 */
        int fault_latency_ms;     /* added to every request */
        double fault_watch_close; /* close watch streams after this many seconds */
        double fault_watch_410;   /* fraction of watches from a resourceVersion answered 410 */
        double fault_refuse_from; /* refuse connections from this second after start ... */
        double fault_refuse_for;  /* ... for this long */
        uint64_t seed;            /* for fault rolls and generated names; 0 = from time */
        /* HTTPS and authentication; kb_apiserver_new copies the strings. */
        const char *tls_cert; /* serve HTTPS with this certificate (PEM); NULL: plain HTTP */
        const char *tls_key;  /* its private key (PEM); required with tls_cert */
        const char *token;    /* require "Authorization: Bearer TOKEN"; NULL: no auth */
};

/* Defaults as documented above. */
void kb_apiserver_opts_init(struct kb_apiserver_opts *o);

struct kb_apiserver;

/* A new server with the built-in types and namespaces default, kube-system
 * and kube-node-lease.  Nothing listens until kb_apiserver_start. */
struct kb_apiserver *kb_apiserver_new(const struct kb_apiserver_opts *o);
/* Stops listening and the simulation, and frees everything.  NULL is fine. */
void kb_apiserver_free(struct kb_apiserver *srv);

/* Adds simulated nodes from a spec "4:cpu=8,memory=32Gi,pods=110,label=k=v".
 * Returns 0 or KB_EBADINPUT with a message in err.  Call before start. */
int kb_apiserver_add_nodes(struct kb_apiserver *srv, const char *spec, char *err, size_t errlen);

/* Listens on host:port (port 0 picks a free one) and starts the simulation
 * thread.  Returns 0 or a negative errno. */
int kb_apiserver_start(struct kb_apiserver *srv, const char *host, int port);
/* The port listened on, after start. */
int kb_apiserver_port(const struct kb_apiserver *srv);

/*
 * Writes a kubeconfig for host:port atomically (temp file, rename), mode
 * 0600.  With ca_pem (the PEM of the CA that signed the server's
 * certificate) the server is https:// and the CA goes in as
 * certificate-authority-data; without it, http://.  A token goes in as the
 * user's bearer token (kubectl sends it over https only).  Returns 0 or
 * -errno.
 */
int kb_apiserver_write_kubeconfig(const char *path, const char *host, int port, const char *ca_pem,
                                  const char *token);

/* ---- HTTPS and bearer tokens (tls.c, auth.c) ------------------------------ */

/* Whether libmicrohttpd was built with TLS support. */
bool kb_apiserver_tls_supported(void);

/* The PEM texts of the server's local certificate authority, the server
 * certificate it signed, and that certificate's private key. */
struct kb_apiserver_tls {
        char *ca_cert;
        char *cert;
        char *key;
        bool generated; /* something was made anew rather than reused */
};

void kb_apiserver_tls_init(struct kb_apiserver_tls *t);
void kb_apiserver_tls_release(struct kb_apiserver_tls *t);

/*
 * Fills t from the directory dir: ca.crt and ca.key (a self-signed CA),
 * server.crt and server.key (a certificate the CA signed for 127.0.0.1,
 * ::1, localhost and host).  Files already there are reused while they fit
 * (they load, match their keys, verify, name host, and stay valid for more
 * than a day); a server certificate that does not fit is reissued by the
 * same CA, and a CA that does not fit is replaced with everything else.
 * dir is created (0700) if missing.  Keys are written 0600, certificates
 * 0644.  Returns 0, or a negative errno or KB_EBADINPUT with a message in
 * err.  Any thread.
 */
int kb_apiserver_tls_prepare(struct kb_apiserver_tls *t, const char *dir, const char *host,
                             char *err, size_t errlen);
/* Removes the four files kb_apiserver_tls_prepare writes from dir, then dir
 * itself if that leaves it empty. */
void kb_apiserver_tls_remove(const char *dir);

#define KB_APISERVER_TOKEN_LEN 64
/* Writes a new random token (KB_APISERVER_TOKEN_LEN hex digits from
 * GnuTLS's key-grade generator, then a NUL) to out.  Returns 0 or -EIO. */
int kb_apiserver_token_new(char out[KB_APISERVER_TOKEN_LEN + 1]);
/* Whether s can be a bearer token: 1 to 4096 characters of A-Z a-z 0-9 and
 * "-._~+/=" (RFC 6750's token68, which also keeps it safe in YAML). */
bool kb_apiserver_token_valid(const char *s);

/* A request, transport-independent.  The query is decoded pairs. */
struct kb_api_query {
        const char *key;
        const char *value;
};
struct kb_api_req {
        const char *method;
        const char *path;
        const struct kb_api_query *query;
        size_t nquery;
        const char *content_type; /* NULL when absent */
        const char *accept;
        const char *authorization; /* the Authorization header, NULL when absent */
        const char *user_agent;    /* the User-Agent header, NULL when absent */
        const char *body;
        size_t body_len;
};

struct kb_watch;
struct kb_api_resp {
        int status;
        const char *content_type; /* static string */
        struct kb_buf body;
        char *warning;          /* a Warning header text, or NULL */
        int retry_after;        /* seconds, 0 for none */
        struct kb_watch *watch; /* a watch stream to run, or NULL */
};

/*
 * Answers one request.  resp is initialised here; release it with
 * kb_api_resp_release.  When resp->watch is set the body is empty and the
 * caller streams with kb_apiserver_watch_next.  Any thread.
 */
void kb_apiserver_handle(struct kb_apiserver *srv, const struct kb_api_req *req,
                         struct kb_api_resp *resp);
void kb_api_resp_release(struct kb_api_resp *resp);

/*
 * Waits up to wait seconds for watch output.  Returns >0 with that many
 * bytes at *data (valid until the next call), 0 when nothing came, or -1
 * when the stream is over.  Frees nothing; kb_apiserver_watch_free does.
 */
long kb_apiserver_watch_next(struct kb_watch *w, double wait, const char **data);
void kb_apiserver_watch_free(struct kb_watch *w);

#endif /* KB_PKG_APISERVER_H */

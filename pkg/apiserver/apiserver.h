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
        size_t history;           /* watch events retained (410 beyond); default 1000 */
        size_t max_body;          /* request body limit in bytes; default 3 MiB */
        double bookmark_interval; /* seconds between watch bookmarks; default 30 */
        bool kubelet;             /* simulate kubelets (bound pods run) */
        bool job_controller;      /* simulate the batch/v1 Job controller */
        double tick;              /* simulation period in seconds; default 0.2 */
        /* Faults for tests; all zero means none. */
        double fault_write_rate; /* fraction of binding/status/create writes failed */
        int fault_write_code;    /* 500 or 429 */
        int fault_retry_after;   /* seconds, for 429 */
        int fault_latency_ms;    /* added to every request */
        double fault_watch_close; /* close watch streams after this many seconds */
        double fault_watch_410;   /* fraction of watches from a resourceVersion answered 410 */
        double fault_refuse_from; /* refuse connections from this second after start ... */
        double fault_refuse_for;  /* ... for this long */
        uint64_t seed;            /* for fault rolls and generated names; 0 = from time */
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

/* Writes a kubeconfig for http://host:port atomically (temp file, rename).
 * Returns 0 or -errno. */
int kb_apiserver_write_kubeconfig(const char *path, const char *host, int port);

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
        const char *body;
        size_t body_len;
};

struct kb_watch;
struct kb_api_resp {
        int status;
        const char *content_type; /* static string */
        struct kb_buf body;
        char *warning;           /* a Warning header text, or NULL */
        int retry_after;         /* seconds, 0 for none */
        struct kb_watch *watch;  /* a watch stream to run, or NULL */
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

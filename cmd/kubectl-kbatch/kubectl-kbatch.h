/*
 * What the files of kubectl-kbatch share.  main.c holds the verb table and
 * sits on top; options.c reads the flags and prints the usage from the
 * table it is given; client.c sets up the API client and makes one request
 * at a time; why.c, queues.c and state.c are the verbs, each calling only
 * client.c.  What a verb prints is built by pkg/ctl.
 */
#ifndef KB_CMD_KUBECTL_KBATCH_H
#define KB_CMD_KUBECTL_KBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/base.h"
#include "ctl/ctl.h"
#include "kube/kube.h"

#define KB_VERSION "0.1.0"
#define GROUP_API  "/apis/scheduling.volcano.sh/v1beta1"

/* Exit codes, as every kbatch program has them; GO_ON: not done yet. */
enum { GO_ON = -1, EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* ---- the command line (options.c) ---------------------------------------------- */

struct kk_opts {
        const char *kubeconfig, *context, *ns, *server;
        bool help, version; /* -h/--help or --version was given */
};

struct kk_client;

/*
 * One verb: its name, what it takes (args_min..args_max arguments, -1 for
 * any number; noun names the one a verb of one argument takes, for the
 * error), what its usage line shows after the name (or ""),
 * the paragraph --help shows (lines apart by '\n') and the function that
 * runs it on a client, or with no client for a verb that asks no server.
 * A hidden verb is left out of the usage and of the suggestions.
 */
struct kk_verb {
        const char *name, *args, *noun, *summary;
        int args_min, args_max;
        bool hidden, offline;
        int (*run)(struct kk_client *c, char **args, int nargs);
};

/*
 * Parses argv's flags into o (argv's rest starts at optind after it).
 * Returns GO_ON, EXIT_OK after -h/--help or --version (o says which), or
 * EXIT_USAGE after a bad flag (said on stderr).
 */
int kk_options_parse(int argc, char **argv, struct kk_opts *o);

/* The usage text, built from the verb table. */
void kk_usage(FILE *f, const struct kk_verb *verbs, size_t n);

/* ---- requests (client.c) -------------------------------------------------------- */

struct kk_client {
        uv_loop_t loop;
        struct kb_kube *kube;
        struct kb_kube_config cfg;
        const char *ns;
};

struct kk_reply {
        bool done;
        long status;
        char *body;
        size_t len;
        char *error; /* why no answer came */
};

/* Loads the kubeconfig as kubectl finds it and starts the client; ns is
 * -n's, or NULL.  Returns 0, or EXIT_FAIL after saying why. */
int kk_client_open(struct kk_client *c, const struct kk_opts *o);
void kk_client_close(struct kk_client *c);

void kk_reply_release(struct kk_reply *r);

/* Sends one request and waits for its answer.  Returns 0 when the server
 * answered (any status; r holds it), else says why on stderr and returns
 * EXIT_FAIL. */
int kk_call(struct kk_client *c, const char *method, const char *path, const char *body,
            const char *ctype, struct kk_reply *r);

/* A refusal in kubectl's words; returns EXIT_FAIL. */
int kk_refused(const struct kk_reply *r);

/* The JSON body of a 200 answer (caller frees), or NULL after saying why. */
struct kb_value *kk_body_json(const struct kk_reply *r, const char *what);

/* GETs one object into *obj.  Returns 0 with *obj set (200), 0 with *obj
 * NULL and *served telling whether the resource exists at all (404), or
 * EXIT_FAIL after saying why. */
int kk_get_object(struct kk_client *c, const char *path, const char *what, struct kb_value **obj,
                  bool *served);

/* Kubernetes names (DNS subdomains) need no escaping in a path; anything
 * else is refused before it reaches one. */
bool kk_valid_name(const char *s);

/* ---- the verbs (why.c, queues.c, state.c) ----------------------------------- */

int kk_why(struct kk_client *c, char **args, int nargs);
int kk_queues(struct kk_client *c, char **args, int nargs);
int kk_close(struct kk_client *c, char **args, int nargs);
int kk_open(struct kk_client *c, char **args, int nargs);

#endif

/*
 * kbatch-apiserver's command line: the flags parsed into a struct (flags.c)
 * and the set-up they ask for before the server starts (setup.c).
 */
#ifndef KB_CMD_APISERVER_CLI_H
#define KB_CMD_APISERVER_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "apiserver/apiserver.h"

struct cli {
        struct kb_apiserver_opts o;
        const char *listen, *kubeconfig, *port_file;
        bool allow_remote, help;
        const char **nodes; /* --nodes, in order (the strings are argv's) */
        size_t nnodes, capnodes;
        bool tls, generate_token;
        const char *tls_dir, *token_arg, *token_file;
        /* From --listen (cli_listen). */
        char host[256];
        int port;
};

void cli_usage(FILE *f);
/* Parses argv into c (which it initialises).  Returns 0 (c->help set for
 * --help), or 2 after saying what is wrong. */
int cli_parse(struct cli *c, int argc, char **argv);
void cli_release(struct cli *c);

/* Checks the flags against each other and splits --listen into host and
 * port.  Returns 0, or 2 after saying what is wrong. */
int cli_check(struct cli *c);
/* The token from --token, --token-file or --generate-token into *token
 * (heap; NULL for no authentication), with a warning where the set-up is
 * unsafe.  Returns 0, or 2 after saying what is wrong.  The token itself
 * is never printed. */
int cli_auth(const struct cli *c, char **token);
/* With --tls: the CA and certificate in --tls-cert-dir, or in a new
 * temporary directory (*made_dir, heap, for the caller to remove).
 * Returns 0, or 1 or 2 after saying what is wrong. */
int cli_tls(const struct cli *c, struct kb_apiserver_tls *certs, char **made_dir);
/* Once listening on port: the kubeconfig, the generated token's file and
 * the port file asked for.  Returns 0, or 1 after saying what failed. */
int cli_write_files(const struct cli *c, int port, const char *ca_pem, const char *token);

#endif /* KB_CMD_APISERVER_CLI_H */

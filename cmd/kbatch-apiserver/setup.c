/*
 * What kbatch-apiserver's flags ask for before and once it listens: the
 * listen address, the token, the TLS certificates, and the files it
 * writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"
#include "cmd/kbatch-apiserver/cli.h"

static bool is_loopback(const char *host)
{
        return !strcmp(host, "localhost") || kb_has_prefix(host, "127.");
}

/* Reads a token from the first line of path, blanks around it dropped. */
static int read_token(const char *path, char **out)
{
        char *text;
        int err = kb_read_file(path, &text, NULL);
        if (err)
                return err;
        char *p = text + strspn(text, " \t\r\n");
        size_t n = strcspn(p, "\r\n");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
        *out = kb_xstrndup(p, n);
        explicit_bzero(text, strlen(text));
        free(text);
        return 0;
}

static int cli_token(const struct cli *c, char **token)
{
        const char *arg = c->token_arg, *file = c->token_file;
        bool generate = c->generate_token;
        *token = NULL;
        if (arg && (file || generate)) {
                fprintf(stderr, "kbatch-apiserver: --token: give one of --token, --token-file "
                                "and --generate-token (--token-file names where a generated "
                                "token goes)\n");
                return 2;
        }
        if (generate) {
                char buf[KB_APISERVER_TOKEN_LEN + 1];
                if (kb_apiserver_token_new(buf)) {
                        fprintf(stderr, "kbatch-apiserver: --generate-token: no random bytes\n");
                        return 2;
                }
                *token = kb_xstrdup(buf);
                explicit_bzero(buf, sizeof(buf));
                return 0;
        }
        if (file) {
                int err = read_token(file, token);
                if (err) {
                        fprintf(stderr, "kbatch-apiserver: --token-file %s: %s\n", file,
                                kb_strerror(err));
                        return 2;
                }
        } else if (arg) {
                *token = kb_xstrdup(arg);
        } else {
                return 0;
        }
        if (!kb_apiserver_token_valid(*token)) {
                fprintf(stderr,
                        "kbatch-apiserver: %s: the token must be 1 to 4096 characters of "
                        "A-Z a-z 0-9 - . _ ~ + / =\n",
                        file ? file : "--token");
                explicit_bzero(*token, strlen(*token));
                free(*token);
                *token = NULL;
                return 2;
        }
        return 0;
}

int cli_auth(const struct cli *c, char **token)
{
        int rc = cli_token(c, token);
        if (rc)
                return rc;
        if (*token && !c->tls)
                KB_WARN("a bearer token over plain http: kubectl does not send tokens over http "
                        "(it says \"You must be logged in\"); add --tls");
        if (!*token && !is_loopback(c->host))
                KB_WARN("listening on %s with no token: anyone who can reach it can change "
                        "anything; consider --tls --generate-token",
                        c->host);
        return 0;
}

int cli_check(struct cli *c)
{
        const char *colon = strrchr(c->listen, ':');
        if (!colon || (size_t)(colon - c->listen) >= sizeof(c->host)) {
                fprintf(stderr, "kbatch-apiserver: --listen %s: want HOST:PORT\n", c->listen);
                return 2;
        }
        memcpy(c->host, c->listen, (size_t)(colon - c->listen));
        c->host[colon - c->listen] = 0;
        c->port = atoi(colon + 1);
        if (c->port < 0 || c->port > 65535) {
                fprintf(stderr, "kbatch-apiserver: --listen %s: bad port\n", c->listen);
                return 2;
        }
        if (!is_loopback(c->host) && !c->allow_remote) {
                fprintf(stderr,
                        "kbatch-apiserver: --listen %s: not a loopback address; this server is for "
                        "local use, pass --allow-remote to listen there anyway\n",
                        c->listen);
                return 2;
        }
        if (c->tls_dir && !c->tls) {
                fprintf(stderr, "kbatch-apiserver: --tls-cert-dir needs --tls\n");
                return 2;
        }
        if (c->generate_token && !c->kubeconfig && !c->token_file) {
                fprintf(stderr, "kbatch-apiserver: --generate-token: the token would be written "
                                "nowhere; add --write-kubeconfig or --token-file\n");
                return 2;
        }
        return 0;
}

int cli_tls(const struct cli *c, struct kb_apiserver_tls *certs, char **made_dir)
{
        const char *dir = c->tls_dir;
        if (!kb_apiserver_tls_supported()) {
                fprintf(stderr, "kbatch-apiserver: --tls: this libmicrohttpd was built "
                                "without TLS support\n");
                return 2;
        }
        if (!dir) {
                const char *base = getenv("TMPDIR");
                *made_dir =
                    kb_xasprintf("%s/kbatch-apiserver-tls.XXXXXX", base && base[0] ? base : "/tmp");
                if (!mkdtemp(*made_dir)) {
                        fprintf(stderr, "kbatch-apiserver: %s: %s\n", *made_dir, strerror(errno));
                        free(*made_dir);
                        *made_dir = NULL;
                        return 1;
                }
                dir = *made_dir;
        }
        char err[512];
        if (kb_apiserver_tls_prepare(certs, dir, c->host, err, sizeof(err))) {
                fprintf(stderr, "kbatch-apiserver: --tls: %s\n", err);
                return 1;
        }
        KB_INFO("TLS: %s CA and server certificate in %s (CA: %s/ca.crt)",
                certs->generated ? "made a" : "reusing the", dir, dir);
        return 0;
}

int cli_write_files(const struct cli *c, int port, const char *ca_pem, const char *token)
{
        int err;
        if (c->kubeconfig &&
            (err = kb_apiserver_write_kubeconfig(c->kubeconfig, c->host, port, ca_pem, token))) {
                fprintf(stderr, "kbatch-apiserver: %s: %s\n", c->kubeconfig, kb_strerror(err));
                return 1;
        }
        if (c->generate_token && c->token_file) {
                struct kb_buf b;
                kb_buf_init(&b);
                kb_buf_printf(&b, "%s\n", token);
                err = kb_write_file(c->token_file, b.data, b.len, 0600);
                explicit_bzero(b.data, b.len);
                kb_buf_release(&b);
                if (err) {
                        fprintf(stderr, "kbatch-apiserver: %s: %s\n", c->token_file,
                                kb_strerror(err));
                        return 1;
                }
        }
        if (c->port_file) {
                FILE *f = fopen(c->port_file, "w");
                if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f)) {
                        fprintf(stderr, "kbatch-apiserver: %s: %s\n", c->port_file,
                                strerror(errno));
                        return 1;
                }
        }
        return 0;
}

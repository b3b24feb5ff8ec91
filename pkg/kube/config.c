/*
 * Client configuration: a kubeconfig file (clusters, users and contexts, as
 * kubectl reads them) or the in-cluster service account.
 *
 * File paths inside a kubeconfig are relative to the kubeconfig's directory.
 * Exec credential plugins are read here and run by the client (exec.c);
 * auth-provider users are an error that says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

char *kb_base64_decode(const char *in, size_t *outlen)
{
        size_t n = strlen(in);
        char *out = kb_xmalloc(n / 4 * 3 + 4);
        uint32_t acc = 0;
        int bits = 0;
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)in[i];
                int v;
                if (c >= 'A' && c <= 'Z')
                        v = c - 'A';
                else if (c >= 'a' && c <= 'z')
                        v = c - 'a' + 26;
                else if (c >= '0' && c <= '9')
                        v = c - '0' + 52;
                else if (c == '+' || c == '-')
                        v = 62;
                else if (c == '/' || c == '_')
                        v = 63;
                else if (c == '=' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                else {
                        free(out);
                        return NULL;
                }
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[o++] = (char)((acc >> bits) & 0xff);
                }
        }
        out[o] = 0;
        if (outlen)
                *outlen = o;
        return out;
}

void kb_kube_config_release(struct kb_kube_config *c)
{
        free(c->server);
        free(c->ca_file);
        free(c->ca_data);
        free(c->cert_file);
        free(c->cert_data);
        free(c->key_file);
        free(c->key_data);
        if (c->token)
                memset(c->token, 0, strlen(c->token));
        free(c->token);
        free(c->token_file);
        free(c->namespace);
        if (c->has_exec)
                kb_kube_exec_release(&c->exec);
        memset(c, 0, sizeof(*c));
}

/* The entry of list (clusters, users, contexts) whose name is name, as its
 * inner object (key inner). */
static const struct kb_value *named(const struct kb_value *doc, const char *list, const char *name,
                                    const char *inner)
{
        const struct kb_value *l = kb_value_get(doc, list);
        if (!kb_value_is(l, KB_VARRAY) || !name)
                return NULL;
        for (size_t i = 0; i < l->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(l->arr.v[i], "name")), name))
                        return kb_value_get(l->arr.v[i], inner);
        return NULL;
}

static char *path_in(const char *dir, const char *p)
{
        if (!p || !*p)
                return NULL;
        if (p[0] == '/' || !dir)
                return kb_xstrdup(p);
        return kb_xasprintf("%s/%s", dir, p);
}

static int data_field(const struct kb_value *obj, const char *key, char **out, size_t *len,
                      const char *file, char *err, size_t errlen)
{
        const char *s = kb_value_str(kb_value_get(obj, key));
        if (!s)
                return 0;
        *out = kb_base64_decode(s, len);
        if (!*out) {
                snprintf(err, errlen, "%s: %s: not valid base64", file, key);
                return KB_EBADINPUT;
        }
        return 0;
}

/* users[].user.exec: command, args, env, apiVersion. */
static int load_exec(const struct kb_value *ex, const char *file, const char *uname,
                     const char *dir, struct kb_kube_exec *x, char *err, size_t errlen)
{
        memset(x, 0, sizeof(*x));
        const char *av = kb_value_str(kb_value_get(ex, "apiVersion"));
        const char *cmd = kb_value_str(kb_value_get(ex, "command"));
        if (!kb_streq(av, "client.authentication.k8s.io/v1") &&
            !kb_streq(av, "client.authentication.k8s.io/v1beta1")) {
                snprintf(err, errlen,
                         "%s: users.%s.exec.apiVersion: want client.authentication.k8s.io/v1 or "
                         "v1beta1, got \"%s\"",
                         file, uname, av ? av : "");
                return KB_EBADINPUT;
        }
        if (!cmd || !*cmd) {
                snprintf(err, errlen, "%s: users.%s.exec.command: not set", file, uname);
                return KB_EBADINPUT;
        }
        x->api_version = kb_xstrdup(av);
        /* As client-go: a relative path with a slash is relative to the
         * kubeconfig; a bare name is looked up in PATH. */
        x->command = cmd[0] != '/' && strchr(cmd, '/') && dir ? kb_xasprintf("%s/%s", dir, cmd)
                                                              : kb_xstrdup(cmd);
        const struct kb_value *args = kb_value_get(ex, "args");
        size_t na = kb_value_is(args, KB_VARRAY) ? args->arr.n : 0;
        x->args = kb_xcalloc(na + 1, sizeof(*x->args));
        for (size_t i = 0; i < na; i++) {
                const char *a = kb_value_str(args->arr.v[i]);
                if (!a) {
                        snprintf(err, errlen, "%s: users.%s.exec.args[%zu]: not a string", file,
                                 uname, i);
                        return KB_EBADINPUT;
                }
                x->args[x->nargs++] = kb_xstrdup(a);
        }
        const struct kb_value *env = kb_value_get(ex, "env");
        size_t ne = kb_value_is(env, KB_VARRAY) ? env->arr.n : 0;
        x->env = kb_xcalloc(ne + 1, sizeof(*x->env));
        for (size_t i = 0; i < ne; i++) {
                const char *n = kb_value_str(kb_value_get(env->arr.v[i], "name"));
                const char *v = kb_value_str(kb_value_get(env->arr.v[i], "value"));
                if (!n || !*n || strchr(n, '=') || !v) {
                        snprintf(err, errlen, "%s: users.%s.exec.env[%zu]: want a name and a value",
                                 file, uname, i);
                        return KB_EBADINPUT;
                }
                x->env[x->nenv++] = kb_xasprintf("%s=%s", n, v);
        }
        return 0;
}

int kb_kube_config_parse(const char *text, size_t len, const char *file, const char *context,
                         struct kb_kube_config *c, char *err, size_t errlen)
{
        char *dir = NULL;
        size_t ndocs = 0;
        struct kb_value **docs = NULL;
        char perr[256];
        int rc = KB_EBADINPUT;
        memset(c, 0, sizeof(*c));
        if (kb_yaml_parse(text, len, &docs, &ndocs, perr, sizeof(perr))) {
                snprintf(err, errlen, "%s: %s", file, perr);
                goto out;
        }
        if (ndocs != 1 || !kb_value_is(docs[0], KB_VOBJECT)) {
                snprintf(err, errlen, "%s: not a kubeconfig", file);
                goto out;
        }
        const struct kb_value *doc = docs[0];
        const char *slash = strrchr(file, '/');
        if (slash)
                dir = kb_xstrndup(file, (size_t)(slash - file));
        if (!context)
                context = kb_value_str(kb_value_get(doc, "current-context"));
        if (!context || !*context) {
                snprintf(err, errlen, "%s: current-context: not set and no --context given", file);
                goto out;
        }
        const struct kb_value *ctx = named(doc, "contexts", context, "context");
        if (!ctx) {
                snprintf(err, errlen, "%s: contexts: no context named \"%s\"", file, context);
                goto out;
        }
        const char *cname = kb_value_str(kb_value_get(ctx, "cluster"));
        const char *uname = kb_value_str(kb_value_get(ctx, "user"));
        const struct kb_value *cl = named(doc, "clusters", cname, "cluster");
        if (!cl) {
                snprintf(err, errlen, "%s: clusters: no cluster named \"%s\" (context %s)", file,
                         cname ? cname : "", context);
                goto out;
        }
        const char *ns = kb_value_str(kb_value_get(ctx, "namespace"));
        c->namespace = ns ? kb_xstrdup(ns) : NULL;
        const char *server = kb_value_str(kb_value_get(cl, "server"));
        if (server)
                c->server = kb_xstrdup(server);
        c->insecure = kb_value_bool(kb_value_get(cl, "insecure-skip-tls-verify"), false);
        c->ca_file = path_in(dir, kb_value_str(kb_value_get(cl, "certificate-authority")));
        if (data_field(cl, "certificate-authority-data", &c->ca_data, &c->ca_len, file, err,
                       errlen))
                goto out;
        const struct kb_value *u = named(doc, "users", uname, "user");
        if (uname && *uname && !u) {
                snprintf(err, errlen, "%s: users: no user named \"%s\" (context %s)", file, uname,
                         context);
                goto out;
        }
        if (u) {
                if (kb_value_get(u, "auth-provider")) {
                        snprintf(err, errlen,
                                 "%s: users.%s: auth-provider credentials are not supported; use "
                                 "exec, a token, tokenFile or client certificate",
                                 file, uname);
                        goto out;
                }
                const struct kb_value *ex = kb_value_get(u, "exec");
                if (ex) {
                        c->has_exec = true;
                        if (load_exec(ex, file, uname, dir, &c->exec, err, errlen))
                                goto out;
                }
                c->cert_file = path_in(dir, kb_value_str(kb_value_get(u, "client-certificate")));
                c->key_file = path_in(dir, kb_value_str(kb_value_get(u, "client-key")));
                if (data_field(u, "client-certificate-data", &c->cert_data, &c->cert_len, file, err,
                               errlen) ||
                    data_field(u, "client-key-data", &c->key_data, &c->key_len, file, err, errlen))
                        goto out;
                const char *tok = kb_value_str(kb_value_get(u, "token"));
                if (tok && *tok)
                        c->token = kb_xstrdup(tok);
                c->token_file = path_in(dir, kb_value_str(kb_value_get(u, "tokenFile")));
        }
        rc = 0;
out:
        kb_value_free_docs(docs, ndocs);
        free(dir);
        if (rc)
                kb_kube_config_release(c);
        return rc;
}

static int load_file(const char *file, const char *context, struct kb_kube_config *c, char *err,
                     size_t errlen)
{
        char *text = NULL;
        size_t len = 0;
        int rc = kb_read_file(file, &text, &len);
        if (rc) {
                snprintf(err, errlen, "%s: %s", file, kb_strerror(rc));
                return KB_EBADINPUT;
        }
        rc = kb_kube_config_parse(text, len, file, context, c, err, errlen);
        free(text);
        return rc;
}

static int load_in_cluster(struct kb_kube_config *c, char *err, size_t errlen)
{
        const char *host = getenv("KUBERNETES_SERVICE_HOST");
        const char *port = getenv("KUBERNETES_SERVICE_PORT");
        if (!host || !*host || !port || !*port) {
                snprintf(err, errlen, "in-cluster: KUBERNETES_SERVICE_HOST/PORT not set");
                return KB_EBADINPUT;
        }
        /* An IPv6 address needs brackets in a URL. */
        if (strchr(host, ':'))
                c->server = kb_xasprintf("https://[%s]:%s", host, port);
        else
                c->server = kb_xasprintf("https://%s:%s", host, port);
        c->token_file = kb_xstrdup(SA_DIR "/token");
        c->ca_file = kb_xstrdup(SA_DIR "/ca.crt");
        char *ns = NULL;
        size_t n;
        if (kb_read_file(SA_DIR "/namespace", &ns, &n) == 0) {
                while (n && (ns[n - 1] == '\n' || ns[n - 1] == ' '))
                        ns[--n] = 0;
                c->namespace = ns;
        }
        return 0;
}

int kb_kube_config_load(const char *kubeconfig, const char *context, const char *master,
                        struct kb_kube_config *c, char *err, size_t errlen)
{
        int rc;
        memset(c, 0, sizeof(*c));
        const char *env = getenv("KUBECONFIG");
        char *home = NULL;
        if (kubeconfig && *kubeconfig) {
                rc = load_file(kubeconfig, context, c, err, errlen);
        } else if (env && *env) {
                /* A list of files: the first one is used. */
                char *first = kb_xstrndup(env, strcspn(env, ":"));
                rc = load_file(first, context, c, err, errlen);
                free(first);
        } else if (getenv("KUBERNETES_SERVICE_HOST")) {
                rc = load_in_cluster(c, err, errlen);
        } else if (master && *master) {
                rc = 0;
        } else {
                const char *h = getenv("HOME");
                home = kb_xasprintf("%s/.kube/config", h ? h : "");
                rc = load_file(home, context, c, err, errlen);
        }
        free(home);
        if (rc)
                goto fail;
        if (master && *master) {
                free(c->server);
                c->server = kb_xstrdup(master);
        }
        if (!c->server || !*c->server) {
                snprintf(err, errlen, "%s: server: not set",
                         kubeconfig ? kubeconfig : "kubeconfig");
                rc = KB_EBADINPUT;
                goto fail;
        }
        size_t sl = strlen(c->server);
        while (sl > 0 && c->server[sl - 1] == '/')
                c->server[--sl] = 0;
        if (!strstr(c->server, "://")) {
                char *s = kb_xasprintf("https://%s", c->server);
                free(c->server);
                c->server = s;
        }
        return 0;
fail:
        kb_kube_config_release(c);
        return rc;
}

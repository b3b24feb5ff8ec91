/*
 * Exec credential plugins (client.authentication.k8s.io ExecCredential), as
 * kubectl runs them for a kubeconfig user with an "exec" stanza: the
 * command runs with the user's args and env added to ours, and
 * KUBERNETES_EXEC_INFO set to an ExecCredential naming the apiVersion and
 * saying the session is not interactive; stdin is /dev/null, stderr is
 * ours (plugins write their prompts and errors there), and stdout is one
 * ExecCredential whose status holds a token or a client certificate and
 * key, and optionally an expirationTimestamp after which it is run again.
 *
 * posix_spawn rather than fork: the daemon has other threads (libuv's
 * pool, the HTTP endpoints), and after a fork only async-signal-safe calls
 * are allowed.  The plugin's output is read with a deadline, so a plugin
 * that hangs fails instead of stopping the loop for good.
 *
 * The output holds secrets: it is never logged, and freed buffers that held
 * it are wiped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube/kube.h"

extern char **environ;

#define EXEC_TIMEOUT 30.0 /* seconds for the plugin to answer */
#define EXEC_MAX_OUT (1 << 20)

static void wipe_free(char *p, size_t n)
{
        if (p) {
                memset(p, 0, n);
                free(p);
        }
}

void kb_kube_exec_release(struct kb_kube_exec *x)
{
        if (!x)
                return;
        free(x->api_version);
        free(x->command);
        for (size_t i = 0; i < x->nargs; i++)
                free(x->args[i]);
        free(x->args);
        for (size_t i = 0; i < x->nenv; i++)
                free(x->env[i]);
        free(x->env);
        memset(x, 0, sizeof(*x));
}

void kb_kube_exec_copy(struct kb_kube_exec *dst, const struct kb_kube_exec *src)
{
        memset(dst, 0, sizeof(*dst));
        dst->api_version = kb_xstrdup(src->api_version);
        dst->command = kb_xstrdup(src->command);
        dst->nargs = src->nargs;
        dst->args = kb_xcalloc(src->nargs + 1, sizeof(*dst->args));
        for (size_t i = 0; i < src->nargs; i++)
                dst->args[i] = kb_xstrdup(src->args[i]);
        dst->nenv = src->nenv;
        dst->env = kb_xcalloc(src->nenv + 1, sizeof(*dst->env));
        for (size_t i = 0; i < src->nenv; i++)
                dst->env[i] = kb_xstrdup(src->env[i]);
}

void kb_kube_cred_release(struct kb_kube_cred *c)
{
        if (c->token)
                wipe_free(c->token, strlen(c->token));
        wipe_free(c->cert, c->cert_len);
        wipe_free(c->key, c->key_len);
        memset(c, 0, sizeof(*c));
}

/* Reads fd to EOF or the deadline.  Returns 0, or -ETIMEDOUT / -EFBIG /
 * -errno. */
static int read_all(int fd, struct kb_buf *out, double deadline)
{
        char buf[4096];
        for (;;) {
                double left = deadline - kb_now_mono();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int rc = poll(&p, 1, (int)(left * 1000) + 1);
                if (rc < 0 && errno == EINTR)
                        continue;
                if (rc < 0)
                        return -errno;
                if (rc == 0)
                        continue;
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                kb_buf_add(out, buf, (size_t)n);
                memset(buf, 0, (size_t)n);
                if (out->len > EXEC_MAX_OUT)
                        return -EFBIG;
        }
}

/* The environment for the plugin: ours, the user's env entries (which win),
 * and KUBERNETES_EXEC_INFO. */
static char **plugin_env(const struct kb_kube_exec *x, char **info_out)
{
        size_t n = 0;
        while (environ && environ[n])
                n++;
        char **env = kb_xcalloc(n + x->nenv + 2, sizeof(*env));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                const char *eq = strchr(environ[i], '=');
                size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
                bool overridden = nl == strlen("KUBERNETES_EXEC_INFO") &&
                                  !strncmp(environ[i], "KUBERNETES_EXEC_INFO", nl);
                for (size_t j = 0; j < x->nenv && !overridden; j++)
                        overridden = !strncmp(x->env[j], environ[i], nl) && x->env[j][nl] == '=';
                if (!overridden)
                        env[k++] = environ[i];
        }
        for (size_t j = 0; j < x->nenv; j++)
                env[k++] = x->env[j];
        *info_out = kb_xasprintf("KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":"
                                 "\"ExecCredential\",\"spec\":{\"interactive\":false}}",
                                 x->api_version);
        env[k++] = *info_out;
        env[k] = NULL;
        return env;
}

KB_TESTABLE int kb__exec_parse_cred(const char *who, const struct kb_kube_exec *x, const char *text,
                                    size_t len, struct kb_kube_cred *out, char *err, size_t errlen)
{
        struct kb_value *doc = NULL;
        int rc = KB_EBADINPUT;
        if (kb_json_parse(text, len, &doc, NULL, 0) != 0 || !kb_value_is(doc, KB_VOBJECT)) {
                snprintf(err, errlen, "%s: the output is not an ExecCredential JSON object", who);
                goto out;
        }
        const char *kind = kb_value_str(kb_value_get(doc, "kind"));
        const char *av = kb_value_str(kb_value_get(doc, "apiVersion"));
        if (!kb_streq(kind, "ExecCredential")) {
                snprintf(err, errlen, "%s: kind: want ExecCredential, got \"%s\"", who,
                         kind ? kind : "");
                goto out;
        }
        if (!kb_streq(av, x->api_version)) {
                snprintf(err, errlen, "%s: apiVersion: want %s (the kubeconfig's), got \"%s\"", who,
                         x->api_version, av ? av : "");
                goto out;
        }
        const struct kb_value *st = kb_value_get(doc, "status");
        const char *tok = kb_value_str(kb_value_get(st, "token"));
        const char *cert = kb_value_str(kb_value_get(st, "clientCertificateData"));
        const char *key = kb_value_str(kb_value_get(st, "clientKeyData"));
        const char *exp = kb_value_str(kb_value_get(st, "expirationTimestamp"));
        if ((cert && *cert) != (key && *key)) {
                snprintf(err, errlen,
                         "%s: status: clientCertificateData and clientKeyData come together", who);
                goto out;
        }
        if (!(tok && *tok) && !(cert && *cert)) {
                snprintf(err, errlen,
                         "%s: status: neither a token nor clientCertificateData/clientKeyData",
                         who);
                goto out;
        }
        double expiry = 0;
        if (exp && *exp && kb_parse_time(exp, &expiry)) {
                snprintf(err, errlen, "%s: status.expirationTimestamp: not RFC 3339: \"%s\"", who,
                         exp);
                goto out;
        }
        memset(out, 0, sizeof(*out));
        if (tok && *tok)
                out->token = kb_xstrdup(tok);
        if (cert && *cert) {
                out->cert = kb_xstrdup(cert);
                out->cert_len = strlen(cert);
                out->key = kb_xstrdup(key);
                out->key_len = strlen(key);
        }
        out->expiry = expiry;
        rc = 0;
out:
        kb_value_free(doc); /* the raw output is wiped by the caller */
        return rc;
}

int kb_kube_exec_credential(const struct kb_kube_exec *x, struct kb_kube_cred *out, char *err,
                            size_t errlen)
{
        char who[300];
        snprintf(who, sizeof(who), "exec credential plugin %s", x->command);
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) != 0) {
                snprintf(err, errlen, "%s: pipe: %s", who, strerror(errno));
                return KB_EBADINPUT;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
        /* The daemon blocks its shutdown signals in every thread; the
         * plugin starts with none blocked and default handlers. */
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t none, dflt;
        sigemptyset(&none);
        sigemptyset(&dflt);
        sigaddset(&dflt, SIGTERM);
        sigaddset(&dflt, SIGINT);
        sigaddset(&dflt, SIGUSR1);
        sigaddset(&dflt, SIGPIPE);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &dflt);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        char **argv = kb_xcalloc(x->nargs + 2, sizeof(*argv));
        argv[0] = x->command;
        for (size_t i = 0; i < x->nargs; i++)
                argv[i + 1] = x->args[i];
        char *info = NULL;
        char **env = plugin_env(x, &info);
        pid_t pid;
        /* A command with a slash is a path; without, it is looked up in
         * PATH, as kubectl does. */
        int src = strchr(x->command, '/') ? posix_spawn(&pid, x->command, &fa, &attr, argv, env)
                                          : posix_spawnp(&pid, x->command, &fa, &attr, argv, env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        free(argv);
        free(env);
        free(info);
        close(pipefd[1]);
        if (src != 0) {
                close(pipefd[0]);
                snprintf(err, errlen, "%s: cannot run it: %s", who, strerror(src));
                return KB_EBADINPUT;
        }
        struct kb_buf o;
        kb_buf_init(&o);
        int rrc = read_all(pipefd[0], &o, kb_now_mono() + EXEC_TIMEOUT);
        close(pipefd[0]);
        if (rrc)
                kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        int rc = KB_EBADINPUT;
        if (rrc == -ETIMEDOUT)
                snprintf(err, errlen, "%s: no answer in %.0fs", who, EXEC_TIMEOUT);
        else if (rrc)
                snprintf(err, errlen, "%s: reading its output: %s", who, strerror(-rrc));
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                snprintf(err, errlen, "%s: exited with %s %d", who,
                         WIFEXITED(status) ? "status" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        else
                rc = kb__exec_parse_cred(who, x, o.data ? o.data : "", o.len, out, err, errlen);
        if (o.data)
                memset(o.data, 0, o.len);
        kb_buf_release(&o);
        return rc;
}

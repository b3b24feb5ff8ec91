/*
 * Fuzz target: kubeconfig files.  Any bytes given as a kubeconfig (YAML or
 * JSON: contexts, clusters, users with tokens, certificate data in
 * base64, exec credential plugins) are loaded or rejected with a message
 * naming the file and field; never a crash, a leak or a sanitizer report.
 * The first byte picks the context asked for: the file's current one or a
 * named one.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kb_log_set_hook(quiet, NULL);
        if (size < 1)
                return 0;
        static const char *const contexts[] = {NULL, "kbatch", "other", ""};
        const char *context = contexts[data[0] & 3];
        struct kb_kube_config cfg;
        char err[512];
        if (kb_kube_config_parse((const char *)data + 1, size - 1, "/fuzz/dir/kubeconfig", context,
                                 &cfg, err, sizeof(err)) == 0) {
                /* What a client would copy. */
                if (cfg.has_exec) {
                        struct kb_kube_exec x;
                        kb_kube_exec_copy(&x, &cfg.exec);
                        kb_kube_exec_release(&x);
                }
                kb_kube_config_release(&cfg);
        } else if (!err[0]) {
                __builtin_trap(); /* a rejection always says why */
        }
        return 0;
}

/*
 * Fuzz target: what an exec credential plugin prints (an ExecCredential:
 * kind, apiVersion, status.token or clientCertificateData and
 * clientKeyData, status.expirationTimestamp), read as the client reads it
 * once the plugin has exited 0 (exec.c).  Byte 0 picks the apiVersion the
 * kubeconfig asks for (v1 or v1beta1); the rest is the plugin's output.
 * The output is accepted or refused with a message, and a refusal never
 * repeats the token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        static char *const versions[] = {"client.authentication.k8s.io/v1",
                                         "client.authentication.k8s.io/v1beta1"};
        struct kb_kube_exec x = {.api_version = versions[data[0] & 1], .command = "plugin"};
        const char *text = (const char *)data + 1;
        size_t len = size - 1;
        struct kb_kube_cred cred;
        char err[1024];
        err[0] = 0;
        if (kb__exec_parse_cred("exec plugin", &x, text, len, &cred, err, sizeof(err)) == 0) {
                if (!cred.token && !cred.cert)
                        __builtin_trap(); /* accepted means something to send */
                kb_kube_cred_release(&cred);
                return 0;
        }
        if (!err[0])
                __builtin_trap();
        /* The token must not show in the message: with any other
         * (non-empty) token the message is the same. */
        struct kb_value *doc = NULL;
        if (kb_json_parse(text, len, &doc, NULL, 0) == 0) {
                struct kb_value *st = kb_value_get(doc, "status");
                const char *tok = kb_value_str(kb_value_get(st, "token"));
                if (tok && *tok && kb_value_is(doc, KB_VOBJECT)) {
                        kb_value_set(st, "token", kb_value_new_string("T"));
                        char *other = kb_json_emit(doc, false);
                        char err2[sizeof(err)];
                        err2[0] = 0;
                        if (kb__exec_parse_cred("exec plugin", &x, other, strlen(other), &cred,
                                                err2, sizeof(err2)) == 0)
                                __builtin_trap(); /* the token alone decided */
                        if (strcmp(err, err2))
                                __builtin_trap(); /* the message shows the token */
                        free(other);
                }
        }
        kb_value_free(doc);
        return 0;
}

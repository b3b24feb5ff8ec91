/*
 * Fuzz target: protobuf request bodies (application/vnd.kubernetes.protobuf,
 * what client-go sends for built-in kinds): the "k8s\0" magic, the
 * runtime.Unknown envelope and the object inside it, decoded into the JSON
 * tree the rest of kbatch-apiserver works on (protobuf.c).  A body decodes
 * or is refused with a message; what decodes is emitted as JSON and freed.
 * The input is the body; the magic is put in front when the input lacks
 * it, so that mutations reach the envelope.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver-http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *body = malloc(size + 4);
        size_t len = size;
        if (size >= 4 && !memcmp(data, "k8s\0", 4)) {
                memcpy(body, data, size);
        } else {
                memcpy(body, "k8s\0", 4);
                memcpy(body + 4, data, size);
                len += 4;
        }
        struct kb_value *v = NULL;
        char err[512];
        err[0] = 0;
        if (kb__protobuf_decode(body, len, &v, err, sizeof(err)) == 0) {
                free(kb_json_emit(v, false));
                kb_value_free(v);
        } else if (!err[0] || v) {
                __builtin_trap(); /* a refusal says why, and leaves nothing */
        }
        free(body);
        return 0;
}

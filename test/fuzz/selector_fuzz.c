/*
 * Fuzz target: label and field selectors as list and watch take them
 * (?labelSelector=, ?fieldSelector=; kbatch-apiserver's select.c).  Input:
 *   byte 0       bit 0: a field selector, else a label selector
 *   up to '\n'   the selector text
 *   the rest     an object to match, as JSON (a fixed pod when it does not
 *                parse)
 * A selector parses or is refused with a message; one that parses is
 * matched against the object and against objects without labels or
 * fields, and freed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver-int.h"

static const char pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
    "\"labels\":{\"app\":\"web\",\"tier\":\"1\",\"example.com/x\":\"\"}},"
    "\"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"kbatch\"},"
    "\"status\":{\"phase\":\"Running\"}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        bool fields = data[0] & 1;
        const char *rest = (const char *)data + 1;
        size_t n = size - 1;
        const char *nl = memchr(rest, '\n', n);
        char *text = strndup(rest, nl ? (size_t)(nl - rest) : n);
        struct kb_value *obj = NULL, *empty = kb_value_new(KB_VOBJECT);
        if (!nl || kb_json_parse(nl + 1, n - (size_t)(nl - rest) - 1, &obj, NULL, 0) != 0)
                kb_json_parse(pod, sizeof(pod) - 1, &obj, NULL, 0);
        struct kb_selector *sel = NULL;
        char err[512];
        err[0] = 0;
        if (kb__selector_parse(text, fields, &sel, err, sizeof(err)) == 0) {
                kb__selector_match(sel, obj);
                kb__selector_match(sel, empty);
                kb__selector_free(sel);
        } else if (!err[0]) {
                __builtin_trap(); /* a refusal says why */
        }
        if (fields) {
                /* The dotted path on its own, as field selectors read it. */
                char buf[64];
                kb__field_text(obj, text, buf, sizeof(buf));
        }
        kb_value_free(obj);
        kb_value_free(empty);
        free(text);
        return 0;
}

/*
 * Fuzz target: the small grammars every object field leans on — Kubernetes
 * quantities ("1.5Gi", "500m", "1e3"), Go durations ("1h30m", "250ms";
 * kbatch.io/runtime, inqueueTimeout), and the group-min-member
 * annotation.  The input, up to its first NUL, is given to each parser.
 * What parses must also survive the way back: a quantity formatted as
 * kubectl prints it parses to the same value, a duration formatted parses
 * to the same nanoseconds, a min-member is >= 0.  A rejection must say why
 * where the parser says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = strndup((const char *)data, size);
        char buf[128], why[256];

        for (int milli = 0; milli < 2; milli++) {
                int64_t v;
                if (kb_quantity_parse(s, milli, &v) != 0)
                        continue;
                for (int binary = 0; binary < 2; binary++) {
                        int64_t back;
                        kb_quantity_format(v, milli, binary, buf, sizeof(buf));
                        if (kb_quantity_parse(buf, milli, &back) != 0 || back != v)
                                __builtin_trap(); /* what is printed reads back */
                }
                kb_quantity_human((double)v, milli, true, buf, sizeof(buf));
                kb_quantity_human((double)v, milli, false, buf, sizeof(buf));
        }

        int64_t ns;
        why[0] = 0;
        if (kb_duration_parse(s, &ns, why, sizeof(why)) == 0) {
                int64_t back;
                kb_duration_format(ns, buf, sizeof(buf));
                if (kb_duration_parse(buf, &back, why, sizeof(why)) != 0 || back != ns)
                        __builtin_trap();
        } else if (!why[0]) {
                __builtin_trap();
        }

        int32_t mm;
        why[0] = 0;
        if (kb_min_member_parse(s, &mm, why, sizeof(why)) == 0) {
                if (mm < 0)
                        __builtin_trap();
        } else if (!why[0]) {
                __builtin_trap();
        }
        free(s);
        return 0;
}

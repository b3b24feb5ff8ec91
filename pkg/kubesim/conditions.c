/*
 * Status conditions as the simulated kubelets and controllers write them:
 * {type, status, lastProbeTime, lastTransitionTime, reason}.
 */
#include "kubesim/kubesim-int.h"

#include <string.h>

struct kb_value *kb__condition(const char *type, const char *status, const char *reason,
                               const char *ts)
{
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "type", kb_value_new_string(type));
        kb_value_set(c, "status", kb_value_new_string(status));
        kb_value_set(c, "lastProbeTime", kb_value_new(KB_VNULL));
        kb_value_set(c, "lastTransitionTime", kb_value_new_string(ts));
        if (reason)
                kb_value_set(c, "reason", kb_value_new_string(reason));
        return c;
}

void kb__set_condition(struct kb_value *conds, struct kb_value *c)
{
        const char *type = kb_value_str(kb_value_get(c, "type"));
        for (size_t i = 0; i < conds->arr.n; i++) {
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), type)) {
                        kb_value_free(conds->arr.v[i]);
                        conds->arr.v[i] = c;
                        return;
                }
        }
        kb_value_append(conds, c);
}

struct kb_value *kb__conds_of(struct kb_value *st)
{
        struct kb_value *conds = kb_value_get(st, "conditions");
        if (!kb_value_is(conds, KB_VARRAY)) {
                conds = kb_value_new(KB_VARRAY);
                kb_value_set(st, "conditions", conds);
        }
        return conds;
}

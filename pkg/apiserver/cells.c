/*
 * The cells of server-side printing that every printer uses: a string, an
 * age (humanised as upstream's HumanDuration), the object's name.
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>

void kb__age_of(const char *ts, char *buf, size_t n)
{
        double t;
        if (!ts || kb_parse_time(ts, &t)) {
                snprintf(buf, n, "<unknown>");
                return;
        }
        kb_human_duration(kb__now() - t, buf, n);
}

void kb__cell_str(struct kb_value *cells, const char *s)
{
        kb_value_append(cells, kb_value_new_string(s && s[0] ? s : "<none>"));
}

void kb__cell_age(struct kb_value *cells, const struct kb_value *obj)
{
        char buf[32];
        kb__age_of(kb__meta_str(obj, "creationTimestamp"), buf, sizeof(buf));
        kb_value_append(cells, kb_value_new_string(buf));
}

void kb__cell_name(struct kb_value *cells, const struct kb_value *obj)
{
        const char *n = kb__meta_str(obj, "name");
        kb_value_append(cells, kb_value_new_string(n ? n : ""));
}

/*
 * HyperNodes (topology.volcano.sh/v1alpha1) and label selectors.
 *
 * A HyperNode names a network topology domain and its members:
 *
 *   spec:
 *     tier: 1                      # 1 is the closest to the nodes
 *     tierName: rack               # optional
 *     members:
 *     - type: Node                 # or HyperNode
 *       selector:                  # exactly one of:
 *         exactMatch: {name: n1}
 *         regexMatch: {pattern: "^rack1-"}
 *         labelMatch: {matchLabels: {rack: r1}, matchExpressions: [...]}
 *
 * The decoder checks what one object can say about itself (a tier >= 0, a
 * known member type, one selector, a pattern that compiles); whether the
 * members exist and fit together is the session's business
 * (pkg/framework/topology.c), so that one bad object never stops the rest.
 *
 * Patterns.  Volcano matches names with Go's regexp (RE2), unanchored;
 * kbatch compiles them as POSIX extended expressions, also unanchored, and
 * first rewrites RE2's character class escapes (\d \w \s and their
 * negations) into bracket expressions, so "^node-\d+$" means what it means
 * to Volcano.  RE2-only syntax POSIX lacks ((?i), non-greedy repeats) does
 * not compile and is refused with the field named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

/* ---- patterns ----------------------------------------------------------- */

/* The bracket-expression body for an RE2 class escape letter, or NULL. */
static const char *class_body(char c)
{
        switch (c) {
        case 'd':
        case 'D':
                return "0-9";
        case 'w':
        case 'W':
                return "A-Za-z0-9_";
        case 's':
        case 'S':
                return "[:space:]";
        default:
                return NULL;
        }
}

/*
 * RE2 text as POSIX extended: \d, \w, \s (and \D, \W, \S) become bracket
 * expressions, inside brackets their bodies; a backslash before another
 * character inside brackets escapes it in RE2 but is literal in POSIX, so
 * it is dropped there.  Everything else is passed through.
 */
static char *posix_pattern(const char *re2)
{
        struct kb_buf b;
        bool in_bracket = false;
        kb_buf_init(&b);
        for (const char *p = re2; *p; p++) {
                if (*p == '\\' && p[1]) {
                        const char *body = class_body(p[1]);
                        bool neg = p[1] == 'D' || p[1] == 'W' || p[1] == 'S';
                        p++;
                        if (body && in_bracket)
                                kb_buf_adds(&b, body);
                        else if (body)
                                kb_buf_printf(&b, "[%s%s]", neg ? "^" : "", body);
                        else if (in_bracket)
                                kb_buf_addc(&b, *p);
                        else {
                                kb_buf_addc(&b, '\\');
                                kb_buf_addc(&b, *p);
                        }
                        continue;
                }
                if (!in_bracket && *p == '[') {
                        in_bracket = true;
                        kb_buf_addc(&b, *p);
                        /* A ']' first (after an optional '^') is literal. */
                        if (p[1] == '^')
                                kb_buf_addc(&b, *++p);
                        if (p[1] == ']')
                                kb_buf_addc(&b, *++p);
                        continue;
                }
                if (in_bracket && *p == '[' && p[1] == ':') {
                        const char *end = strstr(p + 2, ":]");
                        if (end) {
                                kb_buf_add(&b, p, (size_t)(end + 2 - p));
                                p = end + 1;
                                continue;
                        }
                }
                if (in_bracket && *p == ']')
                        in_bracket = false;
                kb_buf_addc(&b, *p);
        }
        return kb_buf_detach(&b);
}

bool kb_hn_member_matches(const struct kb_hn_member *m, const char *name,
                          const struct kb_meta *meta)
{
        switch (m->match) {
        case KB_HN_EXACT:
                return kb_streq(m->name, name);
        case KB_HN_REGEX:
                return m->regex && regexec(m->regex, name, 0, NULL, 0) == 0;
        case KB_HN_LABEL:
                return m->type == KB_HN_NODE && meta && kb_label_selector_matches(&m->labels, meta);
        }
        return false;
}

/* ---- HyperNodes --------------------------------------------------------- */

static void member_release(struct kb_hn_member *m)
{
        free(m->name);
        free(m->pattern);
        if (m->regex) {
                regfree(m->regex);
                free(m->regex);
        }
        kb__api_label_selector_release(&m->labels);
}

void kb_hypernode_free(struct kb_hypernode *hn)
{
        if (!hn)
                return;
        kb_meta_release(&hn->meta);
        free(hn->tier_name);
        for (size_t i = 0; i < hn->nmembers; i++)
                member_release(&hn->members[i]);
        free(hn->members);
        free(hn);
}

static int compile_pattern(struct kb__api_dec *d, const char *path, struct kb_hn_member *m)
{
        if (!m->pattern || !m->pattern[0])
                return kb__api_fail(d, path, "required");
        char *posix = posix_pattern(m->pattern);
        m->regex = kb_xmalloc(sizeof(*m->regex));
        int rc = regcomp(m->regex, posix, REG_EXTENDED | REG_NOSUB);
        free(posix);
        if (rc == 0)
                return 0;
        char why[160];
        regerror(rc, m->regex, why, sizeof(why));
        free(m->regex);
        m->regex = NULL;
        return kb__api_fail(d, path, "invalid regular expression \"%s\": %s", m->pattern, why);
}

static int decode_member(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                         struct kb_hn_member *m)
{
        char p[KB__API_PATH];
        char *type = NULL;
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.type", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "type"), p, &type)))
                return rc;
        if (kb_streq(type, "Node"))
                m->type = KB_HN_NODE;
        else if (kb_streq(type, "HyperNode"))
                m->type = KB_HN_HYPERNODE;
        else
                rc = type && type[0]
                         ? kb__api_fail(d, p, "must be Node or HyperNode, got \"%s\"", type)
                         : kb__api_fail(d, p, "required");
        free(type);
        if (rc)
                return rc;

        const struct kb_value *sel = kb_value_get(v, "selector");
        kb__api_path(p, sizeof(p), "%s.selector", path);
        if ((rc = kb__api_object(d, sel, p)))
                return rc;
        const struct kb_value *exact = kb_value_get(sel, "exactMatch");
        const struct kb_value *regex = kb_value_get(sel, "regexMatch");
        const struct kb_value *label = kb_value_get(sel, "labelMatch");
        int n = kb__api_set(exact) + kb__api_set(regex) + kb__api_set(label);
        if (n != 1)
                return kb__api_fail(d, p,
                                    n ? "exactly one of exactMatch, regexMatch and labelMatch "
                                        "may be set"
                                      : "one of exactMatch, regexMatch and labelMatch is required");
        if (kb__api_set(exact)) {
                m->match = KB_HN_EXACT;
                kb__api_path(p, sizeof(p), "%s.selector.exactMatch", path);
                if ((rc = kb__api_object(d, exact, p)))
                        return rc;
                kb__api_path(p, sizeof(p), "%s.selector.exactMatch.name", path);
                if ((rc = kb__api_str(d, kb_value_get(exact, "name"), p, &m->name)))
                        return rc;
                if (!m->name || !m->name[0])
                        return kb__api_fail(d, p, "required");
        } else if (kb__api_set(regex)) {
                m->match = KB_HN_REGEX;
                kb__api_path(p, sizeof(p), "%s.selector.regexMatch", path);
                if ((rc = kb__api_object(d, regex, p)))
                        return rc;
                kb__api_path(p, sizeof(p), "%s.selector.regexMatch.pattern", path);
                if ((rc = kb__api_str(d, kb_value_get(regex, "pattern"), p, &m->pattern)) ||
                    (rc = compile_pattern(d, p, m)))
                        return rc;
        } else {
                m->match = KB_HN_LABEL;
                kb__api_path(p, sizeof(p), "%s.selector.labelMatch", path);
                if ((rc = kb__api_label_selector(d, label, p, &m->labels)))
                        return rc;
        }
        return 0;
}

static int hypernode_fill(struct kb__api_dec *d, const struct kb_value *doc,
                          struct kb_hypernode *hn)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        const struct kb_value *status = kb_value_get(doc, "status");
        int rc;

        if ((rc = kb__api_meta(d, doc, false, &hn->meta)))
                return rc;
        if ((rc = kb__api_object(d, spec, "spec")) || (rc = kb__api_object(d, status, "status")))
                return rc;
        /* Volcano's tier was a string before it became an integer; both
         * read as the number. */
        const struct kb_value *tier = kb_value_get(spec, "tier");
        if (!kb__api_set(tier))
                return kb__api_fail(d, "spec.tier", "required");
        if ((rc = kb__api_int32(d, tier, "spec.tier", 0, INT32_MAX, &hn->tier)) ||
            (rc = kb__api_str(d, kb_value_get(spec, "tierName"), "spec.tierName", &hn->tier_name)))
                return rc;
        if (hn->tier_name && !hn->tier_name[0]) {
                free(hn->tier_name);
                hn->tier_name = NULL;
        }
        const struct kb_value *members = kb_value_get(spec, "members");
        if ((rc = kb__api_list(d, members, "spec.members")))
                return rc;
        if (kb__api_set(members) && members->arr.n) {
                hn->members = kb_xcalloc(members->arr.n, sizeof(*hn->members));
                hn->nmembers = members->arr.n;
                for (size_t i = 0; i < members->arr.n; i++) {
                        char p[KB__API_PATH];
                        kb__api_path(p, sizeof(p), "spec.members[%zu]", i);
                        if ((rc = decode_member(d, members->arr.v[i], p, &hn->members[i])))
                                return rc;
                }
        }
        int64_t count = -1;
        const struct kb_value *nc = kb_value_get(status, "nodeCount");
        if (kb__api_set(nc) && (kb_value_int(nc, &count) || count < 0))
                return kb__api_fail(d, "status.nodeCount", "must be an integer >= 0, got \"%s\"",
                                    kb_value_text(nc) ? kb_value_text(nc) : "?");
        hn->node_count = count;
        return 0;
}

int kb_hypernode_decode(const struct kb_value *doc, struct kb_hypernode **out, char *err,
                        size_t errlen)
{
        KB__DECODE("hypernode", struct kb_hypernode, hypernode_fill, kb_hypernode_free);
}

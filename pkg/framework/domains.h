/*
 * The domains of a node label key, for the placement filters and scores
 * (part of framework.h, which includes it; not included on its own).
 */
#ifndef KB_PKG_FRAMEWORK_DOMAINS_H
#define KB_PKG_FRAMEWORK_DOMAINS_H

/* The topology domains of a node label key: nodes with equal values form a
 * domain, numbered 0.. by the first node (by name) with each value; a node
 * without the label is in none (KB_NO_DOMAIN). */
#define KB_NO_DOMAIN UINT32_MAX
struct kb_session;
struct kb_domains {
        const char *key;
        uint32_t ndomains;
        const char *const *values; /* per domain: the label value */
        const uint32_t *of;        /* per node index: its domain, or KB_NO_DOMAIN */
        /* The nodes of domain d, by index: nodes[start[d] .. start[d + 1]). */
        const uint32_t *start;
        const uint32_t *nodes;
        uint32_t nkeyless; /* nodes without the label */
};
/* key's domains, built on first use and owned by the session. */
const struct kb_domains *kb_session_domains(struct kb_session *s, const char *key);

#endif /* KB_PKG_FRAMEWORK_DOMAINS_H */

/*
 * A pod's inter-pod placement fields: required and preferred pod affinity
 * and anti-affinity, topology spread constraints, host ports, and the
 * images ImageLocality scores.  The checks are the API server's
 * (ValidatePodAffinityTerm, ValidateWeightedPodAffinityTerm,
 * validateTopologySpreadConstraints, validateContainerPorts), so that what
 * kbatch accepts is what a cluster holds.
 *
 * A mistake here does not lose the pod: it may already hold room on a node,
 * and its gang's other pods are fine.  The first problem is kept in
 * pod->invalid, naming the pod and the field, and these fields stay empty;
 * the session never places such a pod and says why.
 *
 * Defaults are resolved here, once:
 *   - a term without namespaces and without namespaceSelector means the
 *     pod's own namespace (getNamespacesFromPodAffinityTerm);
 *   - matchLabelKeys: [k] adds `k In (the pod's value of k)` to the label
 *     selector, mismatchLabelKeys `k NotIn (...)`, for keys the pod has
 *     (the API server merges them on create since Kubernetes 1.31; merging
 *     again is harmless: the requirement is the same);
 *   - a spread constraint's minDomains is 1 when unset, nodeAffinityPolicy
 *     Honor, nodeTaintsPolicy Ignore; its matchLabelKeys merge the same way;
 *   - a host port's hostIP is 0.0.0.0 and its protocol TCP when unset.
 *
 * Example: a pod labelled {job: a, idx: "3"} in namespace ml with
 *   podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution:
 *   - {labelSelector: {matchLabels: {app: x}}, matchLabelKeys: [job],
 *      topologyKey: kubernetes.io/hostname}
 * decodes to one required anti-affinity term: namespaces [ml], selector
 * [app In (x), job In (a)], topology key kubernetes.io/hostname.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

/* ---- freeing ------------------------------------------------------------------- */

static void terms_free(struct kb_pod_term *t, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                kb__api_label_selector_release(&t[i].selector);
                kb__api_label_selector_release(&t[i].ns_selector);
                for (size_t k = 0; k < t[i].nnamespaces; k++)
                        free(t[i].namespaces[k]);
                free(t[i].namespaces);
                free(t[i].topology_key);
        }
        free(t);
}

const struct kb_pod_rules kb_no_pod_rules;

static void rules_free(struct kb_pod_rules *r)
{
        if (!r)
                return;
        terms_free(r->affinity, r->naffinity);
        terms_free(r->anti_affinity, r->nanti_affinity);
        terms_free(r->pref_affinity, r->npref_affinity);
        terms_free(r->pref_anti_affinity, r->npref_anti_affinity);
        for (size_t i = 0; i < r->nspread; i++) {
                free(r->spread[i].topology_key);
                kb__api_label_selector_release(&r->spread[i].selector);
        }
        free(r->spread);
        for (size_t i = 0; i < r->nhost_ports; i++) {
                free(r->host_ports[i].ip);
                free(r->host_ports[i].protocol);
        }
        free(r->host_ports);
        free(r);
}

void kb__api_pod_placement_free(struct kb_pod *p)
{
        rules_free(p->rules);
        p->rules = NULL;
        for (size_t i = 0; i < p->nimages; i++)
                free(p->images[i]);
        free(p->images);
        p->images = NULL;
        p->nimages = 0;
}

/* A non-empty string (an element of matchLabelKeys, namespaces). */
static int decode_name(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                       void *elem, void *ctx)
{
        char **out = elem;
        int rc;
        (void)ctx;
        if ((rc = kb__api_str(d, v, path, out)))
                return rc;
        if (!*out || !**out)
                return kb__api_fail(d, path, "must be a non-empty string");
        return 0;
}

/* A list of strings at path (matchLabelKeys, namespaces). */
static int decode_strings(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                          char ***out, size_t *n)
{
        return kb__api_list_of(d, v, path, sizeof(**out), (void **)out, n, decode_name, NULL);
}

static void strings_free(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/*
 * matchLabelKeys (op In) or mismatchLabelKeys (op NotIn) at path into s,
 * with the pod's values.  Keys the pod does not carry are ignored; keys
 * are checked against the other list (a key may not be in both).
 */
static int merge_label_keys(struct kb__api_dec *d, const struct kb_value *term, const char *path,
                            const struct kb_pod *pod, struct kb_label_selector *s, bool spread)
{
        static const char *const fields[] = {"matchLabelKeys", "mismatchLabelKeys"};
        char **keys[2] = {NULL, NULL};
        size_t nkeys[2] = {0, 0};
        char p[KB__API_PATH];
        int rc = 0;

        for (int f = 0; f < (spread ? 1 : 2) && !rc; f++) {
                kb__api_path(p, sizeof(p), "%s.%s", path, fields[f]);
                rc = decode_strings(d, kb_value_get(term, fields[f]), p, &keys[f], &nkeys[f]);
        }
        if (!rc && (nkeys[0] || nkeys[1]) && !s->set) {
                kb__api_path(p, sizeof(p), "%s.labelSelector", path);
                rc = kb__api_fail(d, p, "required when matchLabelKeys or mismatchLabelKeys is set");
        }
        for (size_t i = 0; !rc && i < nkeys[0]; i++)
                for (size_t k = 0; k < nkeys[1]; k++)
                        if (strcmp(keys[0][i], keys[1][k]) == 0) {
                                kb__api_path(p, sizeof(p), "%s.mismatchLabelKeys[%zu]", path, k);
                                rc = kb__api_fail(d, p, "\"%s\" is also in matchLabelKeys",
                                                  keys[1][k]);
                                break;
                        }
        for (int f = 0; f < 2 && !rc; f++)
                for (size_t i = 0; i < nkeys[f]; i++) {
                        const char *v = kb_meta_label(&pod->meta, keys[f][i]);
                        if (v)
                                kb__api_selector_add(s, keys[f][i], f ? KB_SEL_NOT_IN : KB_SEL_IN,
                                                     v);
                }
        strings_free(keys[0], nkeys[0]);
        strings_free(keys[1], nkeys[1]);
        return rc;
}

/* ---- pod affinity terms ------------------------------------------------------------- */

static int decode_term(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                       const struct kb_pod *pod, struct kb_pod_term *t)
{
        char p[KB__API_PATH];
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.labelSelector", path);
        if ((rc = kb__api_label_selector(d, kb_value_get(v, "labelSelector"), p, &t->selector)))
                return rc;
        if ((rc = merge_label_keys(d, v, path, pod, &t->selector, false)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.namespaceSelector", path);
        if ((rc = kb__api_label_selector(d, kb_value_get(v, "namespaceSelector"), p,
                                         &t->ns_selector)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.namespaces", path);
        if ((rc = decode_strings(d, kb_value_get(v, "namespaces"), p, &t->namespaces,
                                 &t->nnamespaces)))
                return rc;
        if (!t->nnamespaces && !t->ns_selector.set) {
                t->namespaces = kb_xmalloc(sizeof(*t->namespaces));
                t->namespaces[0] = kb_xstrdup(kb_meta_ns(&pod->meta));
                t->nnamespaces = 1;
        }
        kb__api_path(p, sizeof(p), "%s.topologyKey", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "topologyKey"), p, &t->topology_key)))
                return rc;
        if (!t->topology_key || !t->topology_key[0])
                return kb__api_fail(d, p, "required (a node label key)");
        return 0;
}

struct term_ctx {
        const struct kb_pod *pod;
        bool weighted;
};

/* A required term, or a weighted one (weight, podAffinityTerm). */
static int decode_any_term(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                           void *elem, void *ctx)
{
        const struct term_ctx *tc = ctx;
        struct kb_pod_term *t = elem;
        char pw[KB__API_PATH + 32];
        int rc;
        if (!tc->weighted)
                return decode_term(d, v, path, tc->pod, t);
        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(pw, sizeof(pw), "%s.weight", path);
        const struct kb_value *w = kb_value_get(v, "weight");
        if (!kb__api_set(w))
                return kb__api_fail(d, pw, "required");
        if ((rc = kb__api_int32(d, w, pw, 1, 100, &t->weight)))
                return rc;
        kb__api_path(pw, sizeof(pw), "%s.podAffinityTerm", path);
        const struct kb_value *term = kb_value_get(v, "podAffinityTerm");
        if (!kb__api_set(term))
                return kb__api_fail(d, pw, "required");
        return decode_term(d, term, pw, tc->pod, t);
}

/* The list at path into *out: required terms, or weighted ones. */
static int decode_terms(struct kb__api_dec *d, const struct kb_value *list, const char *path,
                        bool weighted, const struct kb_pod *pod, struct kb_pod_term **out,
                        size_t *n)
{
        struct term_ctx tc = {pod, weighted};
        return kb__api_list_of(d, list, path, sizeof(**out), (void **)out, n, decode_any_term, &tc);
}

static int decode_pod_affinity(struct kb__api_dec *d, const struct kb_value *spec,
                               const struct kb_pod *pod, struct kb_pod_rules *r)
{
        static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};
        const struct kb_value *aff = kb_value_get(spec, "affinity");
        int rc;

        for (int k = 0; k < 2; k++) {
                const struct kb_value *a = kb_value_get(aff, kinds[k]);
                char p[KB__API_PATH], pl[KB__API_PATH + 64];
                kb__api_path(p, sizeof(p), "spec.affinity.%s", kinds[k]);
                if ((rc = kb__api_object(d, a, p)))
                        return rc;
                kb__api_path(pl, sizeof(pl), "%s.requiredDuringSchedulingIgnoredDuringExecution",
                             p);
                if ((rc = decode_terms(
                         d, kb_value_get(a, "requiredDuringSchedulingIgnoredDuringExecution"), pl,
                         false, pod, k ? &r->anti_affinity : &r->affinity,
                         k ? &r->nanti_affinity : &r->naffinity)))
                        return rc;
                kb__api_path(pl, sizeof(pl), "%s.preferredDuringSchedulingIgnoredDuringExecution",
                             p);
                if ((rc = decode_terms(
                         d, kb_value_get(a, "preferredDuringSchedulingIgnoredDuringExecution"), pl,
                         true, pod, k ? &r->pref_anti_affinity : &r->pref_affinity,
                         k ? &r->npref_anti_affinity : &r->npref_affinity)))
                        return rc;
        }
        return 0;
}

/* ---- topology spread constraints ------------------------------------------------------ */

/* One of two words at path, or dflt when unset. */
static int decode_choice(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                         const char *yes, const char *no, bool dflt, bool required, bool *out)
{
        char *s = NULL;
        int rc;
        if ((rc = kb__api_str(d, v, path, &s)))
                return rc;
        if (!s || !s[0]) {
                free(s);
                if (required)
                        return kb__api_fail(d, path, "required (%s or %s)", yes, no);
                *out = dflt;
                return 0;
        }
        if (strcmp(s, yes) == 0 || strcmp(s, no) == 0) {
                *out = strcmp(s, yes) == 0;
                free(s);
                return 0;
        }
        rc = kb__api_fail(d, path, "must be %s or %s, got \"%s\"", yes, no, s);
        free(s);
        return rc;
}

static int decode_spread(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                         const struct kb_pod *pod, struct kb_spread *c)
{
        char p[KB__API_PATH];
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.maxSkew", path);
        const struct kb_value *skew = kb_value_get(v, "maxSkew");
        if (!kb__api_set(skew))
                return kb__api_fail(d, p, "required");
        int64_t x;
        if (kb_value_int(skew, &x))
                return kb__api_fail(d, p, "must be an integer, got %s",
                                    kb_value_type_name(skew->type));
        if (x <= 0 || x > INT32_MAX)
                return kb__api_fail(d, p, "must be greater than zero, got %lld", (long long)x);
        c->max_skew = (int32_t)x;
        kb__api_path(p, sizeof(p), "%s.topologyKey", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "topologyKey"), p, &c->topology_key)))
                return rc;
        if (!c->topology_key || !c->topology_key[0])
                return kb__api_fail(d, p, "required (a node label key)");
        kb__api_path(p, sizeof(p), "%s.whenUnsatisfiable", path);
        if ((rc = decode_choice(d, kb_value_get(v, "whenUnsatisfiable"), p, "ScheduleAnyway",
                                "DoNotSchedule", false, true, &c->schedule_anyway)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.labelSelector", path);
        if ((rc = kb__api_label_selector(d, kb_value_get(v, "labelSelector"), p, &c->selector)))
                return rc;
        if ((rc = merge_label_keys(d, v, path, pod, &c->selector, true)))
                return rc;
        c->min_domains = 1;
        const struct kb_value *md = kb_value_get(v, "minDomains");
        kb__api_path(p, sizeof(p), "%s.minDomains", path);
        if (kb__api_set(md)) {
                if (kb_value_int(md, &x))
                        return kb__api_fail(d, p, "must be an integer, got %s",
                                            kb_value_type_name(md->type));
                if (x <= 0 || x > INT32_MAX)
                        return kb__api_fail(d, p, "must be greater than zero, got %lld",
                                            (long long)x);
                if (c->schedule_anyway)
                        return kb__api_fail(d, p,
                                            "can only be set with whenUnsatisfiable "
                                            "DoNotSchedule");
                c->min_domains = (int32_t)x;
        }
        kb__api_path(p, sizeof(p), "%s.nodeAffinityPolicy", path);
        if ((rc = decode_choice(d, kb_value_get(v, "nodeAffinityPolicy"), p, "Honor", "Ignore",
                                true, false, &c->honor_affinity)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.nodeTaintsPolicy", path);
        return decode_choice(d, kb_value_get(v, "nodeTaintsPolicy"), p, "Honor", "Ignore", false,
                             false, &c->honor_taints);
}

static int decode_one_spread(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                             void *elem, void *ctx)
{
        return decode_spread(d, v, path, ctx, elem);
}

static int decode_spreads(struct kb__api_dec *d, const struct kb_value *spec,
                          const struct kb_pod *pod, struct kb_pod_rules *r)
{
        static const char path[] = "spec.topologySpreadConstraints";
        int rc = kb__api_list_of(d, kb_value_get(spec, "topologySpreadConstraints"), path,
                                 sizeof(*r->spread), (void **)&r->spread, &r->nspread,
                                 decode_one_spread, (void *)pod);
        /* validateTopologySpreadConstraints: one constraint per
         * {topologyKey, whenUnsatisfiable}. */
        for (size_t i = 0; !rc && i < r->nspread; i++)
                for (size_t k = 0; k < i; k++) {
                        const struct kb_spread *a = &r->spread[k], *b = &r->spread[i];
                        if (strcmp(a->topology_key, b->topology_key) != 0 ||
                            a->schedule_anyway != b->schedule_anyway)
                                continue;
                        char p[KB__API_PATH];
                        kb__api_path(p, sizeof(p), "%s[%zu]", path, i);
                        return kb__api_fail(d, p,
                                            "duplicate {topologyKey: %s, whenUnsatisfiable: %s} "
                                            "(also in [%zu])",
                                            b->topology_key,
                                            b->schedule_anyway ? "ScheduleAnyway" : "DoNotSchedule",
                                            k);
                }
        return rc;
}

/* ---- containers: host ports and images ------------------------------------------------ */

static int decode_ports(struct kb__api_dec *d, const struct kb_value *c, const char *path,
                        struct kb_pod_rules *r)
{
        const struct kb_value *ports = kb_value_get(c, "ports");
        char p[KB__API_PATH];
        int rc;

        kb__api_path(p, sizeof(p), "%s.ports", path);
        if ((rc = kb__api_list(d, ports, p)))
                return rc;
        for (size_t i = 0; kb__api_set(ports) && i < ports->arr.n; i++) {
                const struct kb_value *v = ports->arr.v[i];
                char pi[KB__API_PATH], pf[KB__API_PATH + 16];
                int32_t port = 0;
                kb__api_path(pi, sizeof(pi), "%s[%zu]", p, i);
                if ((rc = kb__api_object(d, v, pi)))
                        return rc;
                kb__api_path(pf, sizeof(pf), "%s.hostPort", pi);
                if ((rc = kb__api_int32(d, kb_value_get(v, "hostPort"), pf, 0, 65535, &port)))
                        return rc;
                char *ip = NULL, *proto = NULL;
                kb__api_path(pf, sizeof(pf), "%s.protocol", pi);
                if ((rc = kb__api_str(d, kb_value_get(v, "protocol"), pf, &proto)))
                        return rc;
                if (proto && proto[0] && strcmp(proto, "TCP") != 0 && strcmp(proto, "UDP") != 0 &&
                    strcmp(proto, "SCTP") != 0) {
                        rc = kb__api_fail(d, pf, "must be TCP, UDP or SCTP, got \"%s\"", proto);
                        free(proto);
                        return rc;
                }
                kb__api_path(pf, sizeof(pf), "%s.hostIP", pi);
                if ((rc = kb__api_str(d, kb_value_get(v, "hostIP"), pf, &ip))) {
                        free(proto);
                        return rc;
                }
                if (port <= 0) {
                        free(ip);
                        free(proto);
                        continue;
                }
                r->host_ports =
                    kb_xrealloc(r->host_ports, (r->nhost_ports + 1) * sizeof(*r->host_ports));
                struct kb_host_port *hp = &r->host_ports[r->nhost_ports++];
                hp->port = port;
                hp->ip = ip && ip[0] ? ip : kb_xstrdup("0.0.0.0");
                hp->protocol = proto && proto[0] ? proto : kb_xstrdup("TCP");
                if (hp->ip != ip)
                        free(ip);
                if (hp->protocol != proto)
                        free(proto);
        }
        return 0;
}

/* ImageLocality's normalizedImageName: ":latest" when the last ':' is not
 * after the last '/'. */
static char *normalized_image(const char *name)
{
        const char *colon = strrchr(name, ':'), *slash = strrchr(name, '/');
        if (!colon || (slash && colon < slash))
                return kb_xasprintf("%s:latest", name);
        return kb_xstrdup(name);
}

/*
 * Host ports come from the containers and from init containers that run
 * for the pod's whole life (restartPolicy Always, sidecars), as the
 * scheduler's GetHostPorts; images from every init container and container,
 * as ImageLocality sums them.
 */
static int decode_containers(struct kb__api_dec *d, const struct kb_value *spec, struct kb_pod *pod,
                             struct kb_pod_rules *r)
{
        static const char *const lists[] = {"initContainers", "containers"};
        int rc;

        for (int l = 0; l < 2; l++) {
                const struct kb_value *cs = kb_value_get(spec, lists[l]);
                if (!kb_value_is(cs, KB_VARRAY))
                        continue; /* the request decoder has checked the type */
                for (size_t i = 0; i < cs->arr.n; i++) {
                        const struct kb_value *c = cs->arr.v[i];
                        char p[KB__API_PATH], pi[KB__API_PATH + 16];
                        kb__api_path(p, sizeof(p), "spec.%s[%zu]", lists[l], i);
                        char *image = NULL;
                        kb__api_path(pi, sizeof(pi), "%s.image", p);
                        if ((rc = kb__api_str(d, kb_value_get(c, "image"), pi, &image)))
                                return rc;
                        pod->images =
                            kb_xrealloc(pod->images, (pod->nimages + 1) * sizeof(*pod->images));
                        pod->images[pod->nimages++] = normalized_image(image ? image : "");
                        free(image);
                        bool sidecar =
                            kb_streq(kb_value_str(kb_value_get(c, "restartPolicy")), "Always");
                        if ((l == 1 || sidecar) && (rc = decode_ports(d, c, p, r)))
                                return rc;
                }
        }
        return 0;
}

void kb__api_pod_placement(struct kb__api_dec *d, const struct kb_value *spec, struct kb_pod *pod)
{
        char err[768];
        struct kb__api_dec local = *d;
        local.err = err;
        local.errlen = sizeof(err);
        struct kb_pod_rules *r = kb_xcalloc(1, sizeof(*r));
        if (!decode_pod_affinity(&local, spec, pod, r) && !decode_spreads(&local, spec, pod, r) &&
            !decode_containers(&local, spec, pod, r)) {
                if (r->naffinity || r->nanti_affinity || r->npref_affinity ||
                    r->npref_anti_affinity || r->nspread || r->nhost_ports)
                        pod->rules = r;
                else
                        rules_free(r);
                return;
        }
        rules_free(r);
        kb__api_pod_placement_free(pod);
        free(pod->invalid);
        pod->invalid = kb_xstrdup(err);
}

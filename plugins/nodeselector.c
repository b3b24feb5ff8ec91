/*
 * Node-level matching shared by the plugins: NodeSelectorTerms (predicates'
 * required node affinity, nodeorder's preferred node affinity, topology
 * spread's node inclusion policy) and taints against tolerations.  The rules are those of
 * k8s.io/component-helpers/scheduling/corev1/nodeaffinity and
 * k8s.io/apimachinery/pkg/labels (Requirement.Matches):
 *
 *   - a term is the AND of its matchExpressions (on node labels) and its
 *     matchFields (on metadata.name); a term with neither matches nothing;
 *   - In: the label exists and equals one of the values;
 *     NotIn: the label is absent or equals none of them;
 *     Exists / DoesNotExist: the label is present / absent;
 *     Gt / Lt: the label and the single value both parse as base-10 int64
 *     (strconv.ParseInt) and compare so; a label that does not parse fails;
 *   - matchFields: key metadata.name only, operator In or NotIn, exactly one
 *     value;
 *   - a malformed requirement (In or NotIn without values, Exists with
 *     values, Gt with other than one integer value, a field other than
 *     metadata.name) fails its term, as the parse error does in
 *     kube-scheduler.
 *
 * Example: [gpu-count Gt "3"] matches labels {gpu-count: "8"}, and neither
 * {gpu-count: "eight"} nor a node without the label.
 */
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "plugins/plugins-int.h"

const char *kb__plugins_node_label(const struct kb_node *node, const char *key)
{
        return kb_meta_label(&node->meta, key);
}

/* Go's strconv.ParseInt(s, 10, 64): an optional sign, then one or more
 * decimal digits, nothing else, in range. */
static bool parse_int64(const char *s, int64_t *out)
{
        bool neg = false;
        if (*s == '+' || *s == '-')
                neg = *s++ == '-';
        if (*s == '\0')
                return false;
        /* Accumulate negatively so that INT64_MIN is reachable. */
        int64_t v = 0;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                int d = *s - '0';
                if (v < (INT64_MIN + d) / 10)
                        return false;
                v = v * 10 - d;
        }
        if (!neg) {
                if (v == INT64_MIN)
                        return false;
                v = -v;
        }
        *out = v;
        return true;
}

/* One matchExpressions requirement against a label value (NULL: absent). */
static bool expr_matches(const struct kb_selector_req *r, const char *val)
{
        int64_t lv, rv;

        switch (r->op) {
        case KB_SEL_GT:
        case KB_SEL_LT:
                if (r->nvalues != 1 || !parse_int64(r->values[0], &rv))
                        return false;
                if (!val || !parse_int64(val, &lv))
                        return false;
                return r->op == KB_SEL_GT ? lv > rv : lv < rv;
        default:
                /* In and NotIn need values, Exists and DoesNotExist none;
                 * the rest is a label selector's requirement. */
                if ((r->op == KB_SEL_IN || r->op == KB_SEL_NOT_IN) != (r->nvalues > 0))
                        return false;
                return kb_selector_req_matches(r, val);
        }
}

/* One matchFields requirement: only metadata.name, In or NotIn, one value. */
static bool field_matches(const struct kb_selector_req *r, const struct kb_node *node)
{
        if (strcmp(r->key, "metadata.name") != 0 || r->nvalues != 1)
                return false;
        bool eq = kb_streq(node->meta.name, r->values[0]);
        switch (r->op) {
        case KB_SEL_IN:
                return eq;
        case KB_SEL_NOT_IN:
                return !eq;
        default:
                return false;
        }
}

bool kb__plugins_term_matches(const struct kb_node_term *term, const struct kb_node *node)
{
        if (term->nexprs == 0 && term->nfields == 0)
                return false;
        for (size_t i = 0; i < term->nexprs; i++)
                if (!expr_matches(&term->exprs[i],
                                  kb__plugins_node_label(node, term->exprs[i].key)))
                        return false;
        for (size_t i = 0; i < term->nfields; i++)
                if (!field_matches(&term->fields[i], node))
                        return false;
        return true;
}

bool kb__plugins_node_affinity(const struct kb_pod *pod, const struct kb_node *node)
{
        for (size_t i = 0; i < pod->nnode_selector; i++)
                if (!kb_streq(kb__plugins_node_label(node, pod->node_selector[i].key),
                              pod->node_selector[i].value))
                        return false;
        if (pod->nrequired == 0)
                return true;
        for (size_t i = 0; i < pod->nrequired; i++)
                if (kb__plugins_term_matches(&pod->required[i], node))
                        return true;
        return false;
}

/* ---- taints and tolerations -------------------------------------------------------- */

static const char *effect_name(enum kb_taint_effect e)
{
        switch (e) {
        case KB_TAINT_NO_SCHEDULE:
                return "NoSchedule";
        case KB_TAINT_PREFER_NO_SCHEDULE:
                return "PreferNoSchedule";
        case KB_TAINT_NO_EXECUTE:
                return "NoExecute";
        }
        return "";
}

static bool empty(const char *s)
{
        return !s || !*s;
}

/* v1.Toleration.ToleratesTaint. */
static bool tolerates(const struct kb_toleration *tol, const char *key, const char *value,
                      enum kb_taint_effect effect)
{
        if (!empty(tol->effect) && strcmp(tol->effect, effect_name(effect)) != 0)
                return false;
        if (!empty(tol->key) && !kb_streq(tol->key, key))
                return false;
        if (tol->op == KB_TOL_EXISTS)
                return true;
        return kb_streq(tol->value ? tol->value : "", value ? value : "");
}

bool kb__plugins_tolerates(const struct kb_pod *pod, const char *key, const char *value,
                           enum kb_taint_effect effect)
{
        for (size_t i = 0; i < pod->ntolerations; i++)
                if (tolerates(&pod->tolerations[i], key, value, effect))
                        return true;
        return false;
}

const struct kb_taint *kb__plugins_untolerated(const struct kb_pod *pod, const struct kb_node *node)
{
        for (size_t i = 0; i < node->ntaints; i++) {
                const struct kb_taint *taint = &node->taints[i];
                if (taint->effect == KB_TAINT_PREFER_NO_SCHEDULE)
                        continue;
                if (!kb__plugins_tolerates(pod, taint->key, taint->value, taint->effect))
                        return taint;
        }
        return NULL;
}

uint32_t kb__plugins_intolerable_soft(const struct kb_pod *pod, const struct kb_node *node)
{
        uint32_t n = 0;
        for (size_t i = 0; i < node->ntaints; i++) {
                const struct kb_taint *taint = &node->taints[i];
                n += taint->effect == KB_TAINT_PREFER_NO_SCHEDULE &&
                     !kb__plugins_tolerates(pod, taint->key, taint->value, taint->effect);
        }
        return n;
}

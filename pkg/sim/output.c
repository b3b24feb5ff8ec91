/* kbatch-sim's output: the JSON contract (DESIGN.md "Contracts") and a
 * table for people. */
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

static struct kb_value *pod_ref(const struct kb_pod *p)
{
        char *s =
            kb_xasprintf("%s/%s", p->meta.namespace ? p->meta.namespace : "default", p->meta.name);
        struct kb_value *v = kb_value_new_string(s);
        free(s);
        return v;
}

/* A resource map as Kubernetes writes one: {"cpu": "2", "memory": "4Gi"};
 * zero and unlimited amounts left out, pods kept. */
static struct kb_value *res_map(const struct kb_res *r)
{
        struct kb_value *m = kb_value_new(KB_VOBJECT);
        for (int i = 0; i < kb_res_count(); i++) {
                if (r->q[i] == 0 || r->q[i] == KB_RES_UNLIMITED)
                        continue;
                char q[48];
                kb_quantity_format(r->q[i], kb_res_is_milli(i), kb_res_is_bytes(i), q, sizeof(q));
                kb_value_set(m, kb_res_name(i), kb_value_new_string(q));
        }
        return m;
}

void kb_result_to_json(const struct kb_result *r, int index, struct kb_value *sessions)
{
        struct kb_value *s = kb_value_new(KB_VOBJECT);
        struct kb_value *binds = kb_value_new(KB_VARRAY);
        struct kb_value *evictions = kb_value_new(KB_VARRAY);
        struct kb_value *pgs = kb_value_new(KB_VARRAY);

        kb_value_set(s, "index", kb_value_new_int(index));
        /* Microseconds are all a session time means. */
        kb_value_set(s, "durationSeconds",
                     kb_value_new_double((double)(int64_t)(r->duration * 1e6 + 0.5) / 1e6));
        for (size_t i = 0; i < r->nbinds; i++) {
                struct kb_value *b = kb_value_new(KB_VOBJECT);
                kb_value_set(b, "pod", pod_ref(r->binds[i].pod));
                kb_value_set(b, "node", kb_value_new_string(r->binds[i].node));
                kb_value_append(binds, b);
        }
        for (size_t i = 0; i < r->nevictions; i++) {
                struct kb_value *e = kb_value_new(KB_VOBJECT);
                kb_value_set(e, "pod", pod_ref(r->evictions[i].pod));
                kb_value_set(e, "action", kb_value_new_string(r->evictions[i].action));
                kb_value_append(evictions, e);
        }
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                struct kb_value *g = kb_value_new(KB_VOBJECT);
                struct kb_value *conds = kb_value_new(KB_VARRAY);
                kb_value_set(g, "podGroup", kb_value_new_string(st->name));
                kb_value_set(g, "phase", kb_value_new_string(kb_pg_phase_name(st->phase)));
                kb_value_set(g, "running", kb_value_new_int(st->running));
                kb_value_set(g, "pending", kb_value_new_int(st->pending));
                if (st->position) {
                        kb_value_set(g, "queuePosition", kb_value_new_int(st->position));
                        kb_value_set(g, "queueWaiting", kb_value_new_int(st->waiting));
                }
                if (st->domain)
                        kb_value_set(g, "domain", kb_value_new_string(st->domain));
                if (st->cond_type) {
                        struct kb_value *c = kb_value_new(KB_VOBJECT);
                        kb_value_set(c, "type", kb_value_new_string(st->cond_type));
                        kb_value_set(c, "status", kb_value_new_string(st->cond_status));
                        kb_value_set(c, "reason", kb_value_new_string(st->cond_reason));
                        kb_value_set(c, "message", kb_value_new_string(st->cond_message));
                        kb_value_append(conds, c);
                }
                kb_value_set(g, "conditions", conds);
                kb_value_append(pgs, g);
        }
        struct kb_value *pipelined = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < r->nnominations; i++) {
                struct kb_value *p = kb_value_new(KB_VOBJECT);
                kb_value_set(p, "pod", pod_ref(r->nominations[i].pod));
                kb_value_set(p, "node", kb_value_new_string(r->nominations[i].node));
                kb_value_append(pipelined, p);
        }
        struct kb_value *queues = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < r->nqueues; i++) {
                const struct kb_queue_status *qs = &r->queues[i];
                struct kb_value *q = kb_value_new(KB_VOBJECT);
                kb_value_set(q, "name", kb_value_new_string(qs->name));
                kb_value_set(q, "state", kb_value_new_string(kb_queue_state_name(qs->state)));
                kb_value_set(q, "deserved", res_map(&qs->deserved));
                kb_value_set(q, "allocated", res_map(&qs->allocated));
                kb_value_set(q, "inqueue", kb_value_new_int(qs->inqueue));
                kb_value_set(q, "pending", kb_value_new_int(qs->pending));
                kb_value_set(q, "running", kb_value_new_int(qs->running));
                kb_value_append(queues, q);
        }
        struct kb_value *warnings = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < r->nwarnings; i++) {
                struct kb_value *w = kb_value_new(KB_VOBJECT);
                kb_value_set(w, "object", kb_value_new_string(r->warnings[i].object));
                kb_value_set(w, "message", kb_value_new_string(r->warnings[i].message));
                kb_value_append(warnings, w);
        }
        kb_value_set(s, "binds", binds);
        kb_value_set(s, "evictions", evictions);
        kb_value_set(s, "podGroups", pgs);
        kb_value_set(s, "pipelined", pipelined);
        kb_value_set(s, "queues", queues);
        kb_value_set(s, "warnings", warnings);
        kb_value_append(sessions, s);
}

/* ---- the table ------------------------------------------------------------------ */

static int cmp_bind(const void *a, const void *b)
{
        const struct kb_bind *x = a, *y = b;
        int c = strcmp(x->node, y->node);
        return c ? c : strcmp(x->pod->meta.name, y->pod->meta.name);
}

static void fmt_res(const struct kb_res *r, char *buf, size_t n)
{
        kb_res_format(r, false, buf, n);
        if (!buf[0])
                snprintf(buf, n, "-");
}

void kb_result_print_table(const struct kb_result *r, int index, const struct kb_cluster *c,
                           FILE *out)
{
        fprintf(out, "Session %d: %zu bind(s), %zu eviction(s) in %.3fs\n", index, r->nbinds,
                r->nevictions, r->duration);

        if (r->nbinds) {
                struct kb_bind *sorted = kb_xmalloc(r->nbinds * sizeof(*sorted));
                memcpy(sorted, r->binds, r->nbinds * sizeof(*sorted));
                qsort(sorted, r->nbinds, sizeof(*sorted), cmp_bind);
                fprintf(out, "\nBinds\n  %-24s %s\n", "NODE", "PODS");
                for (size_t i = 0; i < r->nbinds;) {
                        size_t j = i;
                        fprintf(out, "  %-24s", sorted[i].node);
                        while (j < r->nbinds && strcmp(sorted[j].node, sorted[i].node) == 0) {
                                const struct kb_pod *p = sorted[j].pod;
                                fprintf(out, " %s/%s", p->meta.namespace ? p->meta.namespace : "",
                                        p->meta.name);
                                j++;
                        }
                        fputc('\n', out);
                        i = j;
                }
                free(sorted);
        }
        if (r->nevictions) {
                fprintf(out, "\nEvictions\n");
                for (size_t i = 0; i < r->nevictions; i++)
                        fprintf(out, "  %s/%s (%s)\n", r->evictions[i].pod->meta.namespace,
                                r->evictions[i].pod->meta.name, r->evictions[i].action);
        }
        if (r->npodgroups) {
                /* The DOMAIN column only when the session had a network
                 * topology to place gangs in. */
                bool domains = r->nhypernodes > 0;
                for (size_t i = 0; i < r->npodgroups; i++)
                        domains |= r->podgroups[i].domain != NULL;
                fprintf(out, "\nPodGroups\n  %-32s %-10s %-8s %-8s ", "PODGROUP", "PHASE",
                        "RUNNING", "PENDING");
                if (domains)
                        fprintf(out, "%-16s ", "DOMAIN");
                fprintf(out, "WHY\n");
                for (size_t i = 0; i < r->npodgroups; i++) {
                        const struct kb_pg_status *st = &r->podgroups[i];
                        const char *why = "";
                        if (st->cond_type && strcmp(st->cond_type, "Unschedulable") == 0)
                                why = st->cond_message;
                        fprintf(out, "  %-32s %-10s %-8d %-8d ", st->name,
                                kb_pg_phase_name(st->phase), st->running, st->pending);
                        if (domains)
                                fprintf(out, "%-16s ", st->domain ? st->domain : "-");
                        fprintf(out, "%s\n", why);
                }
        }
        if (r->nnominations) {
                fprintf(out, "\nPipelined (waiting for room being freed)\n");
                for (size_t i = 0; i < r->nnominations; i++)
                        fprintf(out, "  %s/%s -> %s\n", r->nominations[i].pod->meta.namespace,
                                r->nominations[i].pod->meta.name, r->nominations[i].node);
        }
        if (r->nwarnings) {
                fprintf(out, "\nWarnings\n");
                for (size_t i = 0; i < r->nwarnings; i++)
                        fprintf(out, "  %s: %s\n", r->warnings[i].object, r->warnings[i].message);
        }
        if (r->nqueues) {
                fprintf(out, "\nQueues\n  %-16s %-8s %-40s %-40s %s\n", "QUEUE", "STATE",
                        "ALLOCATED", "DESERVED", "CAPABILITY");
                for (size_t i = 0; i < r->nqueues; i++) {
                        const struct kb_queue_status *q = &r->queues[i];
                        char a[256], d[256], cap[256];
                        fmt_res(&q->allocated, a, sizeof(a));
                        fmt_res(&q->deserved, d, sizeof(d));
                        fmt_res(&q->capability, cap, sizeof(cap));
                        fprintf(out, "  %-16s %-8s %-40s %-40s %s\n", q->name,
                                kb_queue_state_name(q->state), a, d,
                                strcmp(cap, "-") ? cap : "unlimited");
                }
        }
        (void)c;
        fputc('\n', out);
}

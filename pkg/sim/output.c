/* kbatch-sim's output: the JSON contract (DESIGN.md "Contracts") and a
 * table for people. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

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

/* Pods of ours without a PodGroup: every one not finished, or (timed runs)
 * those bound in this session, with the node the session gave them. */
static struct kb_value *lone_pods(const struct kb_result *r, const struct kb_session_view *v,
                                  const struct kb_cluster *c)
{
        struct kb_value *arr = kb_value_new(KB_VARRAY);
        if (!c)
                return arr;
        /* Each pod's bind and status, by the pod (put from the last, so
         * that a pod's first entry is the one kept). */
        struct ptrmap binds, unsched;
        kb__ptrmap_init(&binds, r->nbinds);
        for (size_t i = r->nbinds; i-- > 0;)
                kb__ptrmap_put(&binds, r->binds[i].pod, (uint32_t)i);
        kb__ptrmap_init(&unsched, r->nunschedulable);
        for (size_t i = r->nunschedulable; i-- > 0;)
                kb__ptrmap_put(&unsched, r->unschedulable[i].pod, (uint32_t)i);
        for (size_t i = 0; i < c->npods; i++) {
                const struct kb_pod *p = c->pods[i];
                if ((p->group_name && *p->group_name) || kb_pod_terminal(p) ||
                    !kb__cluster_ours(c, p))
                        continue;
                const char *node = p->node_name;
                uint32_t k;
                if (kb__ptrmap_get(&binds, p, &k))
                        node = r->binds[k].node;
                else if (v->changes_only)
                        continue;
                struct kb_value *o = kb_value_new(KB_VOBJECT);
                kb_value_set(o, "pod", pod_ref(p));
                kb_value_set(o, "phase", kb_value_new_string(node ? "Running" : "Pending"));
                if (node)
                        kb_value_set(o, "node", kb_value_new_string(node));
                /* Why the session left it Pending, in kube-scheduler's words. */
                if (!node && kb__ptrmap_get(&unsched, p, &k))
                        kb_value_set(o, "message",
                                     kb_value_new_string(r->unschedulable[k].message));
                kb_value_append(arr, o);
        }
        kb__ptrmap_release(&binds);
        kb__ptrmap_release(&unsched);
        return arr;
}

void kb_result_to_json(const struct kb_result *r, const struct kb_session_view *v,
                       const struct kb_cluster *c, struct kb_value *sessions)
{
        struct kb_value *s = kb_value_new(KB_VOBJECT);
        struct kb_value *binds = kb_value_new(KB_VARRAY);
        struct kb_value *evictions = kb_value_new(KB_VARRAY);
        struct kb_value *pgs = kb_value_new(KB_VARRAY);

        kb_value_set(s, "index", kb_value_new_int(v->index));
        if (v->time >= 0)
                kb_value_set(s, "time", kb_value_new_double(v->time));
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
                if (v->pg_changed && !v->pg_changed[i])
                        continue;
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
                if (st->expected_start > 0) {
                        char ts[40];
                        kb_format_time(st->expected_start, ts, sizeof(ts));
                        kb_value_set(g, "expectedStartTime", kb_value_new_string(ts));
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
                /* Pods of its scheduled gangs that wait with nothing
                 * reclaimed for them (only gangs below minMember reclaim):
                 * the daemon's BelowDeserved condition. */
                if (qs->unreclaimed)
                        kb_value_set(q, "unreclaimed", kb_value_new_int(qs->unreclaimed));
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
        kb_value_set(s, "pods", lone_pods(r, v, c));
        kb_value_append(sessions, s);
}

void kb_sim_json_init(struct kb_sim_json *j, FILE *f)
{
        memset(j, 0, sizeof(*j));
        j->f = f;
}

static void json_header(struct kb_sim_json *j)
{
        if (!j->open)
                fputs("{\"sessions\":[", j->f);
        j->open = true;
}

void kb_sim_json_session(struct kb_sim_json *j, const struct kb_result *r,
                         const struct kb_session_view *v, const struct kb_cluster *c)
{
        /* The session alone is built as a tree, written and dropped. */
        struct kb_value *one = kb_value_new(KB_VARRAY);
        kb_result_to_json(r, v, c, one);
        char *text = kb_json_emit(one->arr.v[0], false);
        json_header(j);
        if (j->n++)
                fputc(',', j->f);
        fputs(text, j->f);
        fflush(j->f);
        free(text);
        kb_value_free(one);
}

void kb_sim_json_end(struct kb_sim_json *j, struct kb_value *simulation)
{
        json_header(j);
        fputc(']', j->f);
        if (simulation) {
                char *text = kb_json_emit(simulation, false);
                fprintf(j->f, ",\"simulation\":%s", text);
                free(text);
                kb_value_free(simulation);
        }
        fputs("}\n", j->f);
        fflush(j->f);
}

/* ---- the table ------------------------------------------------------------------ */

static int cmp_bind(const void *a, const void *b)
{
        const struct kb_bind *x = a, *y = b;
        int c = strcmp(x->node, y->node);
        return c ? c : strcmp(x->pod->meta.name, y->pod->meta.name);
}

static char *res_text(const struct kb_res *r, const char *none)
{
        char buf[512];
        kb_res_format(r, false, buf, sizeof(buf));
        return kb_xstrdup(buf[0] ? buf : none);
}

static char *pod_text(const struct kb_pod *p)
{
        return kb_xasprintf("%s/%s", p->meta.namespace ? p->meta.namespace : "default",
                            p->meta.name);
}

static void print_binds(const struct kb_result *r, FILE *out)
{
        struct kb_bind *sorted = kb_xmalloc(r->nbinds * sizeof(*sorted));
        struct kb_table t;
        memcpy(sorted, r->binds, r->nbinds * sizeof(*sorted));
        qsort(sorted, r->nbinds, sizeof(*sorted), cmp_bind);
        fprintf(out, "\nBinds\n");
        kb__table_init(&t, 2, "NODE", "PODS");
        for (size_t i = 0; i < r->nbinds;) {
                struct kb_buf pods;
                size_t j = i;
                kb_buf_init(&pods);
                for (; j < r->nbinds && strcmp(sorted[j].node, sorted[i].node) == 0; j++) {
                        char *p = pod_text(sorted[j].pod);
                        kb_buf_printf(&pods, "%s%s", j > i ? " " : "", p);
                        free(p);
                }
                char *c[2] = {kb_xstrdup(sorted[i].node), kb_buf_detach(&pods)};
                kb__table_row_take(&t, c);
                i = j;
        }
        kb__table_print(&t, out, "  ");
        free(sorted);
}

static void print_podgroups(const struct kb_result *r, const struct kb_session_view *v, FILE *out)
{
        struct kb_table t;
        size_t shown = 0;
        /* The DOMAIN column only when the session had a network topology
         * to place gangs in. */
        bool domains = r->nhypernodes > 0;
        for (size_t i = 0; i < r->npodgroups; i++)
                domains |= r->podgroups[i].domain != NULL;
        if (domains)
                kb__table_init(&t, 6, "PODGROUP", "PHASE", "RUNNING", "PENDING", "DOMAIN", "WHY");
        else
                kb__table_init(&t, 5, "PODGROUP", "PHASE", "RUNNING", "PENDING", "WHY");
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                if (v->pg_changed && !v->pg_changed[i])
                        continue;
                const char *why = "";
                if (st->cond_type && strcmp(st->cond_type, "Unschedulable") == 0)
                        why = st->cond_message;
                char *c[6] = {kb_xstrdup(st->name),
                              kb_xstrdup(kb_pg_phase_name(st->phase)),
                              kb_xasprintf("%d", st->running),
                              kb_xasprintf("%d", st->pending),
                              NULL,
                              NULL};
                c[domains ? 5 : 4] = kb_xstrdup(why);
                if (domains)
                        c[4] = kb_xstrdup(st->domain ? st->domain : "-");
                kb__table_row_take(&t, c);
                shown++;
        }
        if (!shown) {
                kb_table_release(&t);
                return;
        }
        fprintf(out, "\nPodGroups%s\n", v->pg_changed ? " (those that changed)" : "");
        kb__table_print(&t, out, "  ");
}

static void print_lone_pods(const struct kb_result *r, const struct kb_session_view *v,
                            const struct kb_cluster *c, FILE *out)
{
        struct kb_value *pods = lone_pods(r, v, c);
        if (pods->arr.n) {
                struct kb_table t;
                fprintf(out, "\nPods without a PodGroup\n");
                kb__table_init(&t, 4, "POD", "PHASE", "NODE", "WHY");
                for (size_t i = 0; i < pods->arr.n; i++) {
                        const struct kb_value *p = pods->arr.v[i];
                        kb__table_row(&t, kb_value_str(kb_value_get(p, "pod")),
                                      kb_value_str(kb_value_get(p, "phase")),
                                      kb_value_str(kb_value_get(p, "node")),
                                      kb_value_str(kb_value_get(p, "message")));
                }
                kb__table_print(&t, out, "  ");
        }
        kb_value_free(pods);
}

static void print_queues(const struct kb_result *r, FILE *out)
{
        struct kb_table t;
        fprintf(out, "\nQueues\n");
        kb__table_init(&t, 5, "QUEUE", "STATE", "ALLOCATED", "DESERVED", "CAPABILITY");
        for (size_t i = 0; i < r->nqueues; i++) {
                const struct kb_queue_status *q = &r->queues[i];
                char *c[5] = {kb_xstrdup(q->name), kb_xstrdup(kb_queue_state_name(q->state)),
                              res_text(&q->allocated, "-"), res_text(&q->deserved, "-"),
                              res_text(&q->capability, "unlimited")};
                kb__table_row_take(&t, c);
        }
        kb__table_print(&t, out, "  ");
}

void kb_result_print_table(const struct kb_result *r, const struct kb_session_view *v,
                           const struct kb_cluster *c, FILE *out)
{
        if (v->time >= 0) {
                char ck[32];
                kb__sim_clock_format((int64_t)llround(v->time * 1e9), ck, sizeof(ck));
                fprintf(out, "Session %ld at %s: %zu bind(s), %zu eviction(s) in %.3fs\n", v->index,
                        ck, r->nbinds, r->nevictions, r->duration);
        } else {
                fprintf(out, "Session %ld: %zu bind(s), %zu eviction(s) in %.3fs\n", v->index,
                        r->nbinds, r->nevictions, r->duration);
        }
        if (r->nbinds)
                print_binds(r, out);
        if (r->nevictions) {
                fprintf(out, "\nEvictions\n");
                for (size_t i = 0; i < r->nevictions; i++) {
                        char *p = pod_text(r->evictions[i].pod);
                        fprintf(out, "  %s (%s)\n", p, r->evictions[i].action);
                        free(p);
                }
        }
        print_podgroups(r, v, out);
        print_lone_pods(r, v, c, out);
        if (r->nnominations) {
                fprintf(out, "\nPipelined (waiting for room being freed)\n");
                for (size_t i = 0; i < r->nnominations; i++) {
                        char *p = pod_text(r->nominations[i].pod);
                        fprintf(out, "  %s -> %s\n", p, r->nominations[i].node);
                        free(p);
                }
        }
        if (r->nwarnings) {
                fprintf(out, "\nWarnings\n");
                for (size_t i = 0; i < r->nwarnings; i++)
                        fprintf(out, "  %s: %s\n", r->warnings[i].object, r->warnings[i].message);
        }
        if (r->nqueues)
                print_queues(r, out);
        fputc('\n', out);
}

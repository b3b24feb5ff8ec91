/* kbatch-sim's output: the JSON contract (DESIGN.md "Contracts") and a
 * table for people. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "sim/sim-int.h"

/* The session's JSON is written straight out through yajl's generator:
 * a value tree built, printed and freed per session was about 15% of a
 * 200-node day's run.  The text is the tree's byte for byte: members in
 * the same order, numbers as kb_value_new_int/_double write them. */
static void put_str(yajl_gen g, const char *s)
{
        yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void put_int(yajl_gen g, int64_t i)
{
        char buf[24];
        size_t n = kb_format_i64(i, buf, sizeof(buf));
        yajl_gen_number(g, buf, n);
}

static void put_double(yajl_gen g, double d)
{
        char buf[64];
        if (kb_json_double_text(d, buf))
                yajl_gen_number(g, buf, strlen(buf));
        else
                yajl_gen_null(g);
}

/* "key": "text" */
static void put_member(yajl_gen g, const char *key, const char *text)
{
        put_str(g, key);
        put_str(g, text);
}

/* "namespace/name" */
static const char *pod_ref(const struct kb_pod *p, char ref[static 600])
{
        snprintf(ref, 600, "%s/%s", p->meta.namespace ? p->meta.namespace : "default",
                 p->meta.name);
        return ref;
}

static void put_pod(yajl_gen g, const struct kb_pod *p)
{
        char ref[600];
        put_member(g, "pod", pod_ref(p, ref));
}

/* "key": 12 */
static void put_int_member(yajl_gen g, const char *key, int64_t i)
{
        put_str(g, key);
        put_int(g, i);
}

/* {"pod": "ns/name", key: text}: a bind, an eviction, a nomination. */
static void put_pod_with(yajl_gen g, const struct kb_pod *p, const char *key, const char *text)
{
        yajl_gen_map_open(g);
        put_pod(g, p);
        put_member(g, key, text);
        yajl_gen_map_close(g);
}

/* A resource map as Kubernetes writes one: {"cpu": "2", "memory": "4Gi"};
 * zero and unlimited amounts left out, pods kept. */
static void put_res(yajl_gen g, const char *key, const struct kb_res *r)
{
        put_str(g, key);
        yajl_gen_map_open(g);
        for (int i = 0; i < kb_res_count(); i++) {
                if (r->q[i] == 0 || r->q[i] == KB_RES_UNLIMITED)
                        continue;
                char q[48];
                kb_quantity_format(r->q[i], kb_res_is_milli(i), kb_res_is_bytes(i), q, sizeof(q));
                put_member(g, kb_res_name(i), q);
        }
        yajl_gen_map_close(g);
}

/* Pods of ours without a PodGroup: every one not finished, or (timed runs)
 * those bound in this session, each given to fn with the node the session
 * gave it (NULL: pending) and, pending, why. */
typedef void (*lone_fn)(void *arg, const struct kb_pod *p, const char *node, const char *why);

/* A pod of ours, not over, in no group. */
static bool lone_ours(const struct kb_cluster *c, const struct kb_pod *p)
{
        return !(p->group_name && *p->group_name) && !kb_pod_terminal(p) && kb__cluster_ours(c, p);
}

static void each_lone_pod(const struct kb_result *r, const struct kb_session_view *v,
                          const struct kb_cluster *c, lone_fn fn, void *arg)
{
        if (!c)
                return;
        if (v->changes_only) {
                /* Only pods bound in this session are written: when none of
                 * them is a lone pod of ours, no pod need be read (a run of
                 * gangs alone, every session). */
                bool any = false;
                for (size_t i = 0; i < r->nbinds && !any; i++)
                        any = lone_ours(c, r->binds[i].pod);
                if (!any)
                        return;
        }
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
                if (!lone_ours(c, p))
                        continue;
                const char *node = p->node_name;
                uint32_t k;
                if (kb__ptrmap_get(&binds, p, &k))
                        node = r->binds[k].node;
                else if (v->changes_only)
                        continue;
                /* Why the session left it Pending, in kube-scheduler's words. */
                const char *why = NULL;
                if (!node && kb__ptrmap_get(&unsched, p, &k))
                        why = r->unschedulable[k].message;
                fn(arg, p, node, why);
        }
        kb__ptrmap_release(&binds);
        kb__ptrmap_release(&unsched);
}

static void put_lone_pod(void *arg, const struct kb_pod *p, const char *node, const char *why)
{
        yajl_gen g = arg;
        yajl_gen_map_open(g);
        put_pod(g, p);
        put_member(g, "phase", node ? "Running" : "Pending");
        if (node)
                put_member(g, "node", node);
        if (why)
                put_member(g, "message", why);
        yajl_gen_map_close(g);
}

static void put_result(yajl_gen g, const struct kb_result *r, const struct kb_session_view *v,
                       const struct kb_cluster *c)
{
        yajl_gen_map_open(g);
        put_int_member(g, "index", v->index);
        if (v->time >= 0) {
                put_str(g, "time");
                put_double(g, v->time);
        }
        /* Microseconds are all a session time means. */
        put_str(g, "durationSeconds");
        put_double(g, (double)(int64_t)(r->duration * 1e6 + 0.5) / 1e6);
        put_str(g, "binds");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->nbinds; i++) {
                put_pod_with(g, r->binds[i].pod, "node", r->binds[i].node);
        }
        yajl_gen_array_close(g);
        put_str(g, "evictions");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->nevictions; i++) {
                put_pod_with(g, r->evictions[i].pod, "action", r->evictions[i].action);
        }
        yajl_gen_array_close(g);
        put_str(g, "podGroups");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                if (v->pg_changed && !v->pg_changed[i])
                        continue;
                yajl_gen_map_open(g);
                put_member(g, "podGroup", st->name);
                put_member(g, "phase", kb_pg_phase_name(st->phase));
                put_int_member(g, "running", st->running);
                put_int_member(g, "pending", st->pending);
                if (st->position) {
                        put_int_member(g, "queuePosition", st->position);
                        put_int_member(g, "queueWaiting", st->waiting);
                }
                if (st->expected_start > 0) {
                        char ts[40];
                        kb_format_time(st->expected_start, ts, sizeof(ts));
                        put_member(g, "expectedStartTime", ts);
                }
                if (st->domain)
                        put_member(g, "domain", st->domain);
                put_str(g, "conditions");
                yajl_gen_array_open(g);
                if (st->cond_type) {
                        yajl_gen_map_open(g);
                        put_member(g, "type", st->cond_type);
                        put_member(g, "status", st->cond_status);
                        put_member(g, "reason", st->cond_reason);
                        put_member(g, "message", st->cond_message);
                        yajl_gen_map_close(g);
                }
                yajl_gen_array_close(g);
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        put_str(g, "pipelined");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->nnominations; i++) {
                put_pod_with(g, r->nominations[i].pod, "node", r->nominations[i].node);
        }
        yajl_gen_array_close(g);
        put_str(g, "queues");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->nqueues; i++) {
                const struct kb_queue_status *qs = &r->queues[i];
                yajl_gen_map_open(g);
                put_member(g, "name", qs->name);
                put_member(g, "state", kb_queue_state_name(qs->state));
                put_res(g, "deserved", &qs->deserved);
                put_res(g, "allocated", &qs->allocated);
                put_int_member(g, "inqueue", qs->inqueue);
                put_int_member(g, "pending", qs->pending);
                put_int_member(g, "running", qs->running);
                /* Pods of its scheduled gangs that wait with nothing
                 * reclaimed for them (only gangs below minMember reclaim):
                 * the daemon's BelowDeserved condition. */
                if (qs->unreclaimed) {
                        put_int_member(g, "unreclaimed", qs->unreclaimed);
                }
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        put_str(g, "warnings");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->nwarnings; i++) {
                yajl_gen_map_open(g);
                put_member(g, "object", r->warnings[i].object);
                put_member(g, "message", r->warnings[i].message);
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        put_str(g, "pods");
        yajl_gen_array_open(g);
        each_lone_pod(r, v, c, put_lone_pod, g);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
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
        yajl_gen g = yajl_gen_alloc(NULL);
        if (!g)
                kb_die("yajl_gen_alloc failed");
        put_result(g, r, v, c);
        const unsigned char *buf;
        size_t len;
        yajl_gen_get_buf(g, &buf, &len);
        json_header(j);
        if (j->n++)
                fputc(',', j->f);
        fwrite(buf, 1, len, j->f);
        fflush(j->f);
        yajl_gen_free(g);
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

static void table_lone_pod(void *arg, const struct kb_pod *p, const char *node, const char *why)
{
        char ref[600];
        kb__table_row(arg, pod_ref(p, ref), node ? "Running" : "Pending", node, why);
}

static void print_lone_pods(const struct kb_result *r, const struct kb_session_view *v,
                            const struct kb_cluster *c, FILE *out)
{
        struct kb_table t;
        kb__table_init(&t, 4, "POD", "PHASE", "NODE", "WHY");
        each_lone_pod(r, v, c, table_lone_pod, &t);
        if (t.nrows > 1) { /* the header and a pod */
                fprintf(out, "\nPods without a PodGroup\n");
                kb__table_print(&t, out, "  ");
        } else {
                kb_table_release(&t);
        }
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

/*
 * Queues as the plugin shows them, and the state closing one asks for.
 *
 * The table puts side by side what kubectl get queues spreads over -o wide
 * and leaves out: what a queue deserves now (the quota plugin's figure, in
 * status.deserved), what it holds (status.allocated), what it may hold at
 * most (spec.capability), and its PodGroups by phase:
 *
 *   NAME     STATE   WEIGHT   DESERVED   ALLOCATED   CAPABILITY   INQUEUE   PENDING   RUNNING
 *   team-a   Open    2        cpu=8      cpu=6       cpu=24       0         1         3
 *   team-b   Open    1        cpu=24     0           unlimited    1         0         0
 *
 * (memory and GPUs follow cpu in the same cell: cpu=8,mem=32Gi,gpu=2).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "ctl/ctl.h"

/* Adds the quantity text q of a resource to *sum; false when q is no
 * quantity. */
static bool add_quantity(const struct kb_value *q, bool milli, double *sum)
{
        const char *text = kb_value_text(q);
        int64_t v;
        if (!text || kb_quantity_parse(text, milli, &v))
                return false;
        *sum += (double)v;
        return true;
}

void kb_ctl_res_compact(const struct kb_value *list, const char *none, char *buf, size_t n)
{
        /* cpu and the GPUs in milli-units (kbatch's scalars), memory in bytes. */
        double cpu = 0, mem = 0, gpu = 0;
        bool has_cpu = false, has_mem = false, has_gpu = false, bad = false;
        if (kb_value_is(list, KB_VOBJECT)) {
                for (size_t i = 0; i < list->obj.n; i++) {
                        const char *k = list->obj.m[i].key;
                        const struct kb_value *v = list->obj.m[i].val;
                        size_t kl = strlen(k);
                        if (kb_value_is(v, KB_VNULL))
                                continue; /* a merge patch's leftover: not there */
                        if (!strcmp(k, "cpu"))
                                has_cpu = true, bad |= !add_quantity(v, true, &cpu);
                        else if (!strcmp(k, "memory"))
                                has_mem = true, bad |= !add_quantity(v, false, &mem);
                        else if (kl > 4 && !strcmp(k + kl - 4, "/gpu"))
                                has_gpu = true, bad |= !add_quantity(v, true, &gpu);
                }
        }
        struct kb_buf b;
        kb_buf_init(&b);
        char q[64];
        if (has_cpu) {
                kb_quantity_human(cpu, true, false, q, sizeof(q));
                kb_buf_printf(&b, "cpu=%s", q);
        }
        if (has_mem) {
                kb_quantity_human(mem, false, true, q, sizeof(q));
                kb_buf_printf(&b, "%smem=%s", b.len ? "," : "", q);
        }
        if (has_gpu) {
                kb_quantity_human(gpu, true, false, q, sizeof(q));
                kb_buf_printf(&b, "%sgpu=%s", b.len ? "," : "", q);
        }
        if (bad)
                kb_buf_printf(&b, "%s(bad quantity)", b.len ? "," : "");
        snprintf(buf, n, "%s", b.len ? b.data : none);
        kb_buf_release(&b);
}

const char *kb_ctl_queue_state(const struct kb_value *queue)
{
        const char *s = kb_value_str(kb_value_dig(queue, "status", "state"));
        return s && *s ? s : "Open";
}

/* A count of the status as text, "-" when the status has none. */
static void count(const struct kb_value *status, const char *key, char *buf, size_t n)
{
        int64_t v;
        if (kb_value_int(kb_value_get(status, key), &v))
                snprintf(buf, n, "-");
        else
                snprintf(buf, n, "%" PRId64, v);
}

/* The message of the queue's BelowDeserved condition (kbatch-scheduler's:
 * below its share, and nothing reclaimed for its waiting pods), or NULL. */
static const char *below_deserved(const struct kb_value *status)
{
        const struct kb_value *conds = kb_value_get(status, "conditions");
        if (!kb_value_is(conds, KB_VARRAY))
                return NULL;
        for (size_t i = 0; i < conds->arr.n; i++) {
                const struct kb_value *c = conds->arr.v[i];
                if (kb_streq(kb_value_str(kb_value_get(c, "type")), "BelowDeserved") &&
                    kb_streq(kb_value_str(kb_value_get(c, "status")), "True"))
                        return kb_value_str(kb_value_get(c, "message"));
        }
        return NULL;
}

static int by_name(const void *a, const void *b)
{
        const struct kb_value *x = *(const struct kb_value *const *)a;
        const struct kb_value *y = *(const struct kb_value *const *)b;
        const char *nx = kb_value_str(kb_value_dig(x, "metadata", "name"));
        const char *ny = kb_value_str(kb_value_dig(y, "metadata", "name"));
        return strcmp(nx ? nx : "", ny ? ny : "");
}

static bool wanted(const char *name, const char *const *names, size_t n)
{
        if (!n)
                return true;
        for (size_t i = 0; i < n; i++)
                if (kb_streq(name, names[i]))
                        return true;
        return false;
}

void kb_ctl_queues(const struct kb_value *list, const char *const *names, size_t n,
                   struct kb_buf *out)
{
        static const char *const head[] = {"NAME",     "STATE",     "WEIGHT",
                                           "DESERVED", "ALLOCATED", "CAPABILITY",
                                           "INQUEUE",  "PENDING",   "RUNNING"};
        const struct kb_value *items = kb_value_get(list, "items");
        size_t nitems = kb_value_is(items, KB_VARRAY) ? items->arr.n : 0;
        const struct kb_value **sorted = kb_xcalloc(nitems + 1, sizeof(*sorted));
        size_t ns = 0;
        for (size_t i = 0; i < nitems; i++)
                if (kb_value_is(items->arr.v[i], KB_VOBJECT))
                        sorted[ns++] = items->arr.v[i];
        qsort(sorted, ns, sizeof(*sorted), by_name);

        struct kb_table t;
        kb_table_init(&t, KB_ARRAY_SIZE(head));
        kb_table_row(&t, head);
        for (size_t i = 0; i < ns; i++) {
                const struct kb_value *q = sorted[i];
                const char *name = kb_value_str(kb_value_dig(q, "metadata", "name"));
                if (!name || !wanted(name, names, n))
                        continue;
                const struct kb_value *st = kb_value_get(q, "status");
                const char *weight = kb_value_text(kb_value_dig(q, "spec", "weight"));
                char des[128], alloc[128], cap[128], inq[24], pend[24], run[24];
                const struct kb_value *d = kb_value_get(st, "deserved");
                const struct kb_value *a = kb_value_get(st, "allocated");
                if (d)
                        kb_ctl_res_compact(d, "0", des, sizeof(des));
                else
                        snprintf(des, sizeof(des), "-");
                if (a)
                        kb_ctl_res_compact(a, "0", alloc, sizeof(alloc));
                else
                        snprintf(alloc, sizeof(alloc), "-");
                kb_ctl_res_compact(kb_value_dig(q, "spec", "capability"), "unlimited", cap,
                                   sizeof(cap));
                count(st, "inqueue", inq, sizeof(inq));
                count(st, "pending", pend, sizeof(pend));
                count(st, "running", run, sizeof(run));
                const char *row[] = {
                    name, kb_ctl_queue_state(q), weight ? weight : "1", des, alloc, cap, inq, pend,
                    run};
                kb_table_row(&t, row);
        }
        if (t.nrows > 1)
                kb_table_print(&t, out);
        kb_table_release(&t);
        /* Then why a queue below its share gets nothing back, where the
         * scheduler said so (issue 23, point 4). */
        bool first = true;
        for (size_t i = 0; i < ns; i++) {
                const char *name = kb_value_str(kb_value_dig(sorted[i], "metadata", "name"));
                const char *why = below_deserved(kb_value_get(sorted[i], "status"));
                if (!name || !why || !wanted(name, names, n))
                        continue;
                kb_buf_printf(out, "%s%s: below its deserved share: %s\n", first ? "\n" : "",
                              name, why);
                first = false;
        }
        free(sorted);
}

const char *kb_ctl_close_state(const struct kb_value *queue, char *why, size_t n)
{
        static const char *const phases[] = {"running", "inqueue", "pending", "unknown"};
        const struct kb_value *st = kb_value_get(queue, "status");
        struct kb_buf b;
        kb_buf_init(&b);
        bool known = false;
        for (size_t i = 0; i < KB_ARRAY_SIZE(phases); i++) {
                int64_t v;
                if (kb_value_int(kb_value_get(st, phases[i]), &v))
                        continue;
                known = true;
                if (v > 0)
                        kb_buf_printf(&b, "%s%" PRId64 " %s", b.len ? ", " : "", v, phases[i]);
        }
        if (b.len)
                kb_buf_adds(&b, " PodGroup(s)");
        char alloc[128];
        kb_ctl_res_compact(kb_value_get(st, "allocated"), "", alloc, sizeof(alloc));
        if (*alloc)
                kb_buf_printf(&b, "%s%s allocated", b.len ? ", " : "", alloc);
        const char *state = "Closing";
        if (!known)
                snprintf(why, n,
                         "no status written yet: the scheduler makes it Closed once no "
                         "work is left");
        else if (b.len)
                snprintf(why, n, "%s: Closed once they are done", b.data);
        else {
                snprintf(why, n, "no work left");
                state = "Closed";
        }
        kb_buf_release(&b);
        return state;
}

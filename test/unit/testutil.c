#include "testutil.h"

#include <string.h>

static struct kb_buf captured;

static void hook(char severity, const char *msg, void *arg)
{
        (void)arg;
        kb_buf_printf(&captured, "%c %s\n", severity, msg);
}

void kb_test_log_start(void)
{
        kb_buf_release(&captured);
        kb_log_set_hook(hook, NULL);
}

void kb_test_log_stop(void)
{
        kb_log_set_hook(NULL, NULL);
        kb_buf_release(&captured);
}

const char *kb_test_log_text(void)
{
        return captured.data ? captured.data : "";
}

int kb_test_log_contains(const char *needle)
{
        return captured.data && strstr(captured.data, needle) != NULL;
}

/* ---- scenarios ------------------------------------------------------------------ */

#include <stdio.h>
#include <stdlib.h>

#include "framework/framework.h"
#include "sim/sim.h"
#include "value/value.h"

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits a space-separated list into a sorted array of normalised
 * "ns/pod=node" strings. */
static size_t expected_binds(const char *text, char ***out)
{
        char *copy = kb_xstrdup(text ? text : ""), *save = NULL;
        char **v = NULL;
        size_t n = 0, cap = 0;
        for (char *tok = strtok_r(copy, " \n\t", &save); tok;
             tok = strtok_r(NULL, " \n\t", &save)) {
                char *s = strchr(tok, '/') && strchr(tok, '/') < strchr(tok, '=')
                              ? kb_xstrdup(tok)
                              : kb_xasprintf("default/%s", tok);
                KB_PUSH(v, n, cap, s);
        }
        free(copy);
        if (n)
                qsort(v, n, sizeof(*v), cmp_str);
        *out = v;
        return n;
}

/* "pod" or "ns/pod" tokens as sorted "ns/pod" strings. */
static size_t expected_pods(const char *text, char ***out)
{
        char *copy = kb_xstrdup(text ? text : ""), *save = NULL;
        char **v = NULL;
        size_t n = 0, cap = 0;
        for (char *tok = strtok_r(copy, " \n\t", &save); tok;
             tok = strtok_r(NULL, " \n\t", &save)) {
                char *s = strchr(tok, '/') ? kb_xstrdup(tok) : kb_xasprintf("default/%s", tok);
                KB_PUSH(v, n, cap, s);
        }
        free(copy);
        if (n)
                qsort(v, n, sizeof(*v), cmp_str);
        *out = v;
        return n;
}

static char *join(char **v, size_t n)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        kb_buf_addc(&b, ' ');
                kb_buf_adds(&b, v[i]);
        }
        return kb_buf_detach(&b);
}

/* ---- the kept model --------------------------------------------------------------- */

static void dump_res(struct kb_buf *b, const char *what, const struct kb_res *r)
{
        kb_buf_printf(b, " %s", what);
        for (int i = 0; i < KB_RES_MAX; i++)
                if (r->q[i])
                        kb_buf_printf(b, " %d:%lld", i, (long long)r->q[i]);
}

#define S(x) ((x) ? (x) : "-")
char *kb_test_result_text(const struct kb_result *r)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < r->nbinds; i++)
                kb_buf_printf(&b, "bind %s=%s\n", r->binds[i].pod->meta.name, r->binds[i].node);
        for (size_t i = 0; i < r->nevictions; i++) {
                const struct kb_eviction *e = &r->evictions[i];
                kb_buf_printf(&b, "evict %s %s %s %s\n", e->pod->meta.name, S(e->action),
                              S(e->reason), S(e->group));
        }
        for (size_t i = 0; i < r->nnominations; i++)
                kb_buf_printf(&b, "nominate %s=%s\n", r->nominations[i].pod->meta.name,
                              r->nominations[i].node);
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                kb_buf_printf(&b,
                              "podgroup %s %s %d/%d/%d/%d %s %s %s %s %u/%u %.3f %s %d %s %s %s "
                              "%.3f %s %s\n",
                              st->name, kb_pg_phase_name(st->phase), st->running, st->succeeded,
                              st->failed, st->pending, S(st->cond_type), S(st->cond_status),
                              S(st->cond_reason), S(st->cond_message), st->position, st->waiting,
                              st->expected_start, S(st->domain), st->domain_tier, S(st->inq_status),
                              S(st->inq_reason), S(st->inq_message), st->inq_since,
                              S(st->pending_message), S(st->unknown_priority_class));
        }
        for (size_t i = 0; i < r->nqueues; i++) {
                const struct kb_queue_status *q = &r->queues[i];
                kb_buf_printf(&b, "queue %s %d %d %d/%d/%d/%d/%d %.6f %d", q->name, (int)q->state,
                              q->state_changed, q->pending, q->inqueue, q->running, q->unknown,
                              q->completed, q->share, q->unreclaimed);
                dump_res(&b, "allocated", &q->allocated);
                dump_res(&b, "deserved", &q->deserved);
                dump_res(&b, "capability", &q->capability);
                kb_buf_printf(&b, "\n");
        }
        for (size_t i = 0; i < r->nwarnings; i++)
                kb_buf_printf(&b, "warning %s %s %s\n", S(r->warnings[i].object),
                              S(r->warnings[i].message), S(r->warnings[i].reason));
        for (size_t i = 0; i < r->nhypernodes; i++)
                kb_buf_printf(&b, "hypernode %s %lld\n", r->hypernodes[i].hn->meta.name,
                              (long long)r->hypernodes[i].node_count);
        for (size_t i = 0; i < r->nunschedulable; i++)
                kb_buf_printf(&b, "unschedulable %s %s\n", r->unschedulable[i].pod->meta.name,
                              S(r->unschedulable[i].message));
        kb_buf_printf(&b, "backfilled %u\n", r->backfilled);
        return kb_buf_detach(&b);
}
#undef S

/*
 * A session on snap through model m, which must decide what a fresh
 * build decides, whether m is built now or used again: the session runs
 * on a fresh model, then on m, then on m again (used again for certain),
 * and the three results must be the same.  The last one is returned in r.
 */
void kb_test_session_model(struct kb_model *m, const struct kb_snapshot *snap,
                           const struct kb_conf *conf, struct kb_result *r)
{
        struct kb_result fresh, first;
        assert_int_equal(kb_session_run(snap, conf, &fresh), 0);
        assert_int_equal(kb_session_run_model(m, snap, conf, &first), 0);
        uint64_t built, reused;
        kb_model_counts(m, &built, &reused);
        assert_int_equal(kb_session_run_model(m, snap, conf, r), 0);
        uint64_t built2, reused2;
        kb_model_counts(m, &built2, &reused2);
        assert_int_equal(built2, built);
        assert_int_equal(reused2, reused + 1);
        char *a = kb_test_result_text(&fresh), *b = kb_test_result_text(&first),
             *c = kb_test_result_text(r);
        assert_string_equal(b, a);
        assert_string_equal(c, a);
        free(a);
        free(b);
        free(c);
        kb_result_release(&fresh);
        kb_result_release(&first);
}

static void run_once(const struct kb_scenario *sc, bool full_scan, char **binds_out,
                     char **phases_out, char **reasons_out, char **messages_out,
                     char **nominated_out, char **evicted_out, char **domains_out)
{
        struct kb_buf domains;
        kb_buf_init(&domains);
        char **ev = NULL;
        size_t nev = 0, capev = 0;
        char **nom = NULL;
        size_t nnom = 0, capnom = 0;
        struct kb_cluster c;
        struct kb_conf conf;
        char err[1024];
        const char *conf_text = sc->conf ? sc->conf : kb_default_conf_yaml;
        char **got = NULL;
        size_t ngot = 0, cap = 0;
        struct kb_buf phases, reasons, messages;

        kb_buf_init(&phases);
        kb_buf_init(&reasons);
        kb_buf_init(&messages);
        kb_cluster_init(&c);
        c.now = 1.8e9;
        c.workload_podgroups = !sc->lone;
        if (kb_cluster_load(&c, sc->name, sc->manifests, strlen(sc->manifests), err, sizeof(err))) {
                fprintf(stderr, "scenario %s: load: %s\n", sc->name, err);
                fail();
        }
        kb_cluster_ensure_default_queue(&c);
        if (kb_conf_parse(conf_text, strlen(conf_text), &conf, err, sizeof(err))) {
                fprintf(stderr, "scenario %s: conf: %s\n", sc->name, err);
                fail();
        }
        conf.full_scan = full_scan;
        int sessions = sc->sessions > 0 ? sc->sessions : 1;
        struct kb_model *model = kb_model_new();
        for (int i = 0; i < sessions; i++) {
                struct kb_snapshot snap;
                struct kb_result r;
                kb_cluster_snapshot(&c, &snap);
                kb_test_session_model(model, &snap, &conf, &r);
                for (size_t k = 0; k < r.nevictions; k++) {
                        const struct kb_pod *p = r.evictions[k].pod;
                        char *s = kb_xasprintf("%s/%s", p->meta.namespace, p->meta.name);
                        KB_PUSH(ev, nev, capev, s);
                }
                for (size_t k = 0; k < r.nbinds; k++) {
                        char *s = kb_xasprintf("%s/%s=%s", r.binds[k].pod->meta.namespace,
                                               r.binds[k].pod->meta.name, r.binds[k].node);
                        KB_PUSH(got, ngot, cap, s);
                }
                if (i == sessions - 1) {
                        for (size_t k = 0; k < r.nnominations; k++) {
                                const struct kb_nomination *nm = &r.nominations[k];
                                char *s = kb_xasprintf("%s/%s=%s", nm->pod->meta.namespace,
                                                       nm->pod->meta.name, nm->node);
                                KB_PUSH(nom, nnom, capnom, s);
                        }
                        for (size_t k = 0; k < r.nunschedulable; k++)
                                kb_buf_printf(&messages, "pod %s/%s: %s\n",
                                              r.unschedulable[k].pod->meta.namespace,
                                              r.unschedulable[k].pod->meta.name,
                                              r.unschedulable[k].message);
                        for (size_t k = 0; k < r.npodgroups; k++) {
                                const struct kb_pg_status *st = &r.podgroups[k];
                                kb_buf_printf(&phases, "%s=%s ", st->name,
                                              kb_pg_phase_name(st->phase));
                                kb_buf_printf(&domains, "%s=%s ", st->name,
                                              st->domain ? st->domain : "-");
                                if (st->cond_type && strcmp(st->cond_type, "Unschedulable") == 0) {
                                        kb_buf_printf(&messages, "%s: %s\n", st->name,
                                                      st->cond_message);
                                        kb_buf_printf(&reasons, "%s=%s ", st->name,
                                                      st->cond_reason);
                                }
                        }
                }
                kb_cluster_apply(&c, &r);
                kb_result_release(&r);
        }
        kb_model_free(model);
        if (ngot)
                qsort(got, ngot, sizeof(*got), cmp_str);
        *binds_out = join(got, ngot);
        for (size_t k = 0; k < ngot; k++)
                free(got[k]);
        free(got);
        if (nnom)
                qsort(nom, nnom, sizeof(*nom), cmp_str);
        *nominated_out = join(nom, nnom);
        if (nev)
                qsort(ev, nev, sizeof(*ev), cmp_str);
        *evicted_out = join(ev, nev);
        for (size_t k = 0; k < nev; k++)
                free(ev[k]);
        free(ev);
        for (size_t k = 0; k < nnom; k++)
                free(nom[k]);
        free(nom);
        *phases_out = kb_buf_detach(&phases);
        *reasons_out = kb_buf_detach(&reasons);
        *domains_out = kb_buf_detach(&domains);
        *messages_out = kb_buf_detach(&messages);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

/* Each expected "pg=Value" of want (default namespace may be omitted)
 * must appear among got's "ns/pg=Value " pairs. */
static void check_pairs(const char *scenario, const char *what, const char *want, const char *got)
{
        if (!want)
                return;
        char *copy = kb_xstrdup(want), *save = NULL;
        for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                char *full =
                    strchr(tok, '/') ? kb_xasprintf("%s ", tok) : kb_xasprintf("default/%s ", tok);
                char *spaced = kb_xasprintf(" %s", got);
                char *needle = kb_xasprintf(" %s", full);
                if (!strstr(spaced, needle)) {
                        fprintf(stderr, "scenario %s: want %s %s, got %s\n", scenario, what, tok,
                                got);
                        fail();
                }
                free(full);
                free(spaced);
                free(needle);
        }
        free(copy);
}

void kb_run_scenario(const struct kb_scenario *sc)
{
        char **want;
        size_t nwant = expected_binds(sc->binds, &want);
        char *want_text = join(want, nwant);
        for (int mode = 0; mode < 2; mode++) {
                char *binds, *phases, *reasons, *messages, *nominated, *evicted, *domains;
                run_once(sc, mode == 1, &binds, &phases, &reasons, &messages, &nominated, &evicted,
                         &domains);
                if (sc->evicted) {
                        char **we;
                        size_t nwe = expected_pods(sc->evicted, &we);
                        char *we_text = join(we, nwe);
                        if (strcmp(evicted, we_text) != 0) {
                                fprintf(stderr,
                                        "scenario %s (%s):\n  want evicted: %s\n  got evicted:  "
                                        "%s\n  binds: %s\n  messages: %s\n",
                                        sc->name, mode ? "full scan" : "cached", we_text, evicted,
                                        binds, messages);
                                fail();
                        }
                        for (size_t i = 0; i < nwe; i++)
                                free(we[i]);
                        free(we);
                        free(we_text);
                }
                free(evicted);
                if (strcmp(binds, want_text) != 0) {
                        fprintf(stderr,
                                "scenario %s (%s):\n  want binds: %s\n  got binds:  %s\n  "
                                "phases: %s\n  messages: %s\n",
                                sc->name, mode ? "full scan" : "cached", want_text, binds, phases,
                                messages);
                        fail();
                }
                check_pairs(sc->name, "phase", sc->phases, phases);
                check_pairs(sc->name, "reason", sc->reasons, reasons);
                check_pairs(sc->name, "domain", sc->domains, domains);
                free(domains);
                if (sc->message && !strstr(messages, sc->message)) {
                        fprintf(stderr,
                                "scenario %s: want a condition containing \"%s\", got:\n%s\n",
                                sc->name, sc->message, messages);
                        fail();
                }
                if (sc->nominated) {
                        char **wn;
                        size_t nwn = expected_binds(sc->nominated, &wn);
                        char *wn_text = join(wn, nwn);
                        if (strcmp(nominated, wn_text) != 0) {
                                fprintf(stderr,
                                        "scenario %s (%s):\n  want nominated: %s\n  got "
                                        "nominated:  %s\n",
                                        sc->name, mode ? "full scan" : "cached", wn_text,
                                        nominated);
                                fail();
                        }
                        for (size_t i = 0; i < nwn; i++)
                                free(wn[i]);
                        free(wn);
                        free(wn_text);
                }
                free(binds);
                free(phases);
                free(messages);
                free(reasons);
                free(nominated);
        }
        for (size_t i = 0; i < nwant; i++)
                free(want[i]);
        free(want);
        free(want_text);
}

void kb_run_scenarios(const struct kb_scenario *table, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                print_message("[ SCENARIO ] %s\n", table[i].name);
                kb_run_scenario(&table[i]);
        }
}

/* ---- whole runs ------------------------------------------------------------------ */

char *kb_test_run_binds(const char *manifests, const char *conf_text, bool full_scan, int sessions)
{
        struct kb_cluster c;
        struct kb_conf conf;
        char err[512];
        struct kb_buf out;
        kb_buf_init(&out);
        kb_cluster_init(&c);
        assert_int_equal(
            kb_cluster_load(&c, "random", manifests, strlen(manifests), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(kb_conf_parse(conf_text, strlen(conf_text), &conf, err, sizeof(err)), 0);
        conf.full_scan = full_scan;
        struct kb_model *model = kb_model_new();
        for (int i = 0; i < sessions; i++) {
                struct kb_snapshot snap;
                struct kb_result r;
                kb_cluster_snapshot(&c, &snap);
                assert_int_equal(kb_session_run_model(model, &snap, &conf, &r), 0);
                /* Every action and plugin is timed, in conf order. */
                assert_int_equal(r.naction_times, conf.nactions);
                for (size_t k = 0; k < conf.nactions; k++) {
                        assert_string_equal(r.action_times[k].name, conf.actions[k].name);
                        assert_true(r.action_times[k].seconds >= 0);
                }
                size_t np = 0;
                for (size_t t = 0; t < conf.ntiers; t++)
                        for (size_t p = 0; p < conf.tiers[t].nplugins; p++, np++)
                                assert_string_equal(r.plugin_times[np].name,
                                                    conf.tiers[t].plugins[p].name);
                assert_int_equal(r.nplugin_times, np);
                for (size_t k = 0; k < r.nbinds; k++)
                        kb_buf_printf(&out, "%s=%s ", r.binds[k].pod->meta.name, r.binds[k].node);
                for (size_t k = 0; k < r.npodgroups; k++)
                        kb_buf_printf(&out, "[%s %s %s] ", r.podgroups[k].name,
                                      kb_pg_phase_name(r.podgroups[k].phase),
                                      r.podgroups[k].cond_message ? r.podgroups[k].cond_message
                                                                  : "");
                kb_cluster_apply(&c, &r);
                kb_result_release(&r);
        }
        kb_model_free(model);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
        return kb_buf_detach(&out);
}

struct kb_value *kb_test_yaml1(const char *text)
{
        struct kb_value **docs;
        size_t n;
        char err[256];
        int rc = kb_yaml_parse(text, strlen(text), &docs, &n, err, sizeof(err));
        if (rc)
                print_error("yaml: %s\n%s\n", err, text);
        assert_int_equal(rc, 0);
        assert_int_equal(n, 1);
        struct kb_value *v = docs[0];
        free(docs);
        return v;
}

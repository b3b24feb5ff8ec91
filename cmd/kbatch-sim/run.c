/*
 * The runs of kbatch-sim: sessions one after another (--sessions N), or on
 * a simulated clock (--until-done), and the input both are built from.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kbatch-sim.h"

void sim_input_of(const struct sim_args *a, struct sim_input *in)
{
        *in = (struct sim_input){a->synthetic, a->nsynthetic, a->swf, a->swf_opts,
                                 a->files,     a->nfiles,     false};
}

int sim_load_input(const struct sim_input *in, struct kb_cluster *c)
{
        char err[2048];
        c->now = (double)time(NULL);
        for (size_t i = 0; i < in->nsynthetic; i++)
                if (kb_cluster_synthetic(c, in->synthetic[i], err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        return -1;
                }
        if (in->swf) {
                char *text;
                size_t len;
                struct kb_swf_stats st;
                int frc = kb_read_file(in->swf, &text, &len);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: --swf %s: %s\n", in->swf, kb_strerror(frc));
                        return -1;
                }
                frc = kb_cluster_swf(c, in->swf, text, len, &in->swf_opts, &st, err, sizeof(err));
                free(text);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: --swf %s\n", err);
                        return -1;
                }
                if (!in->quiet)
                        fprintf(stderr,
                                "kbatch-sim: %s: %zu job(s) as gangs (%zu pods) on %lld node(s) "
                                "of %lld processor(s) in all; skipped %zu with no run time, %zu "
                                "with no processor count, %zu wider than the machine\n",
                                in->swf, st.jobs, st.pods, (long long)st.nodes,
                                (long long)st.processors, st.skipped_runtime, st.skipped_procs,
                                st.skipped_wide);
        }
        for (int i = 0; i < in->nfiles; i++) {
                char *text;
                size_t len;
                const char *f = in->files[i];
                int frc = kb_read_file(f, &text, &len);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: %s: %s\n", f, kb_strerror(frc));
                        return -1;
                }
                frc =
                    kb_cluster_load(c, strcmp(f, "-") ? f : "<stdin>", text, len, err, sizeof(err));
                free(text);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        return -1;
                }
        }
        if (kb_cluster_ensure_default_queue(c))
                KB_V(1, "no queue named %s in the input: using one with weight 1",
                     c->default_queue);
        return 0;
}

struct timed_out {
        struct kb_sim_json *json; /* NULL: table */
        const struct kb_cluster *c;
        bool stats, summary;
        /* --progress: a line on stderr, rewritten in place on a terminal,
         * at most every tty ? 0.2 s : 2 s of wall time, and at the end. */
        bool progress, tty;
        double shown; /* wall time of the last line */
        bool dirty;   /* a line without its newline is out */
};

/* The progress line: simulated time, sessions, gangs finished. */
static void progress_line(struct timed_out *o, int64_t t, long sessions, size_t finished,
                          size_t gangs, const char *end)
{
        char ck[32];
        long long sec = (long long)(t / 1000000000LL);
        snprintf(ck, sizeof(ck), "%lld:%02lld:%02lld", sec / 3600, sec / 60 % 60, sec % 60);
        fprintf(stderr, "%skbatch-sim: simulated %s, %ld session(s), %zu of %zu gang(s) finished%s",
                o->tty ? "\r" : "", ck, sessions, finished, gangs, o->tty ? "\033[K" : "");
        fputs(end, stderr);
        fflush(stderr);
        o->dirty = o->tty && !*end;
        o->shown = kb_now_mono();
}

static void progress(struct timed_out *o, const struct kb_sim_step *step)
{
        double now = kb_now_mono();
        if (o->shown > 0 && now - o->shown < (o->tty ? 0.2 : 2.0))
                return;
        progress_line(o, step->time, step->index, step->finished, step->gangs, o->tty ? "" : "\n");
}

/* The last progress line, once the run is over. */
static void progress_end(struct timed_out *o, const struct kb_sim_report *rep)
{
        size_t gangs = 0, finished = 0;
        for (size_t g = 0; g < rep->ngangs; g++)
                if (!rep->gangs[g].prior) {
                        gangs++;
                        finished += rep->gangs[g].end >= 0;
                }
        progress_line(o, rep->clock, rep->sessions, finished, gangs, "\n");
}

/* Each session of a timed run that changed something (or the first). */
static void on_step(void *arg, const struct kb_sim_step *step)
{
        struct timed_out *o = arg;
        struct kb_session_view v = {step->index, (double)step->time / 1e9, step->pg_changed, true};
        if (o->progress)
                progress(o, step);
        if (o->stats)
                fprintf(stderr, "session %ld at %.3fs: %.6fs, %zu binds\n", step->index,
                        (double)step->time / 1e9, step->r->duration, step->r->nbinds);
        bool shown = !o->summary && (step->changed || step->index == 1);
        for (size_t i = 0; !o->summary && !shown && i < step->r->npodgroups; i++)
                shown = step->pg_changed[i];
        if (!shown)
                return;
        /* A progress line in place on the terminal ends before the table. */
        if (o->dirty && !o->json && kb_verbosity >= 1) {
                fputc('\n', stderr);
                o->dirty = false;
        }
        if (o->json)
                kb_sim_json_session(o->json, step->r, &v, o->c);
        else if (kb_verbosity >= 1)
                kb_result_print_table(step->r, &v, o->c, stdout);
}

static long peak_rss_kib(void)
{
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_maxrss;
}

/* With a network topology: how many running gangs sit within a domain of
 * each tier, and how many within none. */
static void domain_stats(const struct kb_result *r, long session)
{
        size_t by_tier[8] = {0}, higher = 0, none = 0, any = 0;
        for (size_t g = 0; g < r->npodgroups; g++) {
                const struct kb_pg_status *st = &r->podgroups[g];
                if (!st->domain) {
                        none += st->phase == KB_PG_RUNNING;
                        continue;
                }
                any++;
                if (st->domain_tier >= 0 && st->domain_tier < 8)
                        by_tier[st->domain_tier]++;
                else
                        higher++;
        }
        if (!any)
                return;
        fprintf(stderr, "session %ld: running gangs by network topology domain:", session);
        for (int t = 0; t < 8; t++)
                if (by_tier[t])
                        fprintf(stderr, " tier %d: %zu,", t, by_tier[t]);
        if (higher)
                fprintf(stderr, " tier 8 or more: %zu,", higher);
        fprintf(stderr, " none: %zu\n", none);
}

static void print_model_counts(uint64_t built, uint64_t reused, uint64_t updated, uint64_t repeated)
{
        fprintf(stderr,
                "session model: built %" PRIu64 " times, used again %" PRIu64 " times (%" PRIu64
                " of them repeating the last result), updated %" PRIu64 " times\n",
                built, reused, repeated, updated);
}

int sim_run_timed(const struct sim_args *a, struct kb_cluster *c, const struct kb_conf *conf)
{
        /* JSON goes out session by session (kb_sim_json): nothing of the
         * run is held for the end. */
        struct kb_sim_json json;
        struct kb_sim_report rep;
        bool as_json = strcmp(a->output, "json") == 0;
        struct timed_out to = {as_json ? &json : NULL, c, a->stats, a->summary, a->progress == 1,
                               isatty(STDERR_FILENO),  0, false};
        char err[2048];
        int rc = 0;

        kb_sim_json_init(&json, stdout);
        int src = kb_sim_run(c, conf, &a->sim, on_step, &to, &rep, err, sizeof(err));
        if (to.dirty)
                fputc('\n', stderr);
        if (src) {
                fprintf(stderr, "kbatch-sim: %s\n", err);
                /* Sessions already out still end a whole document. */
                if (json.open)
                        kb_sim_json_end(&json, NULL);
                return src == KB_EBADINPUT ? 2 : 1;
        }
        if (to.progress)
                progress_end(&to, &rep);
        if (as_json) {
                struct kb_value *sim = kb_sim_report_to_json(&rep);
                if (a->summary) {
                        kb_value_del(sim, "podGroups");
                        kb_value_del(sim, "pods");
                }
                kb_sim_json_end(&json, sim);
        } else if (a->summary) {
                kb_sim_report_print_summary(&rep, stdout);
        } else {
                kb_sim_report_print_table(&rep, stdout);
        }
        if (rep.stop == KB_SIM_TIME_LIMIT && kb_sim_report_unfinished(&rep))
                rc = 3; /* the run did not finish: not a result to read as one */
        if (rep.stop != KB_SIM_DONE) {
                fprintf(stderr, "kbatch-sim: %s%s with %zu gang(s) unfinished%s\n",
                        rep.stop == KB_SIM_TIME_LIMIT ? "warning: " : "",
                        rep.stop == KB_SIM_STUCK        ? "nothing left can change"
                        : rep.stop == KB_SIM_TIME_LIMIT ? "stopped at --time-limit"
                                                        : "stopped at --sessions",
                        kb_sim_report_unfinished(&rep),
                        rep.stop == KB_SIM_STUCK ? "; they can never run as things stand "
                                                   "(see why in the output)"
                                                 : "");
        }
        if (a->csv && kb_sim_report_write_csv(&rep, a->csv, err, sizeof(err))) {
                fprintf(stderr, "kbatch-sim: --csv %s\n", err);
                rc = 1;
        }
        if (a->plot && kb_sim_report_write_svg(&rep, a->plot, err, sizeof(err))) {
                fprintf(stderr, "kbatch-sim: --plot %s\n", err);
                rc = 1;
        }
        if (a->stats)
                print_model_counts(rep.model_built, rep.model_reused, rep.model_updated,
                                   rep.model_repeated);
        kb_sim_report_release(&rep);
        if (a->stats)
                sim_print_stats(c);
        return rc;
}

int sim_run_sessions(const struct sim_args *a, struct kb_cluster *c, const struct kb_conf *conf)
{
        struct kb_sim_json json;
        bool as_json = strcmp(a->output, "json") == 0;
        int rc = 0;

        /* A model kept between sessions, when more than one runs. */
        struct kb_model *model = a->sessions > 1 ? kb_model_new() : NULL;
        kb_sim_json_init(&json, stdout);
        for (long i = 1; i <= a->sessions; i++) {
                struct kb_snapshot snap;
                struct kb_result result;
                struct kb_session_view view = {i, -1, NULL, false};
                kb_cluster_snapshot(c, &snap);
                if (kb_session_run_model(model, &snap, conf, &result) != 0) {
                        fprintf(stderr,
                                "kbatch-sim: session %ld: the conf names a missing "
                                "action or plugin\n",
                                i);
                        rc = 1;
                }
                if (as_json)
                        kb_sim_json_session(&json, &result, &view, c);
                else
                        kb_result_print_table(&result, &view, c, stdout);
                if (a->stats) {
                        fprintf(stderr, "session %ld: %.6fs, %zu binds\n", i, result.duration,
                                result.nbinds);
                        domain_stats(&result, i);
                }
                kb_cluster_apply(c, &result);
                kb_result_release(&result);
        }
        if (as_json)
                kb_sim_json_end(&json, NULL);
        if (a->stats && model) {
                uint64_t built, reused;
                kb_model_counts(model, &built, &reused);
                print_model_counts(built, reused, kb_model_updates(model), kb_model_repeats(model));
        }
        kb_model_free(model);
        if (a->stats)
                sim_print_stats(c);
        return rc;
}

void sim_print_stats(const struct kb_cluster *c)
{
        /* Gangs fully and partly bound at the end: each pod bound counts
         * for its group, found by "ns/name" in a kb_map to the group's
         * index (only the totals are printed, so no order shows). */
        size_t full = 0, partial = 0, bound_pods = 0, ng = c->npodgroups;
        char **keys = kb_xcalloc(ng + 1, sizeof(*keys));
        int32_t *bound = kb_xcalloc(ng + 1, sizeof(*bound));
        struct kb_map by_key;
        kb_map_init(&by_key, KB_MAP_STR);
        kb_map_reserve(&by_key, ng);
        for (size_t g = 0; g < ng; g++) {
                const struct kb_podgroup *pg = c->podgroups[g];
                keys[g] = kb_xasprintf("%s/%s", pg->meta.namespace, pg->meta.name);
                /* A name twice counts for the later, as before. */
                *kb_map_put_str(&by_key, keys[g], strlen(keys[g]), NULL) = g;
        }
        for (size_t p = 0; p < c->npods; p++) {
                const struct kb_pod *pod = c->pods[p];
                if (!pod->node_name || !pod->group_name)
                        continue;
                char *key = kb_xasprintf("%s/%s", pod->meta.namespace, pod->group_name);
                const uint64_t *g = kb_map_get_str(&by_key, key, strlen(key));
                if (g)
                        bound[*g]++;
                free(key);
        }
        for (size_t g = 0; g < ng; g++) {
                if (bound[g] > 0 && bound[g] >= c->podgroups[g]->min_member)
                        full++;
                else if (bound[g] > 0)
                        partial++;
                free(keys[g]);
        }
        kb_map_release(&by_key);
        free(keys);
        free(bound);
        for (size_t p = 0; p < c->npods; p++)
                bound_pods += c->pods[p]->node_name != NULL;
        fprintf(stderr,
                "pods bound: %zu of %zu; gangs fully bound: %zu, partly bound: %zu, "
                "of %zu; peak RSS: %ld KiB\n",
                bound_pods, c->npods, full, partial, c->npodgroups, peak_rss_kib());
}

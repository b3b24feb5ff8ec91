/*
 * The session's lifecycle: open (build the model, open the plugins tier by
 * tier), execute (the conf's actions in order), close (close the plugins,
 * write the statuses, free everything).  The stages themselves live in
 * open.c and close.c; this file sequences them, times them for the
 * daemon's latency metrics, and answers the accessors actions and plugins
 * use.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* Each plugin of the conf, tiers flattened, with its tier and index k. */
#define EACH_PLUGIN(conf, t, p, k)                                                                 \
        for (size_t t = 0, k = 0; t < (conf)->ntiers; t++)                                         \
                for (size_t p = 0; p < (conf)->tiers[t].nplugins; p++, k++)

/* ---- open ------------------------------------------------------------------ */

static void open_plugins(struct kb_session *s)
{
        const struct kb_conf *conf = s->conf;
        struct kb_result *r = s->result;
        size_t nplugins = 0;
        for (size_t t = 0; t < conf->ntiers; t++)
                nplugins += conf->tiers[t].nplugins;
        s->plugin_state = kb_pool_alloc(&s->pool, (nplugins + 1) * sizeof(void *));
        r->plugin_times = kb_pool_alloc(&r->pool, (nplugins + 1) * sizeof(*r->plugin_times));
        EACH_PLUGIN (conf, t, p, k) {
                const struct kb_plugin_conf *pc = &conf->tiers[t].plugins[p];
                const struct kb_plugin *plugin = kb_plugin_find(pc->name);
                struct kb_plugin_time *pt = &r->plugin_times[k];
                pt->name = pc->name;
                r->nplugin_times = k + 1;
                if (!plugin) {
                        s->rc = KB_EBADCONF;
                        continue;
                }
                kb__points_begin(s, (int)t, pc);
                double t0 = kb_now_mono();
                s->plugin_state[k] = plugin->open ? plugin->open(s, pc->arguments) : NULL;
                pt->open = kb_now_mono() - t0;
        }
        kb__points_begin(s, 0, NULL);
}

struct kb_session *kb_session_open_model(struct kb_model *m, const struct kb_snapshot *snap,
                                         const struct kb_conf *conf, struct kb_result *result)
{
        struct kb_session *s = kb_xcalloc(1, sizeof(*s));
        memset(result, 0, sizeof(*result));
        kb_pool_init(&result->pool, 0);
        kb_pool_init(&s->pool, 1 << 20);
        result->duration = kb_now_mono(); /* the start, until close */
        s->snap = snap;
        s->conf = conf;
        s->result = result;
        s->has_enqueue = kb_conf_has_action(conf, "enqueue");
        s->clock_until = INFINITY;
        s->model = m;
        if (m)
                kb__model_open(s);
        else
                kb__session_build(s, &s->pool);
        kb__inqueue_timeouts(s);
        kb__classes_init(s);
        kb__select_init(s);
        open_plugins(s);
        kb__services_ready(s);
        kb__topology_build(s);
        return s;
}

struct kb_session *kb_session_open(const struct kb_snapshot *snap, const struct kb_conf *conf,
                                   struct kb_result *result)
{
        return kb_session_open_model(NULL, snap, conf, result);
}

/* ---- execute --------------------------------------------------------------- */

int kb_session_execute(struct kb_session *s)
{
        const struct kb_conf *conf = s->conf;
        struct kb_result *r = s->result;
        r->action_times = kb_pool_alloc(&r->pool, (conf->nactions + 1) * sizeof(*r->action_times));
        for (size_t a = 0; a < conf->nactions; a++) {
                const struct kb_action *action = kb_action_find(conf->actions[a].name);
                if (!action) {
                        s->rc = KB_EBADCONF;
                        continue;
                }
                s->cur_action = &conf->actions[a];
                double t0 = kb_now_mono();
                action->execute(s);
                struct kb_action_time *at = &r->action_times[r->naction_times++];
                at->name = conf->actions[a].name;
                at->seconds = kb_now_mono() - t0;
                KB_V(3, "action %s took %.6fs", action->name, at->seconds);
        }
        s->cur_action = NULL;
        s->executed = true;
        return s->rc;
}

/* ---- close ----------------------------------------------------------------- */

void kb_session_close(struct kb_session *s)
{
        const struct kb_conf *conf = s->conf;
        struct kb_result *r = s->result;
        kb__session_positions(s);
        EACH_PLUGIN (conf, t, p, k) {
                const struct kb_plugin *plugin = kb_plugin_find(conf->tiers[t].plugins[p].name);
                double t0 = kb_now_mono();
                if (plugin && plugin->close)
                        plugin->close(s, s->plugin_state[k]);
                r->plugin_times[k].close = kb_now_mono() - t0;
        }
        kb__services_release(s);
        kb__session_statuses(s);
        kb__topology_report(s);

        kb__select_release(s);
        kb__search_release(s);
        kb__domains_release(s);
        kb__classes_release(s);
        kb__statements_release(s);
        kb__topology_release(s);
        kb__points_release(s);
        if (s->model) {
                kb__model_close(s);
        } else {
                kb_map_release(&s->node_ids);
                kb_map_release(&s->queue_ids);
        }
        kb_map_release(&s->interned);
        free(s->changes);
        kb_pool_release(&s->pool);
        r->duration = kb_now_mono() - r->duration;
        if (s->model)
                kb__repeat_keep(s);
        free(s);
}

static int run(struct kb_model *m, const struct kb_snapshot *snap, const struct kb_conf *conf,
               struct kb_result *result)
{
        struct kb_session *s = kb_session_open_model(m, snap, conf, result);
        int rc = kb_session_execute(s);
        kb_session_close(s);
        return rc;
}

#ifdef KB_TESTING
/* A repeated result against running the session (repeat.c), the model's
 * counts left as the repeat set them. */
static void check_repeat(struct kb_model *m, const struct kb_snapshot *snap,
                         const struct kb_conf *conf, const struct kb_result *repeated)
{
        struct kb_result ran;
        uint64_t nreused = m->nreused;
        run(m, snap, conf, &ran);
        m->nreused = nreused;
        kb__repeat_check(repeated, &ran);
        kb_result_release(&ran);
}
#endif

/* Never inlined (the release build links with -flto): test/bench/check.sh
 * counts the instructions inside it by its name. */
__attribute__((noinline)) int kb_session_run_model(struct kb_model *m,
                                                   const struct kb_snapshot *snap,
                                                   const struct kb_conf *conf,
                                                   struct kb_result *result)
{
        if (kb__repeat_result(m, snap, conf, result)) {
#ifdef KB_TESTING
                if (kb__model_check_due(m))
                        check_repeat(m, snap, conf, result);
#endif
                return 0;
        }
        return run(m, snap, conf, result);
}

int kb_session_run(const struct kb_snapshot *snap, const struct kb_conf *conf,
                   struct kb_result *result)
{
        return kb_session_run_model(NULL, snap, conf, result);
}

/* ---- the enqueue gate ------------------------------------------------------ */

bool kb_job_admit(struct kb_session *s, struct kb_job *j)
{
        if (j->phase != KB_PG_PENDING)
                return true;
        if (s->has_enqueue)
                return false;
        j->phase = KB_PG_INQUEUE;
        return true;
}

/* ---- accessors ------------------------------------------------------------- */

struct kb_pool *kb_session_pool(struct kb_session *s)
{
        return &s->pool;
}

const struct kb_snapshot *kb_session_snapshot(struct kb_session *s)
{
        return s->snap;
}

const struct kb_conf *kb_session_conf(struct kb_session *s)
{
        return s->conf;
}

struct kb_job **kb_session_jobs(struct kb_session *s, size_t *n)
{
        *n = s->njobs;
        return s->jobs;
}

struct kb_node_info *kb_session_nodes(struct kb_session *s, size_t *n)
{
        *n = s->nnodes;
        return s->nodes;
}

struct kb_task *kb_session_tasks(struct kb_session *s, size_t *n)
{
        *n = s->ntasks;
        return s->tasks;
}

struct kb_queue_info *kb_session_queues(struct kb_session *s, size_t *n)
{
        *n = s->nqueues;
        return s->queues;
}

double kb_session_now(struct kb_session *s)
{
        return kb__now(s);
}

double kb_session_clock(struct kb_session *s)
{
        return s->snap->now;
}

void kb_session_clock_until(struct kb_session *s, double t)
{
        kb__clock_until(s, t);
}

const struct kb_res *kb_session_total(struct kb_session *s)
{
        return &s->total;
}

const struct kb_value *kb_session_action_args(struct kb_session *s)
{
        static const struct kb_value empty = {.type = KB_VOBJECT};
        return s->cur_action && s->cur_action->arguments ? s->cur_action->arguments : &empty;
}

bool kb_session_hierarchy(struct kb_session *s, const char *plugin)
{
        EACH_PLUGIN (s->conf, t, p, k) {
                const struct kb_plugin_conf *pc = &s->conf->tiers[t].plugins[p];
                if (strcmp(pc->name, plugin) == 0)
                        return pc->hierarchy;
        }
        return false;
}

/*
 * The scheduler conf, in Volcano's format (pkg/scheduler/conf):
 *
 *   actions: "enqueue, allocate, backfill"
 *   tiers:
 *   - plugins:
 *     - name: priority
 *       enableJobOrder: false      # or Volcano's other spelling, enabledJobOrder
 *       arguments: {key: value}
 *   configurations:
 *   - name: allocate
 *     arguments: {key: value}
 *
 * A missing flag means enabled.  Names Volcano knows but kbatch does not
 * implement yet are skipped with a warning, so that a Volcano conf loads
 * unchanged; names nobody knows are errors.  Whatever is skipped (actions,
 * plugins, flags, arguments, keys) is also recorded in the conf: the
 * programs print it as one line at startup, the daemon lists it on
 * /metrics, and --strict-conf turns it into an error (kb_conf_strict).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"

const char kb_default_conf_yaml[] = "actions: \"enqueue, allocate, backfill\"\n"
                                    "tiers:\n"
                                    "- plugins:\n"
                                    "  - name: priority\n"
                                    "  - name: gang\n"
                                    "  - name: conformance\n"
                                    "- plugins:\n"
                                    "  - name: overcommit\n"
                                    "  - name: drf\n"
                                    "  - name: predicates\n"
                                    "  - name: proportion\n"
                                    "  - name: nodeorder\n";

/* Volcano actions and plugins that kbatch does not implement yet. */
static const char *const unimplemented_actions[] = {"shuffle", "elect", "reserve", "dispatch"};
static const char *const unimplemented_plugins[] = {
    "task-topology", "tdm",           "numaaware",   "cdp", "rescheduling",
    "usage",         "extender",      "deviceshare", "pdb", "resource-strategy-fit",
    "nodegroup",     "resourcequota", "cpuquota"};
/* Volcano flags that govern features kbatch does not have. */
static const char *const ignored_flags[] = {"Hierarchy",     "BestNode",        "TargetJob",
                                            "ReservedNodes", "ClusterOrder",    "SubJobReady",
                                            "SubJobOrder",   "SubJobPipelined", "NamespaceOrder"};
/* Volcano flags of network topology placement, which kbatch always does
 * (allocate keeps every hard constraint): true asks for what is done. */
static const char *const topology_flags[] = {"HyperNodeOrder", "HyperNodeGradient"};

/* Records something the conf names that kbatch reads but does not act on,
 * and says so: a warning now, a summary at startup and on /metrics, an
 * error under --strict-conf (kb_conf_strict). */
KB_PRINTF(3, 4)
static void skip(struct kb_conf *conf, const char *kind, const char *fmt, ...)
{
        va_list ap;
        char name[256];
        va_start(ap, fmt);
        vsnprintf(name, sizeof(name), fmt, ap);
        va_end(ap);
        struct kb_conf_skip sk = {kind, kb_xstrdup(name)};
        KB_PUSH(conf->skipped, conf->nskipped, conf->capskipped, sk);
}

static bool in_list(const char *const *list, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

static const char *const point_flags[] = {
#define XX(E, name, fnt, reg, flag, ret, disp, params) flag,
    KB_POINTS(XX)
#undef XX
};

/* Matches "enableX" or "enabledX" and returns X, else NULL. */
static const char *flag_suffix(const char *key)
{
        if (kb_has_prefix(key, "enabled"))
                return key + 7;
        if (kb_has_prefix(key, "enable"))
                return key + 6;
        return NULL;
}

static void trim(char **s)
{
        while (**s == ' ' || **s == '\t' || **s == '\n')
                (*s)++;
        char *e = *s + strlen(*s);
        while (e > *s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
                *--e = '\0';
}

static int parse_actions(const struct kb_value *v, struct kb_conf *conf, char *err, size_t errlen)
{
        const char *text = kb_value_str(v);
        if (!text) {
                snprintf(err, errlen, "actions: must be a string like \"enqueue, allocate\"");
                return KB_EBADCONF;
        }
        char *copy = kb_xstrdup(text), *save = NULL;
        int rc = 0;
        size_t cap = 0;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                trim(&tok);
                if (!*tok)
                        continue;
                if (!kb_action_find(tok)) {
                        if (in_list(unimplemented_actions, KB_ARRAY_SIZE(unimplemented_actions),
                                    tok)) {
                                KB_WARN("conf: action %s is not implemented by kbatch yet; "
                                        "skipping it",
                                        tok);
                                skip(conf, "action", "%s", tok);
                                continue;
                        }
                        snprintf(err, errlen, "actions: unknown action \"%s\"", tok);
                        rc = KB_EBADCONF;
                        break;
                }
                struct kb_action_conf a = {kb_xstrdup(tok), kb_value_new(KB_VOBJECT)};
                KB_PUSH(conf->actions, conf->nactions, cap, a);
        }
        free(copy);
        /* A scheduler with nothing to do would sit idle without a word. */
        if (rc == 0 && conf->nactions == 0) {
                if (conf->nskipped)
                        snprintf(err, errlen,
                                 "actions: \"%s\": none of these is implemented by kbatch; the "
                                 "scheduler would do nothing",
                                 text);
                else
                        snprintf(err, errlen,
                                 "actions: no action given; the scheduler would do nothing (the "
                                 "default is \"enqueue, allocate, backfill\")");
                rc = KB_EBADCONF;
        }
        return rc;
}

/* Whether key is in a plugin's NULL-terminated argument list, where an
 * entry ending in '*' stands for every key with that prefix. */
static bool arg_listed(const char *const *list, const char *key)
{
        for (; list && *list; list++) {
                size_t n = strlen(*list);
                if (n && (*list)[n - 1] == '*' ? strncmp(*list, key, n - 1) == 0
                                               : strcmp(*list, key) == 0)
                        return true;
        }
        return false;
}

/* Whether an argument's value asks for nothing (0, false, ""): Volcano's
 * arguments kbatch does not act on are harmless at such values. */
static bool inert(const struct kb_value *v)
{
        const char *t = kb_value_text(v);
        return (v->type == KB_VBOOL && !v->b) || (t && (strcmp(t, "0") == 0 || !*t));
}

/* The plugin's arguments: acted on, Volcano's but not acted on yet, or
 * unknown — the last two are said and recorded. */
static void check_arguments(struct kb_conf *conf, const struct kb_plugin *plugin,
                            const struct kb_plugin_conf *pc, const char *where)
{
        const struct kb_value *args = pc->arguments;
        for (size_t i = 0; i < args->obj.n; i++) {
                const char *key = args->obj.m[i].key;
                if (arg_listed(plugin->arguments, key))
                        continue;
                if (arg_listed(plugin->ignored, key)) {
                        if (inert(args->obj.m[i].val))
                                continue;
                        KB_WARN("conf: %s.arguments.%s: not supported by kbatch's %s yet; "
                                "ignored",
                                where, key, plugin->name);
                } else {
                        KB_WARN("conf: %s.arguments.%s: unknown argument of %s; ignored", where,
                                key, plugin->name);
                }
                skip(conf, "argument", "%s %s", plugin->name, key);
        }
}

static int parse_plugin(struct kb_conf *conf, const struct kb_value *pv, const char *where,
                        struct kb_plugin_conf *pc, bool *skipped, char *err, size_t errlen)
{
        const char *name = kb_value_str(kb_value_get(pv, "name"));
        *skipped = false;
        if (!kb_value_is(pv, KB_VOBJECT) || !name || !*name) {
                snprintf(err, errlen, "%s.name: required", where);
                return KB_EBADCONF;
        }
        const struct kb_plugin *plugin = kb_plugin_find(name);
        if (!plugin) {
                if (in_list(unimplemented_plugins, KB_ARRAY_SIZE(unimplemented_plugins), name)) {
                        KB_WARN("conf: plugin %s is not implemented by kbatch yet; skipping it",
                                name);
                        skip(conf, "plugin", "%s", name);
                        *skipped = true;
                        return 0;
                }
                snprintf(err, errlen, "%s.name: unknown plugin \"%s\"", where, name);
                return KB_EBADCONF;
        }
        pc->name = kb_xstrdup(name);
        memset(pc->enabled, 1, sizeof(pc->enabled));
        pc->arguments = kb_value_new(KB_VOBJECT);
        for (size_t i = 0; i < pv->obj.n; i++) {
                const char *key = pv->obj.m[i].key;
                const struct kb_value *val = pv->obj.m[i].val;
                if (strcmp(key, "name") == 0)
                        continue;
                if (strcmp(key, "arguments") == 0) {
                        if (val->type == KB_VNULL)
                                continue;
                        if (val->type != KB_VOBJECT) {
                                snprintf(err, errlen, "%s.arguments: must be a map", where);
                                return KB_EBADCONF;
                        }
                        kb_value_free(pc->arguments);
                        pc->arguments = kb_value_clone(val);
                        continue;
                }
                const char *suffix = flag_suffix(key);
                bool known = false;
                for (int p = 0; suffix && p < KB_NPOINTS; p++) {
                        if (!point_flags[p] || strcmp(point_flags[p] + 6, suffix) != 0)
                                continue;
                        if (val->type != KB_VBOOL) {
                                snprintf(err, errlen, "%s.%s: must be true or false", where, key);
                                return KB_EBADCONF;
                        }
                        pc->enabled[p] = val->b ? 1 : 0;
                        known = true;
                }
                if (known)
                        continue;
                if (suffix && strcmp(suffix, "Hierarchy") == 0 && plugin->hierarchy) {
                        if (val->type != KB_VBOOL) {
                                snprintf(err, errlen, "%s.%s: must be true or false", where, key);
                                return KB_EBADCONF;
                        }
                        pc->hierarchy = val->b;
                        continue;
                }
                if (suffix && in_list(topology_flags, KB_ARRAY_SIZE(topology_flags), suffix)) {
                        if (val->type == KB_VBOOL && val->b)
                                continue;
                        KB_WARN("conf: %s.%s: kbatch always places gangs by their network "
                                "topology; ignored",
                                where, key);
                        skip(conf, "flag", "%s %s", name, key);
                        continue;
                }
                /* A flag that switches off something kbatch does not do
                 * anyway asks for nothing. */
                if (suffix && in_list(ignored_flags, KB_ARRAY_SIZE(ignored_flags), suffix)) {
                        if (val->type == KB_VBOOL && !val->b)
                                continue;
                        KB_WARN("conf: %s.%s: not supported by kbatch; ignored", where, key);
                } else if (kb_edit_distance(key, "arguments") <= 2) {
                        /* A slip, not a feature kbatch lacks: the plugin's
                         * arguments would be dropped unseen, so it is an
                         * error naming the key. */
                        snprintf(err, errlen, "%s.%s: unknown key, did you mean arguments?", where,
                                 key);
                        return KB_EBADCONF;
                } else {
                        KB_WARN("conf: %s.%s: unknown key; ignored", where, key);
                }
                skip(conf, "flag", "%s %s", name, key);
        }
        check_arguments(conf, plugin, pc, where);
        char msg[300];
        if (plugin->check && plugin->check(pc->arguments, msg, sizeof(msg))) {
                snprintf(err, errlen, "%s (%s).arguments.%s", where, name, msg);
                return KB_EBADCONF;
        }
        return 0;
}

static int parse_tiers(const struct kb_value *v, struct kb_conf *conf, char *err, size_t errlen)
{
        if (!kb_value_is(v, KB_VARRAY)) {
                snprintf(err, errlen, "tiers: must be a list");
                return KB_EBADCONF;
        }
        /* Where proportion and capacity are, if named, and which comes
         * last (its close publishes the queues' deserved last). */
        char quota[2][64] = {"", ""};
        const char *last_quota = NULL;
        conf->tiers = kb_xcalloc(v->arr.n + 1, sizeof(*conf->tiers));
        for (size_t t = 0; t < v->arr.n; t++) {
                const struct kb_value *plugins = kb_value_get(v->arr.v[t], "plugins");
                struct kb_tier_conf *tier = &conf->tiers[conf->ntiers++];
                if (!kb_value_is(plugins, KB_VARRAY)) {
                        snprintf(err, errlen, "tiers[%zu].plugins: must be a list", t);
                        return KB_EBADCONF;
                }
                tier->plugins = kb_xcalloc(plugins->arr.n + 1, sizeof(*tier->plugins));
                for (size_t p = 0; p < plugins->arr.n; p++) {
                        char where[64];
                        bool skipped;
                        snprintf(where, sizeof(where), "tiers[%zu].plugins[%zu]", t, p);
                        struct kb_plugin_conf *pc = &tier->plugins[tier->nplugins];
                        int rc =
                            parse_plugin(conf, plugins->arr.v[p], where, pc, &skipped, err, errlen);
                        if (rc) {
                                /* Keep what was allocated reachable for release. */
                                if (pc->name)
                                        tier->nplugins++;
                                return rc;
                        }
                        if (skipped)
                                continue;
                        tier->nplugins++;
                        if (strcmp(pc->name, "proportion") == 0) {
                                snprintf(quota[0], sizeof(quota[0]), "%s", where);
                                last_quota = "proportion";
                        } else if (strcmp(pc->name, "capacity") == 0) {
                                snprintf(quota[1], sizeof(quota[1]), "%s", where);
                                last_quota = "capacity";
                        }
                }
        }
        /* Both quota plugins: Volcano runs both, and so does kbatch, each
         * with its own shares, their votes combined by the dispatchers'
         * rules (pkg/framework/points.c): a task must be allocatable in
         * both, a victim reclaimable in both, a queue is skipped when
         * either finds it overused, a group is admitted by the enqueue
         * votes' tier rule (in one tier, both must admit it), and queue
         * order asks the first-listed one first.  Volcano's own preempt tests
         * (preempt_test.go, TestTopologyAwarePreempt) run this way.  Said
         * as a warning, since the stricter of two quotas is rarely what a
         * conf means. */
        if (quota[0][0] && quota[1][0])
                KB_WARN("conf: %s (proportion) and %s (capacity): both set the queues' quotas; "
                        "each plugin votes and every vote must pass (allocatable, reclaimable and "
                        "preemptive in both, enqueueable in both when in one tier, overused in "
                        "either, queue order from the first listed), so a queue is held to the "
                        "stricter of the two; "
                        "queue status shows %s's deserved",
                        quota[0], quota[1], last_quota);
        return 0;
}

static int parse_configurations(const struct kb_value *v, struct kb_conf *conf, char *err,
                                size_t errlen)
{
        if (!kb_value_is(v, KB_VARRAY)) {
                snprintf(err, errlen, "configurations: must be a list");
                return KB_EBADCONF;
        }
        for (size_t i = 0; i < v->arr.n; i++) {
                const struct kb_value *c = v->arr.v[i];
                const char *name = kb_value_str(kb_value_get(c, "name"));
                const struct kb_value *args = kb_value_get(c, "arguments");
                if (!name) {
                        snprintf(err, errlen, "configurations[%zu].name: required", i);
                        return KB_EBADCONF;
                }
                if (args && args->type != KB_VOBJECT && args->type != KB_VNULL) {
                        snprintf(err, errlen, "configurations[%zu].arguments: must be a map", i);
                        return KB_EBADCONF;
                }
                bool found = false;
                for (size_t a = 0; a < conf->nactions; a++) {
                        if (strcmp(conf->actions[a].name, name) != 0)
                                continue;
                        found = true;
                        if (args && args->type == KB_VOBJECT) {
                                kb_value_free(conf->actions[a].arguments);
                                conf->actions[a].arguments = kb_value_clone(args);
                        }
                }
                if (!found) {
                        KB_WARN("conf: configurations[%zu]: action %s is not in actions; ignored",
                                i, name);
                        skip(conf, "configuration", "%s", name);
                        continue;
                }
                const struct kb_action *action = kb_action_find(name);
                for (size_t k = 0; args && args->type == KB_VOBJECT && k < args->obj.n; k++) {
                        if (action && arg_listed(action->arguments, args->obj.m[k].key))
                                continue;
                        KB_WARN("conf: configurations[%zu].arguments.%s: not supported by "
                                "kbatch's %s; ignored",
                                i, args->obj.m[k].key, name);
                        skip(conf, "argument", "%s %s", name, args->obj.m[k].key);
                }
                char msg[300];
                if (action && action->check && args && args->type == KB_VOBJECT &&
                    action->check(args, msg, sizeof(msg))) {
                        snprintf(err, errlen, "configurations[%zu] (%s).arguments.%s", i, name,
                                 msg);
                        return KB_EBADCONF;
                }
        }
        return 0;
}

int kb_conf_parse(const char *text, size_t len, struct kb_conf *conf, char *err, size_t errlen)
{
        struct kb_value **docs = NULL;
        size_t ndocs = 0;
        char perr[256];
        int rc;

        memset(conf, 0, sizeof(*conf));
        if (kb_yaml_parse(text, len, &docs, &ndocs, perr, sizeof(perr)) != 0) {
                snprintf(err, errlen, "%s", perr);
                return KB_EBADCONF;
        }
        if (ndocs != 1 || docs[0]->type != KB_VOBJECT) {
                snprintf(err, errlen, "the conf must be one YAML map");
                rc = KB_EBADCONF;
                goto out;
        }
        const struct kb_value *root = docs[0];
        const struct kb_value *actions = kb_value_get(root, "actions");
        if (!actions) {
                snprintf(err, errlen, "actions: required");
                rc = KB_EBADCONF;
                goto out;
        }
        if ((rc = parse_actions(actions, conf, err, errlen)) != 0)
                goto out;
        const struct kb_value *tiers = kb_value_get(root, "tiers");
        if (tiers && (rc = parse_tiers(tiers, conf, err, errlen)) != 0)
                goto out;
        const struct kb_value *cfgs = kb_value_get(root, "configurations");
        if (cfgs && cfgs->type != KB_VNULL &&
            (rc = parse_configurations(cfgs, conf, err, errlen)) != 0)
                goto out;
        for (size_t i = 0; i < root->obj.n; i++) {
                const char *k = root->obj.m[i].key;
                if (strcmp(k, "actions") && strcmp(k, "tiers") && strcmp(k, "configurations")) {
                        KB_WARN("conf: %s: unknown key; ignored", k);
                        skip(conf, "key", "%s", k);
                }
        }
        static _Atomic uint64_t serials;
        conf->serial = ++serials;
        rc = 0;
out:
        kb_value_free_docs(docs, ndocs);
        if (rc)
                kb_conf_release(conf);
        return rc;
}

int kb_conf_load_file(const char *path, struct kb_conf *conf, char *err, size_t errlen)
{
        char *text;
        size_t len;
        int rc = kb_read_file(path, &text, &len);
        if (rc) {
                snprintf(err, errlen, "%s: %s", path, kb_strerror(rc));
                return KB_EBADCONF;
        }
        char inner[512];
        rc = kb_conf_parse(text, len, conf, inner, sizeof(inner));
        int line = 0, off = 0;
        /* "line 3: ..." from the YAML parser reads "conf.yaml:3: ...", as
         * manifest errors do. */
        if (rc && sscanf(inner, "line %d: %n", &line, &off) == 1 && off > 0)
                snprintf(err, errlen, "%s:%d: %s", path, line, inner + off);
        else if (rc)
                snprintf(err, errlen, "%s: %s", path, inner);
        free(text);
        return rc;
}

void kb_conf_release(struct kb_conf *conf)
{
        for (size_t i = 0; i < conf->nactions; i++) {
                free(conf->actions[i].name);
                kb_value_free(conf->actions[i].arguments);
        }
        free(conf->actions);
        for (size_t t = 0; t < conf->ntiers; t++) {
                for (size_t p = 0; p < conf->tiers[t].nplugins; p++) {
                        free(conf->tiers[t].plugins[p].name);
                        kb_value_free(conf->tiers[t].plugins[p].arguments);
                }
                free(conf->tiers[t].plugins);
        }
        free(conf->tiers);
        for (size_t i = 0; i < conf->nskipped; i++)
                free(conf->skipped[i].name);
        free(conf->skipped);
        memset(conf, 0, sizeof(*conf));
}

void kb_conf_skipped_summary(const struct kb_conf *conf, char *buf, size_t len)
{
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < conf->nskipped && off < len; i++) {
                int w = snprintf(buf + off, len - off, "%s%s %s", i ? ", " : "",
                                 conf->skipped[i].kind, conf->skipped[i].name);
                if (w < 0)
                        break;
                off += (size_t)w;
        }
}

int kb_conf_strict(const struct kb_conf *conf, char *err, size_t errlen)
{
        if (!conf->nskipped)
                return 0;
        char list[768];
        kb_conf_skipped_summary(conf, list, sizeof(list));
        snprintf(err, errlen, "conf: --strict-conf: kbatch would skip %zu item(s): %s",
                 conf->nskipped, list);
        return KB_EBADCONF;
}

bool kb_conf_has_action(const struct kb_conf *conf, const char *name)
{
        for (size_t i = 0; i < conf->nactions; i++)
                if (strcmp(conf->actions[i].name, name) == 0)
                        return true;
        return false;
}

/* ---- plugin arguments ---------------------------------------------------------- */

double kb_args_double(const struct kb_value *args, const char *key, double dflt)
{
        const char *t = kb_value_text(kb_value_get(args, key));
        char *end;
        if (!t)
                return dflt;
        errno = 0;
        double d = strtod(t, &end);
        if (end == t || *end || errno) {
                KB_WARN("conf: argument %s: \"%s\" is not a number; using %g", key, t, dflt);
                return dflt;
        }
        return d;
}

int64_t kb_args_int(const struct kb_value *args, const char *key, int64_t dflt)
{
        const struct kb_value *v = kb_value_get(args, key);
        int64_t i;
        if (!v)
                return dflt;
        if (kb_value_int(v, &i) != 0) {
                KB_WARN("conf: argument %s: not an integer; using %lld", key, (long long)dflt);
                return dflt;
        }
        return i;
}

bool kb_args_bool(const struct kb_value *args, const char *key, bool dflt)
{
        const struct kb_value *v = kb_value_get(args, key);
        const char *t = kb_value_str(v);
        if (!v)
                return dflt;
        if (v->type == KB_VBOOL)
                return v->b;
        if (t && (strcmp(t, "true") == 0 || strcmp(t, "false") == 0))
                return t[0] == 't';
        KB_WARN("conf: argument %s: not a boolean; using %s", key, dflt ? "true" : "false");
        return dflt;
}

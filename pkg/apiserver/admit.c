/*
 * Admission of a write: what every create, update, patch and apply passes
 * before the object is stored, in the real server's order:
 *   1. decoding with fieldValidation (schema.c): unknown fields fail the
 *      write (Strict), are dropped with a warning (Warn, the default), or
 *      are dropped silently (Ignore); a built-in field of the wrong type
 *      fails it (400);
 *   2. the server's rewriting (a Secret's stringData);
 *   3. validation (validate.c): 422 with a cause per field, enum
 *      violations from step 1 included.
 */
#include "apiserver/apiserver-http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

void kb__warn(struct kb_api_resp *resp, const char *text)
{
        char *w = resp->warning ? kb_xasprintf("%s\n%s", resp->warning, text) : kb_xstrdup(text);
        free(resp->warning);
        resp->warning = w;
}

/* A custom resource: apiVersion and kind at the root, metadata as every
 * object's (decoded strictly, as the real server does), the rest by the
 * CRD's structural schema. */
static void check_custom(struct kb_ctx *c, struct kb_fieldcheck *fc, struct kb_value *obj,
                         const struct kb_value *old)
{
        const struct kb_value *schema = c->rt->schema;
        const struct kb_value *props = kb_value_get(schema, "properties");
        bool open =
            kb_value_bool(kb_value_get(schema, "x-kubernetes-preserve-unknown-fields"), false);
        const struct kb_value *meta =
            kb_value_get(c->srv->defs, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        for (size_t i = 0; i < obj->obj.n;) {
                char *key = kb_xstrdup(obj->obj.m[i].key);
                struct kb_value *v = obj->obj.m[i].val;
                const struct kb_value *o = kb_value_get(old, key);
                const struct kb_value *sub = kb_value_get(props, key);
                bool drop = false;
                if (!strcmp(key, "apiVersion") || !strcmp(key, "kind")) {
                        /* checked by kb__check_kind */
                } else if (!strcmp(key, "metadata")) {
                        fc->builtin = true;
                        kb__field_check(fc, meta, v, o, key, "ObjectMeta");
                        fc->builtin = false;
                } else if (sub) {
                        kb__field_check(fc, sub, v, o, key, c->rt->kind);
                } else if (!open && !(o && kb_value_equal(o, v))) {
                        fc->nunknown++;
                        kb_buf_printf(&fc->unknown, "%sunknown field \"%s\"",
                                      fc->nunknown > 1 ? ", " : "", key);
                        if (fc->nunknown <= KB_ARRAY_SIZE(fc->paths))
                                fc->paths[fc->nunknown - 1] = kb_xstrdup(key);
                        drop = true;
                }
                if (drop)
                        kb_value_del(obj, key);
                else
                        i++;
                free(key);
        }
}

/* A pod whose kbatch.io/sim-duration the simulated kubelet cannot read
 * runs until deleted: the client is told so in a Warning header (kubectl
 * prints it), never left to wonder. */
static void sim_duration_check(struct kb_ctx *c, const struct kb_value *obj)
{
        if (c->rt->custom || !kb_streq(c->rt->kind, "Pod"))
                return;
        const char *dur =
            kb_value_str(kb_value_dig(obj, "metadata", "annotations", "kbatch.io/sim-duration"));
        int64_t ns;
        char why[160];
        if (!dur)
                return;
        int rc = kb_duration_parse(dur, &ns, why, sizeof(why));
        if (rc == 0 && ns >= 0)
                return;
        if (rc == 0)
                snprintf(why, sizeof(why), "negative duration \"%s\"", dur);
        char *w = kb_xasprintf("metadata.annotations[kbatch.io/sim-duration]: %s; the simulated "
                               "kubelet will not end this pod",
                               why);
        kb__warn(c->resp, w);
        free(w);
}

int kb__normalize(const struct kb_rtype *rt, struct kb_value *obj, char *err, size_t errlen)
{
        return rt->k && rt->k->normalize ? rt->k->normalize(obj, err, errlen) : 0;
}

bool kb__admit(struct kb_ctx *c, const char *name, struct kb_value *obj, const struct kb_value *old)
{
        const char *mode = kb__query(c->req, "fieldValidation");
        bool strict = kb_streq(mode, "Strict");
        bool warn = !mode || !mode[0] || !strcmp(mode, "Warn");
        struct kb_causes causes = {0};
        struct kb_fieldcheck fc = {.defs = c->srv->defs, .causes = &causes};
        kb_buf_init(&fc.unknown);
        bool ok = false;
        if (c->rt->custom && c->rt->schema) {
                check_custom(c, &fc, obj, old);
        } else if (!c->rt->custom && c->rt->def) {
                fc.builtin = true;
                kb__field_check(&fc, c->rt->def, obj, old, "", c->rt->kind);
        }
        const struct kb_rtype *shown = c->view ? c->view : c->rt;
        /* Repeated keys of a created or replaced object count as unknown
         * fields do: kube-apiserver's strict decoding says `duplicate field
         * "metadata.labels.a"` (JSON) or `yaml: unmarshal errors:\n  line 7:
         * key "a" already set in map` (YAML), in a 400 under Strict and a
         * Warning each under Warn. */
        const struct kb_value_dups *dups = c->judged ? &c->judged->dups : NULL;
        size_t ndups = dups ? dups->n : 0;
        if (fc.decode_err || (strict && (fc.nunknown || ndups))) {
                struct kb_buf why;
                kb_buf_init(&why);
                kb_buf_adds(&why, fc.unknown.data);
                if (ndups && c->judged->yaml)
                        kb_buf_printf(&why, "%syaml: unmarshal errors:", why.len ? ", " : "");
                for (size_t i = 0; i < ndups; i++)
                        kb_buf_printf(&why, "%s%s",
                                      c->judged->yaml ? "\n  " : (why.len ? ", " : ""), dups->v[i]);
                kb__fail(c->resp, 400, "BadRequest", NULL,
                         "%s in version \"%s\" cannot be handled as a %s: %s%s", shown->kind,
                         shown->version, shown->kind,
                         fc.decode_err ? "" : "strict decoding error: ",
                         fc.decode_err ? fc.decode_err : why.data);
                kb_buf_release(&why);
                goto out;
        }
        for (size_t i = 0; warn && i < fc.nunknown && i < KB_ARRAY_SIZE(fc.paths); i++) {
                char *w = kb_xasprintf("unknown field \"%s\"", fc.paths[i]);
                kb__warn(c->resp, w);
                free(w);
        }
        for (size_t i = 0; warn && i < ndups; i++)
                kb__warn(c->resp, dups->v[i]);
        kb__schema_defaults(c->rt, obj);
        char err[256];
        if (kb__normalize(c->rt, obj, err, sizeof(err))) {
                kb__fail(c->resp, 400, "BadRequest", NULL, "%s", err);
                goto out;
        }
        kb__validate_object(c->rt, obj, &causes);
        if (causes.n) {
                kb__invalid(c, name, &causes);
                goto out;
        }
        sim_duration_check(c, obj);
        ok = true;
out:
        kb__causes_release(&causes);
        kb__fieldcheck_release(&fc);
        return ok;
}

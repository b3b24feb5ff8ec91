/*
 * Binding a pod to a node: pods/NAME/binding (subresources.c reads the
 * body) and the create-only bindings kind, which does the same.
 */
#include "apiserver/apiserver-http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Binds pod o (c->name) as the Binding b (owned) says. */
void kb__bind(struct kb_ctx *c, struct kb_obj *o, struct kb_value *b)
{
        const char *target = kb_value_str(kb_value_dig(b, "target", "name"));
        if (!o) {
                kb__not_found(c, c->rt, c->name);
                goto out;
        }
        if (!target || !target[0]) {
                struct kb_causes causes = {0};
                kb__cause_add(&causes, "FieldValueRequired", "target.name", "Required value");
                kb__invalid(c, c->name, &causes);
                kb__causes_release(&causes);
                goto out;
        }
        const char *uid = kb_value_str(kb_value_dig(b, "metadata", "uid"));
        if (uid && uid[0] && strcmp(uid, kb__meta_str(o->doc->v, "uid"))) {
                kb__conflict(c, c->name);
                goto out;
        }
        const char *node = kb_value_str(kb_value_dig(o->doc->v, "spec", "nodeName"));
        if (node && node[0]) {
                kb__fail(c->resp, 409, "Conflict", kb__details(c->rt, c->name, NULL),
                         "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                         "assigned to node \"%s\"",
                         c->name, c->name, node);
                goto out;
        }
        if (kb_value_dig(o->doc->v, "metadata", "deletionTimestamp")) {
                kb__fail(c->resp, 409, "Conflict", kb__details(c->rt, c->name, NULL),
                         "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                         "deleted, cannot be assigned to a host",
                         c->name, c->name);
                goto out;
        }
        if (kb__fault_write(c, "binding"))
                goto out;
        struct kb_value *pod = kb_value_clone(o->doc->v);
        kb_value_set(kb_value_ensure_object(pod, "spec"), "nodeName", kb_value_new_string(target));
        struct kb_value *st = kb_value_ensure_object(pod, "status");
        struct kb_value *conds = kb_value_get(st, "conditions");
        if (!kb_value_is(conds, KB_VARRAY)) {
                conds = kb_value_new(KB_VARRAY);
                kb_value_set(st, "conditions", conds);
        }
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        struct kb_value *cd = kb_value_new(KB_VOBJECT);
        kb_value_set(cd, "type", kb_value_new_string("PodScheduled"));
        kb_value_set(cd, "status", kb_value_new_string("True"));
        kb_value_set(cd, "lastProbeTime", kb_value_new(KB_VNULL));
        kb_value_set(cd, "lastTransitionTime", kb_value_new_string(ts));
        for (size_t i = 0; i < conds->arr.n; i++) {
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), "PodScheduled")) {
                        kb_value_free(conds->arr.v[i]);
                        conds->arr.v[i] = cd;
                        cd = NULL;
                }
        }
        if (cd)
                kb_value_append(conds, cd);
        kb__store_put(c->srv, c->rt, pod);
        struct kb_value *s = kb__status_obj(201, NULL, NULL);
        kb_value_set(s, "code", kb_value_new_int(201));
        kb__reply(c->resp, 201, s);
out:
        kb_value_free(b);
}

/* POST namespaces/NS/bindings: a Binding whose name is the pod's. */
void kb__create_bindings(struct kb_ctx *c, struct kb_value *body)
{
        const char *name = kb__meta_str(body, "name");
        if (!name || !name[0]) {
                struct kb_causes causes = {0};
                kb__cause_add(&causes, "FieldValueRequired", "metadata.name",
                              "Required value: name or generateName is required");
                kb__invalid(c, "", &causes);
                kb__causes_release(&causes);
                kb_value_free(body);
                return;
        }
        c->rt = kb__type_find(c->srv, "", "v1", "pods");
        c->name = name;
        kb__bind(c, kb__obj_find(c->rt, c->ns, name), body);
}

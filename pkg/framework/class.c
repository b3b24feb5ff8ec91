/*
 * Placement classes: tasks whose placement specs are equal — requests,
 * nodeSelector, required and preferred node affinity, tolerations, images:
 * what a KB_PURE callback may read of a task — share a class, so that the node
 * selection caches (select.c) compute a class's answers once.  A class is
 * found by its canonical byte string of those fields in a kb_map; ids
 * start at 1 (0 means "not computed yet").
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

struct kb_classes {
        struct kb_map ids; /* canonical key (in the session pool) -> id */
        struct kb_buf key;
        /* The last key looked up and its id: tasks are mostly classed job
         * by job, and a job's tasks mostly share a class, so most keys are
         * the one before and need no hashing. */
        struct kb_buf last;
        uint32_t last_id;
        /* The last task classed through its key: a task whose placement
         * fields are plainly equal to its (same_placement) has its class
         * without a key (W8: a million tasks, 20 to a job). */
        const struct kb_task *last_task;
};

void kb__classes_init(struct kb_session *s)
{
        s->classes = kb_xcalloc(1, sizeof(*s->classes));
        kb_map_init(&s->classes->ids, KB_MAP_STR);
        kb_buf_init(&s->classes->key);
        kb_buf_init(&s->classes->last);
}

void kb__classes_release(struct kb_session *s)
{
        if (!s->classes)
                return;
        kb_map_release(&s->classes->ids);
        kb_buf_release(&s->classes->key);
        kb_buf_release(&s->classes->last);
        free(s->classes);
        s->classes = NULL;
}

/* kb_buf_add without the call while the buffer has room: a key is a
 * dozen small pieces, built for every task of the session (a million at
 * W8), and with n constant the copy is a move. */
static inline void put(struct kb_buf *b, const void *p, size_t n)
{
        if (b->len + n < b->cap) {
                memcpy(b->data + b->len, p, n);
                b->len += n;
                b->data[b->len] = '\0';
        } else {
                kb_buf_add(b, p, n);
        }
}

static void key_str(struct kb_buf *b, const char *s)
{
        size_t n = s ? strlen(s) : 0;
        uint32_t len = s ? (uint32_t)n : UINT32_MAX;
        put(b, &len, sizeof(len));
        if (s)
                put(b, s, n);
}

static void key_term(struct kb_buf *b, const struct kb_node_term *t)
{
        const struct kb_selector_req *lists[2] = {t->exprs, t->fields};
        size_t counts[2] = {t->nexprs, t->nfields};
        for (int l = 0; l < 2; l++) {
                put(b, &counts[l], sizeof(counts[l]));
                for (size_t i = 0; i < counts[l]; i++) {
                        const struct kb_selector_req *r = &lists[l][i];
                        key_str(b, r->key);
                        put(b, &r->op, sizeof(r->op));
                        put(b, &r->nvalues, sizeof(r->nvalues));
                        for (size_t v = 0; v < r->nvalues; v++)
                                key_str(b, r->values[v]);
                }
        }
}

/* The canonical bytes of everything a pure callback may read of a task. */
static void placement_key(struct kb_buf *b, const struct kb_task *t)
{
        const struct kb_pod *p = t->pod;
        kb_buf_reset(b);
        /* The requests as (slot, quantity) pairs of the slots asked for:
         * equal exactly when the requests are, in a fraction of the 16
         * slots' bytes. */
        for (int i = 0; i < KB_RES_MAX; i++)
                if (t->resreq->q[i]) {
                        int32_t slot = i;
                        put(b, &slot, sizeof(slot));
                        put(b, &t->resreq->q[i], sizeof(t->resreq->q[i]));
                }
        int32_t end = -1;
        put(b, &end, sizeof(end));
        put(b, &p->nnode_selector, sizeof(p->nnode_selector));
        for (size_t i = 0; i < p->nnode_selector; i++) {
                key_str(b, p->node_selector[i].key);
                key_str(b, p->node_selector[i].value);
        }
        put(b, &p->nrequired, sizeof(p->nrequired));
        for (size_t i = 0; i < p->nrequired; i++)
                key_term(b, &p->required[i]);
        put(b, &p->npreferred, sizeof(p->npreferred));
        for (size_t i = 0; i < p->npreferred; i++) {
                put(b, &p->preferred[i].weight, sizeof(int32_t));
                key_term(b, &p->preferred[i].term);
        }
        put(b, &p->ntolerations, sizeof(p->ntolerations));
        for (size_t i = 0; i < p->ntolerations; i++) {
                const struct kb_toleration *tol = &p->tolerations[i];
                key_str(b, tol->key);
                key_str(b, tol->value);
                key_str(b, tol->effect);
                put(b, &tol->op, sizeof(tol->op));
        }
        /* Last and only when there are any, so that the keys of pods
         * without images (and their cost) stay as they were. */
        if (p->nimages)
                put(b, &p->nimages, sizeof(p->nimages));
        for (size_t i = 0; i < p->nimages; i++)
                key_str(b, p->images[i]);
}

static bool same_str(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * Whether a's and b's placement keys are equal, told from the fields
 * themselves: equal requests, and node selectors, tolerations and images
 * equal one by one.  Node affinity terms are not compared here: a pod with
 * any answers false, and its key decides.  False never wrongly merges
 * classes; it only costs a key.
 */
static bool same_placement(const struct kb_task *a, const struct kb_task *b)
{
        const struct kb_pod *p = a->pod, *q = b->pod;
        /* Only interned resources can be asked for (model.c's account). */
        for (int i = 0, n = kb_res_count(); i < n; i++)
                if (a->resreq->q[i] != b->resreq->q[i])
                        return false;
        if (p->nrequired || q->nrequired || p->npreferred || q->npreferred ||
            p->nnode_selector != q->nnode_selector || p->ntolerations != q->ntolerations ||
            p->nimages != q->nimages)
                return false;
        for (size_t i = 0; i < p->nnode_selector; i++)
                if (!same_str(p->node_selector[i].key, q->node_selector[i].key) ||
                    !same_str(p->node_selector[i].value, q->node_selector[i].value))
                        return false;
        for (size_t i = 0; i < p->ntolerations; i++) {
                const struct kb_toleration *x = &p->tolerations[i], *y = &q->tolerations[i];
                if (x->op != y->op || !same_str(x->key, y->key) || !same_str(x->value, y->value) ||
                    !same_str(x->effect, y->effect))
                        return false;
        }
        for (size_t i = 0; i < p->nimages; i++)
                if (!same_str(p->images[i], q->images[i]))
                        return false;
        return true;
}

uint32_t kb__class_of(struct kb_session *s, struct kb_task *t)
{
        struct kb_classes *cl = s->classes;
        if (t->eclass)
                return t->eclass;
        kb__touch(s, t);
        if (cl->last_task && same_placement(t, cl->last_task))
                return t->eclass = cl->last_id;
        placement_key(&cl->key, t);
        if (cl->last_id && cl->last.len == cl->key.len &&
            memcmp(cl->last.data, cl->key.data, cl->key.len) == 0)
                return t->eclass = cl->last_id;
        uint64_t *id = kb_map_get_str(&cl->ids, cl->key.data, cl->key.len);
        if (!id) {
                unsigned char *key = kb_pool_alloc(&s->pool, cl->key.len);
                memcpy(key, cl->key.data, cl->key.len);
                id = kb_map_put_str(&cl->ids, key, cl->key.len, NULL);
                *id = kb_map_count(&cl->ids);
        }
        t->eclass = (uint32_t)*id;
        kb_buf_reset(&cl->last);
        kb_buf_add(&cl->last, cl->key.data, cl->key.len);
        cl->last_id = t->eclass;
        cl->last_task = t;
        return t->eclass;
}

uint32_t kb_task_class(struct kb_session *s, struct kb_task *t)
{
        return kb__class_of(s, t);
}

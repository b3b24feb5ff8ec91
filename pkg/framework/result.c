/*
 * The session's result: binds and evictions as committed statements produce
 * them (the statuses are filled by close.c), its release, and its lists
 * shared between a kept model and the sessions that repeat it (repeat.c):
 * counted references, the last one frees (the daemon releases a result on
 * its loop thread while the next session runs on a worker).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

void kb__result_add_bind(struct kb_session *s, const struct kb_task *t)
{
        struct kb_result *r = s->result;
        struct kb_bind b = {t->pod, s->nodes[t->node].name};
        KB_PUSH(r->binds, r->nbinds, r->capbinds, b);
}

void kb__result_add_eviction(struct kb_session *s, const struct kb_task *t, const char *action,
                             const char *reason, const char *group)
{
        struct kb_result *r = s->result;
        struct kb_eviction e = {t->pod, kb_pool_strdup(&r->pool, action),
                                kb_pool_strdup(&r->pool, reason ? reason : ""),
                                group ? kb_pool_strdup(&r->pool, group) : NULL};
        KB_PUSH(r->evictions, r->nevictions, r->capevictions, e);
}

void kb__result_add_warning(struct kb_session *s, const struct kb_warning *w)
{
        struct kb_result *r = s->result;
        KB_PUSH(r->warnings, r->nwarnings, r->capwarnings, *w);
}

void kb_job_warn(struct kb_session *s, const struct kb_job *j, const char *reason, const char *msg)
{
        struct kb_result *r = s->result;
        struct kb_warning w = {
            j->pg,
            j->pg || !j->ntasks ? NULL : j->tasks[0]->pod,
            kb_pool_printf(&r->pool, "%s %s", j->pg ? "podgroup" : "pod", j->name),
            kb_pool_strdup(&r->pool, msg),
            NULL,
            reason};
        kb__result_add_warning(s, &w);
}

void kb_session_note_backfilled(struct kb_session *s, uint32_t n)
{
        s->result->backfilled += n;
}

/* ---- results shared with a kept model ---------------------------------------------- */

struct kb__result_hold {
        _Atomic int refs;
        struct kb_result r; /* the lists, strings and pool, as the session made them */
};

struct kb__result_hold *kb__result_hold(struct kb_result *r)
{
        struct kb__result_hold *h = kb_xcalloc(1, sizeof(*h));
        h->r = *r;
        atomic_init(&h->refs, 2);
        r->hold = h;
        return h;
}

void kb__result_from_hold(struct kb_result *r, struct kb__result_hold *h)
{
        atomic_fetch_add(&h->refs, 1);
        *r = h->r;
        r->hold = h;
        r->action_times = NULL;
        r->naction_times = 0;
        r->plugin_times = NULL;
        r->nplugin_times = 0;
}

void kb__result_unhold(struct kb__result_hold *h)
{
        if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
                return;
        kb_result_release(&h->r);
        free(h);
}

void kb_result_release(struct kb_result *r)
{
        if (r->hold) {
                kb__result_unhold(r->hold);
                memset(r, 0, sizeof(*r));
                return;
        }
        free(r->binds);
        free(r->evictions);
        free(r->warnings);
        kb_pool_release(&r->pool);
        memset(r, 0, sizeof(*r));
}

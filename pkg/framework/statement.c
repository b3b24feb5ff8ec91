/*
 * Statements: undoable operations on session state (Volcano's
 * framework/statement.go).  Each operation changes the task's status, the
 * node's accounting and task list and the job's counters at once (through
 * model.c), and tells the plugins' event handlers so their shares stay
 * current; discard replays the undo of
 * each operation in reverse order; commit turns allocations into binds and
 * evictions into evictions in the session result.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

enum op_kind { OP_ALLOCATE, OP_PIPELINE, OP_EVICT };

struct op {
        enum op_kind kind;
        struct kb_task *task;
        enum kb_task_status prev_status;
        const char *action, *reason;
        const char *group; /* OP_EVICT: the PodGroup the room is for, or NULL */
};

struct kb_statement {
        struct kb_session *s;
        struct kb_statement *next;
        struct op *ops;
        size_t nops, cap;
};

struct kb_statement *kb_statement_new(struct kb_session *s)
{
        struct kb_statement *st = kb_pool_alloc(&s->pool, sizeof(*st));
        st->s = s;
        st->next = s->statements;
        s->statements = st;
        return st;
}

static void place(struct kb_statement *st, struct kb_task *t, struct kb_node_info *n,
                  enum kb_task_status status, enum op_kind kind)
{
        struct kb_session *s = st->s;
        struct op op = {kind, t, t->status, NULL, NULL, NULL};
        kb__task_move(s, t, status);
        kb__node_attach(s, n, t);
        kb_event(s, t, true);
        KB_PUSH(st->ops, st->nops, st->cap, op);
}

void kb_statement_allocate(struct kb_statement *st, struct kb_task *t, struct kb_node_info *n)
{
        place(st, t, n, KB_TASK_ALLOCATED, OP_ALLOCATE);
}

void kb_statement_pipeline(struct kb_statement *st, struct kb_task *t, struct kb_node_info *n)
{
        place(st, t, n, KB_TASK_PIPELINED, OP_PIPELINE);
}

void kb_statement_evict(struct kb_statement *st, struct kb_task *t, const char *action,
                        const char *reason, const struct kb_job *for_job)
{
        struct op op = {OP_EVICT, t,      t->status,
                        action,   reason, for_job && for_job->pg ? for_job->name : NULL};
        kb__task_move(st->s, t, KB_TASK_RELEASING);
        kb_event(st->s, t, false);
        KB_PUSH(st->ops, st->nops, st->cap, op);
}

static void undo(struct kb_session *s, const struct op *op)
{
        struct kb_task *t = op->task;
        switch (op->kind) {
        case OP_ALLOCATE:
        case OP_PIPELINE:
                /* Handlers are told while the task is still on its node
                 * (Volcano's Deallocate event carries the node), so that
                 * counts per node and domain can be taken back. */
                kb_event(s, t, false);
                kb__node_detach(s, t);
                kb__task_move(s, t, op->prev_status);
                break;
        case OP_EVICT:
                kb__task_move(s, t, op->prev_status);
                kb_event(s, t, true);
                break;
        }
}

void kb_statement_discard(struct kb_statement *st)
{
        for (size_t i = st->nops; i-- > 0;)
                undo(st->s, &st->ops[i]);
        free(st->ops);
        st->ops = NULL;
        st->nops = st->cap = 0;
}

size_t kb_statement_mark(const struct kb_statement *st)
{
        return st->nops;
}

void kb_statement_rollback(struct kb_statement *st, size_t mark)
{
        while (st->nops > mark)
                undo(st->s, &st->ops[--st->nops]);
}

/* Allocated tasks become Binding and leave as binds; pipelined ones stay in
 * the session (they wait for resources being released); evictions leave. */
void kb_statement_commit(struct kb_statement *st)
{
        struct kb_session *s = st->s;
        for (size_t i = 0; i < st->nops; i++) {
                struct op *op = &st->ops[i];
                struct kb_task *t = op->task;
                switch (op->kind) {
                case OP_ALLOCATE:
                        kb__task_move(s, t, KB_TASK_BINDING);
                        kb__result_add_bind(s, t);
                        break;
                case OP_PIPELINE:
                        break;
                case OP_EVICT:
                        kb__result_add_eviction(s, t, op->action, op->reason, op->group);
                        break;
                }
        }
        free(st->ops);
        st->ops = NULL;
        st->nops = st->cap = 0;
}

void kb__statements_release(struct kb_session *s)
{
        for (struct kb_statement *st = s->statements; st; st = st->next)
                free(st->ops);
        s->statements = NULL;
}

/*
 * What may be written of the recorder's Events, and when (events.c keeps
 * the records and writes them; this file only says yes or not yet).
 *
 * Every write of an object's Events takes a token from that object's
 * bucket, as client-go's EventSourceObjectSpamFilter (tools/record,
 * events_cache.go): a burst of EVENT_SPAM_BURST (25) per source and
 * involved object (kind, namespace, name, uid, apiVersion; all reasons
 * together), refilled at one per 5 minutes, the buckets kept for the
 * EVENT_SPAM_OBJECTS most recently used objects.  client-go drops an
 * occurrence its filter refuses, after counting it; kbatch keeps what it
 * could not write in the record and writes it when a token comes, so the
 * message that stands reaches the server (late) rather than never.
 *
 * Every write also takes a token from the recorder's own bucket
 * (EVENT_QPS, EVENT_BURST), after the object's: an object whose bucket is
 * empty costs the others nothing.
 *
 * For example, an object with 25 writes in its first minute gets no 26th
 * until 5 minutes have refilled one token; meanwhile its record keeps
 * counting, and the write that then goes carries the count and message of
 * that moment.
 */
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler-int.h"

/* As client-go's event cache. */
#define EVENT_QPS   100.0
#define EVENT_BURST 200.0
/* client-go's spam filter (tools/record/events_cache.go): defaultSpamBurst,
 * defaultSpamQPS, and its LRU of maxLruCacheEntries objects. */
#define EVENT_SPAM_BURST   25.0
#define EVENT_SPAM_QPS     (1.0 / 300.0)
#define EVENT_SPAM_OBJECTS 4096

/* An object's token bucket in the spam filter. */
struct spam {
        struct spam *prev, *next; /* most recently used first */
        double tokens, refilled;
        char key[];
};

struct kb__event_filter {
        double tokens, refilled; /* the recorder's own bucket */
        struct kb_map spam;      /* object -> struct spam * */
        struct spam *spam_head, *spam_tail;
};

struct kb__event_filter *kb__event_filter_new(double now)
{
        struct kb__event_filter *f = kb_xcalloc(1, sizeof(*f));
        f->tokens = EVENT_BURST;
        f->refilled = now;
        kb_map_init(&f->spam, KB_MAP_STR);
        return f;
}

/* ---- the recorder's bucket ------------------------------------------------------------ */

void kb__event_filter_refill(struct kb__event_filter *f)
{
        double now = kb_now_mono();
        f->tokens = KB_MIN(EVENT_BURST, f->tokens + (now - f->refilled) * EVENT_QPS);
        f->refilled = now;
}

bool kb__event_filter_ready(const struct kb__event_filter *f)
{
        return f->tokens >= 1;
}

static bool take_token(struct kb__event_filter *f)
{
        kb__event_filter_refill(f);
        if (f->tokens < 1)
                return false;
        f->tokens -= 1;
        return true;
}

/* ---- the objects' buckets ------------------------------------------------------------ */

static void spam_unlink(struct kb__event_filter *f, struct spam *sp)
{
        if (sp->prev)
                sp->prev->next = sp->next;
        else
                f->spam_head = sp->next;
        if (sp->next)
                sp->next->prev = sp->prev;
        else
                f->spam_tail = sp->prev;
        sp->prev = sp->next = NULL;
}

static void spam_front(struct kb__event_filter *f, struct spam *sp)
{
        sp->prev = NULL;
        sp->next = f->spam_head;
        if (f->spam_head)
                f->spam_head->prev = sp;
        f->spam_head = sp;
        if (!f->spam_tail)
                f->spam_tail = sp;
}

/* The bucket of object, made full when there is none (the least recently
 * used one gives way past EVENT_SPAM_OBJECTS, as client-go's LRU). */
static struct spam *spam_get(struct kb__event_filter *f, const char *object, double now)
{
        size_t len = strlen(object);
        uint64_t *found = kb_map_get_str(&f->spam, object, len);
        struct spam *sp = found ? (struct spam *)(uintptr_t)*found : NULL;
        if (sp) {
                spam_unlink(f, sp);
                spam_front(f, sp);
                return sp;
        }
        if (kb_map_count(&f->spam) >= EVENT_SPAM_OBJECTS) {
                struct spam *old = f->spam_tail;
                spam_unlink(f, old);
                kb_map_del_str(&f->spam, old->key, strlen(old->key));
                free(old);
        }
        sp = kb_xcalloc(1, sizeof(*sp) + len + 1);
        memcpy(sp->key, object, len + 1);
        sp->tokens = EVENT_SPAM_BURST;
        sp->refilled = now;
        *kb_map_put_str(&f->spam, sp->key, len, NULL) = (uintptr_t)sp;
        spam_front(f, sp);
        return sp;
}

static void spam_refill(struct spam *sp, double now)
{
        sp->tokens = KB_MIN(EVENT_SPAM_BURST, sp->tokens + (now - sp->refilled) * EVENT_SPAM_QPS);
        sp->refilled = now;
}

bool kb__event_filter_admit(struct kb__event_filter *f, const char *object, double now)
{
        struct spam *sp = spam_get(f, object, now);
        spam_refill(sp, now);
        if (sp->tokens < 1 || !take_token(f))
                return false;
        sp->tokens -= 1;
        return true;
}

void kb__event_filter_free(struct kb__event_filter *f)
{
        if (!f)
                return;
        /* Every bucket is on the list. */
        for (struct spam *sp = f->spam_head, *next; sp; sp = next) {
                next = sp->next;
                free(sp);
        }
        kb_map_release(&f->spam);
        free(f);
}

/*
 * The session's clock for the files below session.c (part of
 * framework-int.h, which includes it after struct kb_session): inline, so
 * that they need not call up into session.c, whose kb_session_now and
 * kb_session_clock_until are the same (repeat.c says why the clock is
 * read through these).
 */
#ifndef KB_PKG_FRAMEWORK_CLOCK_H
#define KB_PKG_FRAMEWORK_CLOCK_H

/* kb_session_clock_until and kb_session_now for the files below session.c
 * (repeat.c): a turning point t, taken a millisecond early for rounding. */
static inline void kb__clock_until(struct kb_session *s, double t)
{
        double u = t - 1e-3 > s->snap->now ? t - 1e-3 : s->snap->now;
        s->clock_until = u < s->clock_until ? u : s->clock_until;
}
static inline double kb__now(struct kb_session *s)
{
        return s->clock_until = s->snap->now;
}

#endif /* KB_PKG_FRAMEWORK_CLOCK_H */

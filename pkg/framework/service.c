/*
 * Session services (framework.h): state several plugins share, made on
 * first use while the plugins open.  A session has a handful at most, so
 * they are found by a walk over the list.
 */
#include <stdlib.h>

#include "framework/framework-int.h"

struct kb__service {
        const struct kb_service *svc;
        void *state;
        /* The plugin that made it, for ready's registrations. */
        const struct kb_plugin_conf *plugin;
        int tier;
};

void *kb_session_service(struct kb_session *s, const struct kb_service *svc)
{
        for (size_t i = 0; i < s->nservices; i++)
                if (s->services[i].svc == svc)
                        return s->services[i].state;
        struct kb__service e = {svc, NULL, s->cur_plugin, s->cur_tier};
        e.state = svc->create(s);
        KB_PUSH(s->services, s->nservices, s->capservices, e);
        return e.state;
}

void kb__services_ready(struct kb_session *s)
{
        for (size_t i = 0; i < s->nservices; i++) {
                const struct kb__service *e = &s->services[i];
                if (!e->svc->ready)
                        continue;
                kb__points_begin(s, e->tier, e->plugin);
                e->svc->ready(e->state);
        }
        kb__points_begin(s, 0, NULL);
}

void kb__services_release(struct kb_session *s)
{
        for (size_t i = s->nservices; i-- > 0;)
                if (s->services[i].svc->free)
                        s->services[i].svc->free(s->services[i].state);
        free(s->services);
        s->services = NULL;
        s->nservices = s->capservices = 0;
}

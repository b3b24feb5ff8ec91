/*
 * The registry of actions and plugins.  Adding one is one file in actions/
 * or plugins/ defining kb_action_<name> or kb_plugin_<name>, and one line in
 * the lists below.
 */
#include <string.h>

#include "framework/framework.h"

#define KB_ACTION_LIST(XX)                                                                         \
        XX(enqueue)                                                                                \
        XX(allocate) XX(preempt) XX(reclaim) XX(backfill) XX(gangpreempt) XX(gangreclaim)

#define KB_PLUGIN_LIST(XX)                                                                         \
        XX(priority)                                                                               \
        XX(gang)                                                                                   \
        XX(conformance)                                                                            \
        XX(overcommit)                                                                             \
        XX(drf)                                                                                    \
        XX(proportion)                                                                             \
        XX(capacity)                                                                               \
        XX(sla)                                                                                    \
        XX(predicates)                                                                             \
        XX(nodeorder)                                                                              \
        XX(binpack)                                                                                \
        XX(reservation)                                                                            \
        XX(network_topology_aware)

#define XX(name) extern const struct kb_action kb_action_##name;
KB_ACTION_LIST(XX)
#undef XX
#define XX(name) extern const struct kb_plugin kb_plugin_##name;
KB_PLUGIN_LIST(XX)
#undef XX

static const struct kb_action *const actions[] = {
#define XX(name) &kb_action_##name,
    KB_ACTION_LIST(XX)
#undef XX
};

static const struct kb_plugin *const plugins[] = {
#define XX(name) &kb_plugin_##name,
    KB_PLUGIN_LIST(XX)
#undef XX
};

const struct kb_action *kb_action_find(const char *name)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(actions); i++)
                if (strcmp(actions[i]->name, name) == 0)
                        return actions[i];
        return NULL;
}

const struct kb_plugin *kb_plugin_find(const char *name)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(plugins); i++)
                if (strcmp(plugins[i]->name, name) == 0)
                        return plugins[i];
        return NULL;
}

/*
 * The session's network topology: domains, their room, node selection
 * within one (part of framework.h, which includes it; not included on its
 * own).
 */
#ifndef KB_PKG_FRAMEWORK_TOPOLOGY_H
#define KB_PKG_FRAMEWORK_TOPOLOGY_H

/* ---- network topology ---------------------------------------------------- */

/*
 * The session's network topology: a forest of domains, built when the
 * session opens from the snapshot's HyperNodes, or from node labels when
 * the network-topology-aware plugin names a label per tier (then
 * HyperNode objects are left aside, with a warning).  Tier 1 is the
 * closest to the nodes.  A node belongs to at most one lowest domain and
 * a domain to at most one parent; what contradicts that, and members that
 * do not exist or form a cycle, are dropped with a warning naming the
 * HyperNode and the field.
 *
 * Nodes are laid out in a topology order in which each domain's nodes are
 * the positions [lo, hi) (select.c queries a domain as that range).
 * Without a topology there are no domains.
 */
struct kb_domain {
        const char *name;      /* the HyperNode's, or the label value (parent/value if ambiguous) */
        const char *tier_name; /* spec.tierName, or the tier's label key; NULL when none */
        int32_t tier;
        uint32_t index;
        int32_t parent; /* domain index, -1 for a root */
        uint32_t lo, hi;
        const struct kb_hypernode *hypernode; /* NULL for a label-derived domain */
};

/* What a domain's nodes add up to, kept current as tasks are placed. */
struct kb_domain_room {
        struct kb_res allocatable;
        struct kb_res idle;
        struct kb_res future_idle; /* idle + releasing - pipelined */
        struct kb_res used;        /* used, counting pipelined tasks */
};

/* The network-topology-aware plugin's conf: node label keys, tier 1
 * first (none: HyperNode objects define the topology), and the weights of
 * the domain binpack score (Volcano's hypernode.binpack.*; cpu and memory
 * weigh 1 when the plugin is absent).  Call from the plugin's open; the
 * session copies what it keeps. */
struct kb_topology_conf {
        const char *const *labels;
        size_t nlabels;
        bool weighted[KB_RES_MAX]; /* the slot counts in the domain score */
        int64_t weight[KB_RES_MAX];
};
void kb_topology_configure(struct kb_session *s, const struct kb_topology_conf *conf);
/* The conf in use (never NULL; labels are the session's copies). */
const struct kb_topology_conf *kb_topology_config(struct kb_session *s);

const struct kb_domain *kb_session_topology_domains(struct kb_session *s, size_t *n);
/* Whether node n is one of d's nodes. */
bool kb_domain_has(struct kb_session *s, const struct kb_domain *d, const struct kb_node_info *n);
/* d's room now (valid until the next statement operation). */
const struct kb_domain_room *kb_domain_room(struct kb_session *s, const struct kb_domain *d);
/* The lowest domain holding every task of j on a node (allocated,
 * pipelined, binding, bound or running); NULL when j has none there, or
 * when they are not all within one domain (*split set then, may be NULL). */
const struct kb_domain *kb_job_domain(struct kb_session *s, const struct kb_job *j, bool *split);
/* The same for tasks[0..n) (a sub-group's tasks, say). */
const struct kb_domain *kb_tasks_domain(struct kb_session *s, struct kb_task *const *tasks,
                                        size_t n, bool *split);

/* The limit pg's topology puts on its domain, as words after "domain":
 * " of tier <= 1", " at or below a domain of tierName rack", or "". */
void kb_topology_bound_text(const struct kb_podgroup *pg, char *buf, size_t n);

/* Whether j's PodGroup asks for a network topology (spec.networkTopology). */
static inline bool kb_job_has_topology(const struct kb_job *j)
{
        return j->pg && j->pg->topology_mode != KB_TOPOLOGY_NONE;
}

/* kb_select_node among d's nodes only: the same rule (fit idle, then
 * future idle; then score; then name), the nominated node first when it is
 * one of them.  NULL when no node of d fits; no reasons are counted. */
struct kb_node_info *kb_select_node_in(struct kb_session *s, struct kb_task *t,
                                       const struct kb_domain *d);

/* The node for t nearest tasks[0..ntasks) placed on nodes (a sub-group's
 * tasks), within jd (NULL: every node): the lowest domains holding them,
 * most first, when several; their common domain and each above it below
 * the top tier; then all of jd.  A node that fits t's idle room before one
 * that fits only future idle room.  Without such tasks, kb_select_node_in
 * jd (or kb_select_node, which sets *why). */
struct kb_node_info *kb_select_node_near(struct kb_session *s, struct kb_task *t,
                                         struct kb_task *const *tasks, size_t ntasks,
                                         const struct kb_domain *jd, const char **why);

/* ---- sub-groups (subgroups.c) ------------------------------------------------ */

/* The policy of j's PodGroup pg that task t joins (its index;
 * pg->nsubgroups for the default sub-group) and, in id, "/<policy>-<match
 * values joined by ->" ("" for the default); *match_index is the first
 * match value read as a number (0 when it is none). */
size_t kb_subgroup_of(const struct kb_podgroup *pg, const struct kb_task *t, char *id, size_t n,
                      long *match_index);
/* j's tasks by sub-group: group[i] for j->tasks[i]; per group, its policy
 * (pg->nsubgroups: the default) and the tasks it needs (subGroupSize). */
struct kb_subgroup_layout {
        uint32_t ngroups;
        uint32_t *group;
        size_t *policy;
        int32_t *min;
};
/* Built in pool, O(tasks x groups); j's tasks must not change after. */
struct kb_subgroup_layout *kb_subgroup_layout(struct kb_pool *pool, const struct kb_job *j);
enum kb_subgroup_count { KB_SUBGROUPS_VALID, KB_SUBGROUPS_READY, KB_SUBGROUPS_PIPELINED };
/* The index of the first policy with fewer than minSubGroups sub-groups
 * there (VALID), ready or pipelined, with how many it has in *have (may be
 * NULL); -1 when every policy is met (or j has none).  O(tasks + policies
 * x groups). */
long kb_subgroups_unmet(const struct kb_job *j, const struct kb_subgroup_layout *l,
                        enum kb_subgroup_count which, int32_t *have);

#endif /* KB_PKG_FRAMEWORK_TOPOLOGY_H */

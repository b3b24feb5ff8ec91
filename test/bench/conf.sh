# Sourced by the benchmarks: conf ACTIONS prints kbatch's built-in conf
# (pkg/framework/conf.c's kb_default_conf_yaml, Volcano's default tiers)
# with ACTIONS as its actions ("enqueue, allocate, backfill" when none),
# so that every workload's conf differs from the default only where it
# says so (a plugin appended to the last tier, other actions).
conf() {
  printf 'actions: "%s"\n' "${1:-enqueue, allocate, backfill}"
  cat <<'CONF'
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
CONF
}

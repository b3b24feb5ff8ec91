# A gang left partly bound (here 5 of 8 pods bound through the binding
# subresource, as a crash mid-dispatch or failed binds leave one) completes
# before another gang takes the room it needs: 2 nodes of 8 cpu, gang a
# (minMember 8) holds 5, gang b (minMember 11) waits whole; 11 cpu are free,
# enough for a's 3 or b's 11, not both.  a must complete and b wait.  Before
# the fix, drf put b (share 0) first and a stayed "3/8 unschedulable" forever.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"

gang a 8 1
for i in 1 2 3 4 5; do
        node=node-1
        [ "$i" = 5 ] && node=node-2
        code=$(api POST "/api/v1/namespaces/default/pods/a-$i/binding" \
                "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"a-$i\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$node\"}}")
        [ "$code" = 201 ] || fail "bind a-$i by hand: HTTP $code $(cat "$T/body")"
done
gang b 11 1
wait_for "5 of a's pods run before the scheduler starts" 10 sh -c \
        "$K get pods -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}' | grep -c '^a-. Running' | grep -qx 5"

start_sched s
a_bound() {
        [ "$($K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep '^a-' | grep -vc '=$')" = 8 ]
}
wait_for "the partly bound gang a completes (8 of 8 bound)" 20 a_bound
wait_for "podgroup a Running" 10 sh -c "$K get pg a -o jsonpath='{.status.phase}' | grep -qx Running"
sleep 1
expect_eq "gang b waits whole (none of its 11 bound)" \
        "$($K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep '^b-' | grep -vc '=$')" 0
wait_for "b says why" 10 sh -c \
        "$K get pg b -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'Insufficient cpu'"
check_no_overcommit
stop_sched s
finish

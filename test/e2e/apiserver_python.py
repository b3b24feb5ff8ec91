"""kbatch-apiserver driven by the official Python client (Debian's
python3-kubernetes), the second real client in make test after kubectl.

Usage: apiserver_python.py KUBECONFIG REPO_ROOT
The server runs with --history 40 and --bookmark-interval 0.5 (see
apiserver_python.sh).  Prints one line per check and, last,
"python: N passed, M failed".
"""
import json
import sys
import threading
import time

import yaml
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

KUBECONFIG, ROOT = sys.argv[1], sys.argv[2]
config.load_kube_config(config_file=KUBECONFIG)
core = client.CoreV1Api()
batch = client.BatchV1Api()
coord = client.CoordinationV1Api()
events = client.EventsV1Api()
custom = client.CustomObjectsApi()
ext = client.ApiextensionsV1Api()

passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok: " + what)
    else:
        failed += 1
        print("FAIL: %s %s" % (what, detail))


def expect_status(what, status, fn, *args, **kwargs):
    """fn must raise ApiException with this HTTP status."""
    try:
        fn(*args, **kwargs)
    except ApiException as e:
        check(what, e.status == status, "got %s: %s" % (e.status, e.reason))
        return e
    check(what, False, "no error")
    return None


def pod(name, **spec):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": "py"}),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="c", image="busybox:1.36")], **spec))


def wait_until(what, secs, fn):
    end = time.time() + secs
    while time.time() < end:
        try:
            if fn():
                check(what, True)
                return True
        except ApiException:
            pass
        time.sleep(0.1)
    check(what, False, "(waited %ss)" % secs)
    return False


# ---- pods: CRUD, conflicts, patches -------------------------------------------
p = core.create_namespaced_pod("default", pod("p1"))
check("create pod", p.metadata.uid and p.status.phase == "Pending")
got = core.read_namespaced_pod("p1", "default")
check("read pod", got.spec.containers[0].image == "busybox:1.36")
stale = got.metadata.resource_version
got.metadata.labels["tier"] = "a"
upd = core.replace_namespaced_pod("p1", "default", got)
check("replace pod", upd.metadata.labels == {"app": "py", "tier": "a"}
      and upd.metadata.resource_version != stale)
got.metadata.resource_version = stale
expect_status("replace with a stale resourceVersion: 409", 409,
              core.replace_namespaced_pod, "p1", "default", got)
# A dict body goes as a strategic merge patch: containers merge by name.
pp = core.patch_namespaced_pod("p1", "default", {
    "metadata": {"labels": {"patched": "yes"}},
    "spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}})
check("strategic merge patch", pp.metadata.labels["patched"] == "yes"
      and pp.spec.containers[0].image == "busybox:1.37"
      and len(pp.spec.containers) == 1)
# A list body goes as a JSON patch.
jp = core.patch_namespaced_pod("p1", "default", [
    {"op": "replace", "path": "/metadata/labels/tier", "value": "b"},
    {"op": "remove", "path": "/metadata/labels/patched"}])
check("json patch", jp.metadata.labels == {"app": "py", "tier": "b"})
expect_status("json patch test failing: 422", 422, core.patch_namespaced_pod, "p1",
              "default", [{"op": "test", "path": "/metadata/labels/tier", "value": "zz"}])
expect_status("create twice: 409", 409, core.create_namespaced_pod, "default", pod("p1"))
expect_status("read a missing pod: 404", 404, core.read_namespaced_pod, "nope", "default")
e = expect_status("invalid pod: 422", 422, core.create_namespaced_pod, "default",
                  client.V1Pod(metadata=client.V1ObjectMeta(name="Bad_Name"),
                               spec=client.V1PodSpec(containers=[])))
check("invalid pod names the fields", e is not None and "metadata.name" in e.body
      and "spec.containers" in e.body)

# ---- list and watch -----------------------------------------------------------
for i in range(2, 6):
    core.create_namespaced_pod("default", pod("p%d" % i))
page = core.list_namespaced_pod("default", limit=2)
check("list page of 2", len(page.items) == 2 and page.metadata._continue)
rest = core.list_namespaced_pod("default", limit=10, _continue=page.metadata._continue)
names = [x.metadata.name for x in page.items + rest.items]
check("pages cover the list in order", names == ["p1", "p2", "p3", "p4", "p5"], names)
sel = core.list_namespaced_pod("default", label_selector="app=py",
                               field_selector="metadata.name=p3")
check("selectors", [x.metadata.name for x in sel.items] == ["p3"])

w = watch.Watch()
seen = [(ev["type"], ev["object"].metadata.name)
        for ev in w.stream(core.list_namespaced_pod, "default", timeout_seconds=1)]
check("watch with a timeout: initial ADDED events",
      sorted(seen) == [("ADDED", "p%d" % i) for i in range(1, 6)], seen)

rv = core.list_namespaced_pod("default").metadata.resource_version
core.delete_namespaced_pod("p5", "default")
core.patch_namespaced_pod("p4", "default", {"metadata": {"labels": {"n": "1"}}})
seen = [(ev["type"], ev["object"].metadata.name)
        for ev in watch.Watch().stream(core.list_namespaced_pod, "default",
                                       resource_version=rv, timeout_seconds=1)]
check("watch from a resourceVersion: only what changed since",
      seen == [("DELETED", "p5"), ("MODIFIED", "p4")], seen)

# Without a timeout the stream stays open until the client stops it.
got_event = []


def later():
    time.sleep(0.5)
    core.create_namespaced_pod("default", pod("late"))


w = watch.Watch()
threading.Thread(target=later).start()
start = time.time()
for ev in w.stream(core.list_namespaced_pod, "default",
                   resource_version=core.list_namespaced_pod("default")
                   .metadata.resource_version):
    got_event.append((ev["type"], ev["object"].metadata.name))
    w.stop()
check("watch without a timeout delivers events as they happen",
      got_event == [("ADDED", "late")] and time.time() - start < 5, got_event)

bookmarks = []
w = watch.Watch()
for ev in w.stream(core.list_namespaced_pod, "default", allow_watch_bookmarks=True,
                   resource_version=core.list_namespaced_pod("default")
                   .metadata.resource_version, timeout_seconds=2):
    if ev["type"] == "BOOKMARK":
        bookmarks.append(ev["raw_object"]["metadata"]["resourceVersion"])
check("bookmarks", len(bookmarks) >= 2 and all(b.isdigit() for b in bookmarks), bookmarks)

old = core.list_namespaced_pod("default").metadata.resource_version
for i in range(45):  # more changes than the 40 events the server keeps
    core.patch_namespaced_pod("p4", "default", {"metadata": {"labels": {"n": str(i)}}})
try:
    list(watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=old,
                              timeout_seconds=2))
    check("watch from an expired resourceVersion: 410", False, "no error")
except ApiException as e:
    check("watch from an expired resourceVersion: 410",
          e.status == 410 and "Expired: too old resource version" in e.reason, e.reason)

# ---- bindings both ways, evictions --------------------------------------------
core.create_namespaced_pod("default", pod("b1"))
core.create_namespaced_pod("default", pod("b2"))
# The client cannot read the Status a binding returns into a V1Binding (a
# known client bug), so the answers are taken raw.
r = core.create_namespaced_binding("default", client.V1Binding(
    metadata=client.V1ObjectMeta(name="b1"),
    target=client.V1ObjectReference(kind="Node", name="node-1")), _preload_content=False)
check("POST bindings: 201", r.status == 201)
r = core.create_namespaced_pod_binding("b2", "default", client.V1Binding(
    metadata=client.V1ObjectMeta(name="b2"),
    target=client.V1ObjectReference(kind="Node", name="node-2")), _preload_content=False)
check("POST pods/b2/binding: 201", r.status == 201)
check("both bound", core.read_namespaced_pod("b1", "default").spec.node_name == "node-1"
      and core.read_namespaced_pod("b2", "default").spec.node_name == "node-2")
expect_status("binding a bound pod: 409", 409, core.create_namespaced_binding, "default",
              client.V1Binding(metadata=client.V1ObjectMeta(name="b1"),
                               target=client.V1ObjectReference(name="node-2")))
wait_until("bound pod runs", 10,
           lambda: core.read_namespaced_pod("b1", "default").status.phase == "Running")
log = core.read_namespaced_pod_log("b1", "default")
check("pod log", log == "container c started from image busybox:1.36 on node-1 "
      "(simulated by kbatch-apiserver)\n", repr(log))
# A bound pod evicted lingers for its grace period (30 s by default, as on
# kube-apiserver); with a grace period of 0 it goes at once.
core.create_namespaced_pod_eviction("b1", "default", client.V1Eviction(
    metadata=client.V1ObjectMeta(name="b1", namespace="default")))
b1 = core.read_namespaced_pod("b1", "default")
check("evicted pod is terminating for its 30 s", b1.metadata.deletion_timestamp is not None
      and b1.metadata.deletion_grace_period_seconds == 30, b1.metadata)
core.create_namespaced_pod_eviction("b2", "default", client.V1Eviction(
    metadata=client.V1ObjectMeta(name="b2", namespace="default"),
    delete_options=client.V1DeleteOptions(grace_period_seconds=0)))
expect_status("evicted with grace 0: gone", 404, core.read_namespaced_pod, "b2", "default")

# ---- Jobs ---------------------------------------------------------------------
job = client.V1Job(
    metadata=client.V1ObjectMeta(name="j1"),
    spec=client.V1JobSpec(parallelism=2, completions=2, template=client.V1PodTemplateSpec(
        spec=client.V1PodSpec(restart_policy="Never", containers=[
            client.V1Container(name="w", image="busybox:1.36")]))))
j = batch.create_namespaced_job("default", job)
check("job created with its defaults", j.spec.backoff_limit == 6
      and j.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == j.metadata.uid)
wait_until("the Job controller made 2 pods", 10, lambda: len(core.list_namespaced_pod(
    "default", label_selector="job-name=j1").items) == 2)
wait_until("job status counts them", 10,
           lambda: batch.read_namespaced_job_status("j1", "default").status.active == 2)
batch.delete_namespaced_job("j1", "default", propagation_policy="Background")
wait_until("deleting the job takes its pods", 10, lambda: not core.list_namespaced_pod(
    "default", label_selector="job-name=j1").items)

# ---- Leases with conflicts ----------------------------------------------------
lease = coord.create_namespaced_lease("default", client.V1Lease(
    metadata=client.V1ObjectMeta(name="lock"),
    spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15)))
a = coord.read_namespaced_lease("lock", "default")
b = coord.read_namespaced_lease("lock", "default")
a.spec.holder_identity = "a2"
coord.replace_namespaced_lease("lock", "default", a)
b.spec.holder_identity = "b"
expect_status("second writer of a lease: 409", 409, coord.replace_namespaced_lease, "lock",
              "default", b)
check("first writer holds it", coord.read_namespaced_lease("lock", "default")
      .spec.holder_identity == "a2")

# ---- Events in both groups ----------------------------------------------------
ref = client.V1ObjectReference(kind="Pod", name="b1", namespace="default")
# An Event without eventTime reads as "eventTime": null through events.k8s.io,
# as on a real server, and this client refuses that (a known client bug).
core.create_namespaced_event("default", client.CoreV1Event(
    metadata=client.V1ObjectMeta(name="ev1"), involved_object=ref, reason="Core",
    message="from core", type="Normal", event_time="2026-01-01T00:00:00.000000Z"))
e1 = events.read_namespaced_event("ev1", "default")
check("core event seen in events.k8s.io", e1.note == "from core"
      and e1.regarding.name == "b1" and e1.reason == "Core")
events.create_namespaced_event("default", client.EventsV1Event(
    metadata=client.V1ObjectMeta(name="ev2"), regarding=ref, reason="New", note="from v1",
    type="Warning", action="Testing", reporting_controller="kbatch.io/test",
    reporting_instance="t1", event_time="2026-01-01T00:00:00.000000Z"))
e2 = core.read_namespaced_event("ev2", "default")
check("events.k8s.io event seen in core", e2.message == "from v1"
      and e2.involved_object.name == "b1" and e2.reporting_component == "kbatch.io/test")
# Raw: the simulated kubelet's Events, like a real kubelet's, have no
# eventTime, which this client cannot read through events.k8s.io.
r = events.list_namespaced_event("default", field_selector="involvedObject.name=b1",
                                 _preload_content=False)
doc = json.loads(r.data)
names = sorted(x["metadata"]["name"] for x in doc["items"])
check("events.k8s.io list", doc["apiVersion"] == "events.k8s.io/v1" and "ev1" in names
      and "ev2" in names and all("regarding" in x for x in doc["items"]), names)

# ---- custom objects -----------------------------------------------------------
for f in ("scheduling.volcano.sh_podgroups.yaml", "scheduling.volcano.sh_queues.yaml"):
    with open("%s/crds/%s" % (ROOT, f)) as fh:
        ext.create_custom_resource_definition(yaml.safe_load(fh))
G, V = "scheduling.volcano.sh", "v1beta1"
pg = custom.create_namespaced_custom_object(G, V, "default", "podgroups", {
    "apiVersion": G + "/" + V, "kind": "PodGroup", "metadata": {"name": "pg1"},
    "spec": {"minMember": 2, "queue": "default"}})
check("create a PodGroup", pg["spec"]["minMember"] == 2 and pg["metadata"]["uid"])
pg = custom.patch_namespaced_custom_object(G, V, "default", "podgroups", "pg1",
                                           {"spec": {"minMember": 3}})
check("merge patch a PodGroup", pg["spec"]["minMember"] == 3
      and pg["metadata"]["generation"] == 2)
st = custom.patch_namespaced_custom_object_status(G, V, "default", "podgroups", "pg1",
                                                  {"status": {"phase": "Running"}})
check("status subresource", st["status"]["phase"] == "Running")
lst = custom.list_namespaced_custom_object(G, V, "default", "podgroups")
check("list PodGroups", [x["metadata"]["name"] for x in lst["items"]] == ["pg1"])
e = expect_status("invalid PodGroup: 422", 422, custom.create_namespaced_custom_object, G, V,
                  "default", "podgroups", {"apiVersion": G + "/" + V, "kind": "PodGroup",
                                           "metadata": {"name": "bad"},
                                           "spec": {"minMember": "three"}})
check("invalid PodGroup names the field", e is not None and "spec.minMember" in e.body)
seen = [(ev["type"], ev["object"]["metadata"]["name"]) for ev in watch.Watch().stream(
    custom.list_namespaced_custom_object, G, V, "default", "podgroups", timeout_seconds=1)]
check("watch PodGroups", seen == [("ADDED", "pg1")], seen)
custom.delete_namespaced_custom_object(G, V, "default", "podgroups", "pg1")
expect_status("deleted PodGroup: 404", 404, custom.get_namespaced_custom_object, G, V,
              "default", "podgroups", "pg1")

print("python: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)

"""Load for kbatch-apiserver scale tests, with the standard library only
(one keep-alive connection per worker thread).

  load.py URL jobs NJOBS SIZE      create NJOBS Jobs of SIZE pods each
  load.py URL bind NODES           bind every unbound pod, round-robin over
                                   nodes node-1..node-NODES
  load.py URL count [PHASE]        print the number of pods (in PHASE)
  load.py URL pagetime             print the seconds one 500-pod page takes
                                   from the middle of the pod list
Prints what it measured on stdout; exits non-zero on an HTTP error.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

URL = urllib.parse.urlparse(sys.argv[1])
WORKERS = 4


def conn():
    return http.client.HTTPConnection(URL.hostname, URL.port, timeout=120)


def request(c, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    c.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    payload = r.read()
    if r.status >= 300:
        raise SystemExit("%s %s: %d %s" % (method, path, r.status, payload[:300]))
    return json.loads(payload) if payload else None


def parallel(items, fn):
    """Runs fn(connection, item) over items on WORKERS connections."""
    chunks = [items[i::WORKERS] for i in range(WORKERS)]
    errors = []

    def run(chunk):
        c = conn()
        try:
            for it in chunk:
                fn(c, it)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(ch,)) for ch in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(str(errors[0]))


def jobs(n, size):
    def make(c, i):
        request(c, "POST", "/apis/batch/v1/namespaces/default/jobs", {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "load-%05d" % i},
            "spec": {"parallelism": size, "completions": size, "template": {
                "metadata": {"annotations": {"scheduling.k8s.io/group-name": "g%d" % i}},
                "spec": {"schedulerName": "kbatch", "restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {"cpu": "1"}}}]}}}})
    start = time.time()
    parallel(list(range(n)), make)
    print("%.2f" % (time.time() - start))


def all_pods(c, query=""):
    """Every pod, paging 500 at a time as clients do."""
    items, cont = [], ""
    while True:
        q = "/api/v1/pods?limit=500" + query + ("&continue=" + cont if cont else "")
        doc = request(c, "GET", q)
        items += doc["items"]
        cont = doc["metadata"].get("continue")
        if not cont:
            return items


def bind(nodes):
    c = conn()
    pods = [p for p in all_pods(c, "&fieldSelector=spec.nodeName%3D")]
    work = [(p["metadata"]["namespace"], p["metadata"]["name"], "node-%d" % (i % nodes + 1))
            for i, p in enumerate(pods)]

    def one(c, w):
        ns, name, node = w
        request(c, "POST", "/api/v1/namespaces/%s/pods/%s/binding" % (ns, name), {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": node}})
    start = time.time()
    parallel(work, one)
    print("%d %.2f" % (len(work), time.time() - start))


def count(phase=None):
    c = conn()
    q = "/api/v1/pods?limit=1"
    if phase:
        q += "&fieldSelector=status.phase%3D" + phase
        print(len(all_pods(c, "&fieldSelector=status.phase%3D" + phase)))
        return
    doc = request(c, "GET", q)
    print(doc["metadata"].get("remainingItemCount", 0) + len(doc["items"]))


def pagetime():
    c = conn()
    doc = request(c, "GET", "/api/v1/pods?limit=1")
    total = doc["metadata"].get("remainingItemCount", 0) + 1
    # Walk to the middle in big pages, then time one page of 500.
    cont = doc["metadata"].get("continue")
    seen = 1
    while seen < total // 2 and cont:
        doc = request(c, "GET", "/api/v1/pods?limit=5000&continue=" + cont)
        seen += len(doc["items"])
        cont = doc["metadata"].get("continue")
    start = time.time()
    request(c, "GET", "/api/v1/pods?limit=500&continue=" + cont)
    print("%.4f" % (time.time() - start))


if __name__ == "__main__":
    cmd = sys.argv[2]
    if cmd == "jobs":
        jobs(int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "bind":
        bind(int(sys.argv[3]))
    elif cmd == "count":
        count(sys.argv[3] if len(sys.argv) > 3 else None)
    elif cmd == "pagetime":
        pagetime()

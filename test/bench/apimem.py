"""kbatch-apiserver memory per pod (test/bench/apimem.sh), with the
standard library only: one keep-alive connection per worker thread.

  apimem.py URL create N      create pods p-000000.. in namespace default
  apimem.py URL bind N NODES  bind them round-robin over node-1..node-NODES
  apimem.py URL running       print the number of Running pods
Prints seconds taken; exits non-zero on an HTTP error.
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


def request(c, method, path, body):
    c.request(method, path, body=json.dumps(body).encode(),
              headers={"Content-Type": "application/json",
                       "User-Agent": "kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b"})
    r = c.getresponse()
    payload = r.read()
    if r.status >= 300:
        raise SystemExit("%s %s: %d %s" % (method, path, r.status, payload[:300]))


def parallel(n, fn):
    errors = []

    def run(w):
        c = conn()
        try:
            for i in range(w, n, WORKERS):
                fn(c, i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    start = time.time()
    threads = [threading.Thread(target=run, args=(w,)) for w in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(str(errors[0]))
    print("%.2f" % (time.time() - start))


def pod(i):
    """A gang member as a Job controller or kubectl would make it."""
    g = "g%05d" % (i // 20)
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p-%06d" % i, "namespace": "default",
                     "labels": {"app": "bench", "job-name": g},
                     "annotations": {"scheduling.k8s.io/group-name": g}},
        "spec": {"schedulerName": "kbatch", "restartPolicy": "Never",
                 "containers": [{"name": "c", "image": "busybox:1.36",
                                 "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}


def create(n):
    parallel(n, lambda c, i: request(
        c, "POST", "/api/v1/namespaces/default/pods?fieldManager=kubectl-create", pod(i)))


def bind(n, nodes):
    def one(c, i):
        name = "p-%06d" % i
        request(c, "POST", "/api/v1/namespaces/default/pods/%s/binding" % name, {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": "node-%d" % (i % nodes + 1)}})
    parallel(n, one)


def running():
    c = conn()
    n, cont = 0, ""
    while True:
        c.request("GET", "/api/v1/pods?limit=5000&fieldSelector=status.phase%3DRunning" +
                  ("&continue=" + cont if cont else ""))
        doc = json.loads(c.getresponse().read())
        n += len(doc["items"])
        cont = doc["metadata"].get("continue")
        if not cont:
            break
    print(n)


if __name__ == "__main__":
    cmd = sys.argv[2]
    if cmd == "create":
        create(int(sys.argv[3]))
    elif cmd == "bind":
        bind(int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "running":
        running()

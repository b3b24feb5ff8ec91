#!/usr/bin/env python3
"""Builds deploy/Dockerfile and runs the image it makes (make image-test).

    test/image/build.py BIN

With a container engine (`docker info` answers) this is `docker build` and
`docker run`.  Without one it builds the same stages itself: each
`FROM debian:SUITE[-slim]` is a fresh Debian root made by debootstrap
(minbase, cached as a tarball), each `RUN` runs there under chroot, `COPY .`
copies the context as .dockerignore filters it, `COPY --from` copies
between stages, and `USER` and `ENTRYPOINT` say how the image runs.  So the
package lists and commands tested are the Dockerfile's own.

Then it runs the image: `--version` must print the version the Deployment's
image tag names, every library must resolve, and, as user 65532 in the
image's root against a kbatch-apiserver (BIN) on the host, the scheduler
must answer /healthz and /readyz.

Needs root (chroot, mount) and the network (Debian's mirror) without
docker.  Cached under ~/.cache/kbatch/image (or $KBATCH_CACHE/image): the
debootstrap tarball per suite and the downloaded packages; the stages are
rebuilt each run in a work directory there.
"""
import atexit
import fnmatch
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIRROR = os.environ.get("KBATCH_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CACHE = os.path.join(os.environ.get("KBATCH_CACHE", os.path.expanduser("~/.cache/kbatch")), "image")
T0 = time.monotonic()


def log(msg):
    print("image-test [%3.0fs] %s" % (time.monotonic() - T0, msg), flush=True)


def die(msg):
    print("image-test: FAIL: %s" % msg, flush=True)
    sys.exit(1)


# ---- the Dockerfile ------------------------------------------------------------

def parse_dockerfile(path):
    """Stages: [{"from": image, "name": str|None, "steps": [(INSTR, args)]}]."""
    lines, cur = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if cur and line.lstrip().startswith("#"):
                continue  # a comment inside a continued instruction
            if line.endswith("\\"):
                cur += line[:-1] + " "
                continue
            lines.append(cur + line)
            cur = ""
    stages = []
    for line in lines:
        instr, _, args = line.strip().partition(" ")
        instr = instr.upper()
        args = args.strip()
        if instr == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?$", args, re.I)
            if not m:
                die("Dockerfile: FROM %s: want IMAGE [AS NAME]" % args)
            stages.append({"from": m.group(1), "name": m.group(2), "steps": []})
        elif instr in ("RUN", "WORKDIR", "COPY", "USER", "ENTRYPOINT", "ENV"):
            if not stages:
                die("Dockerfile: %s before FROM" % instr)
            stages[-1]["steps"].append((instr, args))
        else:
            die("Dockerfile: %s: this test does not know the instruction" % instr)
    return stages


def suite_of(image):
    m = re.match(r"debian:([a-z]+)(-slim)?$", image)
    if not m:
        die("Dockerfile: FROM %s: this test builds debian:SUITE[-slim] only" % image)
    return m.group(1)


# ---- .dockerignore -------------------------------------------------------------

def ignore_rules(path):
    rules = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                neg = line.startswith("!")
                pat = line[1:] if neg else line
                pat = os.path.normpath(pat.strip("/"))
                rules.append((neg, pat.split("/")))
    return rules


def matches(parts, pat):
    """A pattern matches a path when it matches the path or a directory
    above it, component by component ('*' never crosses a '/')."""
    for n in range(1, len(parts) + 1):
        if n == len(pat) and all(fnmatch.fnmatchcase(p, q) for p, q in zip(parts[:n], pat)):
            return True
    return False


def context_files(root):
    """The files docker would send: the working tree through .dockerignore
    (the last rule that matches decides)."""
    rules = ignore_rules(os.path.join(root, ".dockerignore"))
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root)
            keep = True
            for neg, pat in rules:
                if matches(rel.split("/"), pat):
                    keep = neg
            if keep:
                out.append(rel)
    return sorted(out)


# ---- a stage in a Debian root ----------------------------------------------------

def run(cmd, **kw):
    r = subprocess.run(cmd, **kw)
    if r.returncode != 0:
        die("%s: exit %d" % (" ".join(shlex.quote(c) for c in cmd), r.returncode))
    return r


def base_tarball(suite):
    tar = os.path.join(CACHE, "debian-%s-minbase.tar" % suite)
    if os.path.exists(tar):
        return tar
    if not shutil.which("debootstrap"):
        die("no docker and no debootstrap: apt-get install debootstrap (make image-test does)")
    tmp = tempfile.mkdtemp(dir=CACHE)
    log("debootstrap --variant=minbase %s (once; cached in %s)" % (suite, tar))
    run(["debootstrap", "--variant=minbase", suite, tmp, MIRROR], stdout=subprocess.DEVNULL)
    run(["tar", "-C", tmp, "-cf", tar + ".tmp", "."])
    os.rename(tar + ".tmp", tar)
    shutil.rmtree(tmp)
    return tar


STAGES = []


def unmount_under(path):
    """Unmounts what an earlier run left mounted under path (deepest first),
    so that removing path never reaches into /proc or the package cache."""
    with open("/proc/mounts") as f:
        points = [line.split()[1] for line in f]
    for m in sorted((p for p in points if p.startswith(path + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", m])


class Stage:
    def __init__(self, work, index, stage):
        STAGES.append(self)
        self.root = os.path.join(work, "stage%d" % index)
        self.name = stage["name"]
        self.workdir = "/"
        self.user = "0:0"
        self.entrypoint = None
        self.env = {}
        self.mounted = []
        os.makedirs(self.root)
        run(["tar", "-C", self.root, "-xf", base_tarball(suite_of(stage["from"]))])
        os.chmod(self.root, 0o755)  # "/" as an image has it (mkdtemp made it 0700)
        shutil.copy("/etc/resolv.conf", os.path.join(self.root, "etc/resolv.conf"))
        # Downloaded packages are kept between runs (apt's archive cache).
        debs = os.path.join(CACHE, "debs")
        os.makedirs(os.path.join(debs, "partial"), exist_ok=True)
        self.bind(debs, "var/cache/apt/archives")
        self.bind("/proc", "proc")

    def bind(self, src, dst):
        target = os.path.join(self.root, dst)
        os.makedirs(target, exist_ok=True)
        run(["mount", "--bind", src, target])
        self.mounted.append(target)

    def unmount(self):
        for m in reversed(self.mounted):
            subprocess.run(["umount", "-l", m])
        self.mounted = []

    def sh(self, cmd, user="0:0", check=True, capture=False):
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "HOME": "/root", "LANG": "C.UTF-8"}
        env.update(self.env)
        full = ["chroot", "--userspec=" + user, self.root, "/bin/sh", "-c",
                "cd %s && %s" % (shlex.quote(self.workdir), cmd)]
        r = subprocess.run(full, env=env, text=True,
                           stdout=subprocess.PIPE if capture else None,
                           stderr=subprocess.STDOUT if capture else None)
        if check and r.returncode != 0:
            die("RUN %s: exit %d%s" % (cmd, r.returncode, "\n" + r.stdout if capture else ""))
        return r


def build_without_docker(stages, work):
    built = {}
    last = None
    for i, st in enumerate(stages):
        log("stage %d: FROM %s (a Debian %s root)" % (i, st["from"], suite_of(st["from"])))
        s = Stage(work, i, st)
        try:
            for instr, args in st["steps"]:
                if instr == "RUN":
                    log("  RUN %s" % (args if len(args) < 100 else args[:97] + "..."))
                    s.sh(args)
                elif instr == "WORKDIR":
                    s.workdir = args
                    os.makedirs(s.root + args, exist_ok=True)
                elif instr == "ENV":
                    k, _, v = args.partition("=")
                    s.env[k.strip()] = v.strip()
                elif instr == "USER":
                    s.user = args
                elif instr == "ENTRYPOINT":
                    s.entrypoint = json.loads(args)
                elif instr == "COPY":
                    words = args.split()
                    if words[0].startswith("--from="):
                        src_stage = built[words[0][7:]]
                        src = src_stage.root + words[1]
                        dst = words[2] if words[2].startswith("/") else os.path.join(s.workdir, words[2])
                        log("  COPY --from=%s %s %s" % (words[0][7:], words[1], words[2]))
                        os.makedirs(os.path.dirname(s.root + dst), exist_ok=True)
                        shutil.copy2(src, s.root + dst)
                    elif words[:2] == [".", "."]:
                        files = context_files(ROOT)
                        log("  COPY . %s (%d files through .dockerignore)" % (s.workdir, len(files)))
                        for f in files:
                            d = os.path.join(s.root + s.workdir, f)
                            os.makedirs(os.path.dirname(d), exist_ok=True)
                            shutil.copy2(os.path.join(ROOT, f), d)
                    else:
                        die("Dockerfile: COPY %s: this test copies '. .' or --from" % args)
        except SystemExit:
            s.unmount()
            raise
        if st["name"]:
            built[st["name"]] = s
        last = s
    return last, built


# ---- running the image ----------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except Exception:
        return 0


def check_image(image, binary, run_in_image):
    """image: the final stage; run_in_image(args, user) -> CompletedProcess."""
    version = re.search(r'#define KB_VERSION "([^"]+)"',
                        open(os.path.join(ROOT, "cmd/kbatch-scheduler/main.c")).read()).group(1)
    tag = re.search(r"image: kbatch/kbatch-scheduler:(\S+)",
                    open(os.path.join(ROOT, "deploy/deployment.yaml")).read()).group(1)
    if tag != version:
        die("deploy/deployment.yaml's image tag %s is not the daemon's version %s" % (tag, version))
    out = run_in_image(["--version"]).stdout.strip()
    if out != "kbatch-scheduler " + version:
        die("the image's --version printed %r, want %r" % (out, "kbatch-scheduler " + version))
    log("ok: the image runs as user 65532 and prints %r (the Deployment's tag)" % out)

    # The scheduler in the image, against a kbatch-apiserver on the host
    # (the same network namespace).
    apiserver = os.path.join(binary, "kbatch-apiserver")
    tmp = tempfile.mkdtemp()
    api = subprocess.Popen([apiserver, "--listen", "127.0.0.1:0", "--port-file", tmp + "/port",
                            "--write-kubeconfig", tmp + "/kc"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(tmp + "/kc"):
                break
            time.sleep(0.1)
        kubectl = ["kubectl", "--kubeconfig", tmp + "/kc"]
        run(kubectl + ["apply", "-f", os.path.join(ROOT, "crds")], stdout=subprocess.DEVNULL)
        run(kubectl + ["wait", "--for", "condition=established", "--timeout=30s",
                       "crd/podgroups.scheduling.volcano.sh", "crd/queues.scheduling.volcano.sh"],
            stdout=subprocess.DEVNULL)
        kc = image.root + "/tmp/kubeconfig"
        shutil.copy(tmp + "/kc", kc)
        os.chmod(kc, 0o644)
        port = free_port()
        sched = run_in_image(["--kubeconfig", "/tmp/kubeconfig",
                              "--listen-address", "127.0.0.1:%d" % port], background=True)
        try:
            ok = False
            for _ in range(100):
                if get("http://127.0.0.1:%d/readyz" % port) == 200:
                    ok = True
                    break
                time.sleep(0.2)
            if not ok or get("http://127.0.0.1:%d/healthz" % port) != 200:
                die("the image's scheduler did not answer /healthz and /readyz")
            log("ok: the image's scheduler syncs with an API server and answers /healthz, /readyz")
        finally:
            sched.terminate()
            sched.wait(10)
    finally:
        api.terminate()
        api.wait(10)
        shutil.rmtree(tmp)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    binary = os.path.abspath(sys.argv[1])
    dockerfile = os.path.join(ROOT, "deploy/Dockerfile")
    os.makedirs(CACHE, exist_ok=True)
    if shutil.which("docker") and subprocess.run(["docker", "info"], stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.DEVNULL).returncode == 0:
        tag = "kbatch/kbatch-scheduler:image-test"
        log("docker build -f deploy/Dockerfile")
        run(["docker", "build", "-f", dockerfile, "-t", tag, ROOT])
        # docker run --network host shares the host's 127.0.0.1 with the test.
        # The scheduler finds its kubeconfig in a mounted directory.

        class Image:
            root = tempfile.mkdtemp()

        def run_in_image(args, background=False):
            cmd = ["docker", "run", "--rm", "--network", "host", "-v", Image.root + ":/tmp",
                   tag] + args
            if background:
                return subprocess.Popen(cmd)
            return run(cmd, stdout=subprocess.PIPE, text=True)
        check_image(Image, binary, run_in_image)
        log("passed in %.0f s (docker)" % (time.monotonic() - T0))
        return
    if os.geteuid() != 0:
        die("without docker this test needs root (debootstrap, chroot, mount)")
    work = os.path.join(CACHE, "work")
    atexit.register(lambda: [st.unmount() for st in STAGES])
    if os.path.exists(work):
        unmount_under(work)
        shutil.rmtree(work)
    os.makedirs(work)
    stages = parse_dockerfile(dockerfile)
    image, _ = build_without_docker(stages, work)
    try:
        user = image.user

        def run_in_image(args, background=False):
            cmd = ["chroot", "--userspec=" + user, image.root] + image.entrypoint + args
            if background:
                return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return run(cmd, stdout=subprocess.PIPE, text=True)
        if user.split(":")[0] in ("0", "root"):
            die("the image runs as root (USER %s)" % user)
        missing = image.sh("ldd %s | grep 'not found' || true" % image.entrypoint[0],
                           capture=True).stdout.strip()
        if missing:
            die("libraries the image lacks:\n" + missing)
        log("ok: every library of %s resolves in the runtime stage" % image.entrypoint[0])
        check_image(image, binary, run_in_image)
    finally:
        for st in STAGES:
            st.unmount()
    shutil.rmtree(work)
    log("passed in %.0f s (no docker: debootstrap and chroot)" % (time.monotonic() - T0))


main()

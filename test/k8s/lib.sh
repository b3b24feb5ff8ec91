# Helpers of up.sh and down.sh (sourced).

# k8s_free_port: a loopback TCP port nothing listens on, below the kernel's
# ephemeral range so that no client connection holds it by the time the
# component binds it, and reserved, so that no other test picking at the
# same time (make -jN test) gets it too: under a lock, the port is recorded
# in /tmp/kbatch-ports (KBATCH_PORT_DIR) with its owner, the test's shell
# (KBATCH_PORT_OWNER, which lib/scheduler.sh exports; else this shell).
# A reservation lasts while its owner lives; a dead owner's is taken back.
k8s_free_port() {
        python3 - "${KBATCH_PORT_OWNER:-$$}" "${KBATCH_PORT_DIR:-/tmp/kbatch-ports}" <<'PY'
import fcntl, os, random, socket, sys
owner, top = int(sys.argv[1]), sys.argv[2]
os.makedirs(top, exist_ok=True)
try:
    os.chmod(top, 0o1777)  # shared by every user's tests
except OSError:
    pass
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])

def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True

lock = os.open(os.path.join(top, ".lock"), os.O_RDONLY | os.O_CREAT, 0o444)
fcntl.flock(lock, fcntl.LOCK_EX)
for _ in range(500):
    port = random.randint(10000, max(10001, low - 1))
    path = os.path.join(top, str(port))
    try:
        held = int(open(path).read() or 0)
    except (OSError, ValueError):
        held = None
    if held is not None:
        if alive(held):
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    with open(path, "w") as f:
        f.write(str(owner))
    print(port)
    break
PY
}

# k8s_start NAME DIR PROGRAM ARGS...: runs a component in the background,
# its log in DIR/NAME.log and its pid in DIR/NAME.pid.
k8s_start() {
        local name=$1 dir=$2
        shift 2
        "$@" >>"$dir/$name.log" 2>&1 </dev/null &
        echo $! >"$dir/$name.pid"
        # The command line, for test/k8s/restart.sh.
        printf '%s\0' "$@" >"$dir/$name.cmd"
}

# k8s_logs DIR: the last 20 lines of each component's log.
k8s_logs() {
        local f
        for f in "$1"/*.log; do
                [ -f "$f" ] || continue
                echo "---- last 20 lines of $f" >&2
                tail -20 "$f" >&2
        done
}

# k8s_alive NAME DIR: the component still runs.
k8s_alive() {
        [ -s "$2/$1.pid" ] && kill -0 "$(cat "$2/$1.pid")" 2>/dev/null
}

# k8s_wait NAME DIR SECONDS COMMAND...: waits until COMMAND succeeds. When
# the component dies or the time is up, says which and where its log is,
# stops everything up.sh started and exits 1.
k8s_wait() {
        local name=$1 dir=$2 secs=$3
        shift 3
        local end=$((SECONDS + secs))
        while [ $SECONDS -lt $end ]; do
                if ! k8s_alive "$name" "$dir"; then
                        echo "test/k8s: $name exited while starting; its log is $dir/$name.log:" >&2
                        tail -20 "$dir/$name.log" >&2
                        "$(dirname "${BASH_SOURCE[0]}")/down.sh" "$dir" >&2 || true
                        exit 1
                fi
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.2
        done
        echo "test/k8s: $name not ready after ${secs}s; its log is $dir/$name.log" >&2
        k8s_logs "$dir"
        "$(dirname "${BASH_SOURCE[0]}")/down.sh" "$dir" >&2 || true
        exit 1
}

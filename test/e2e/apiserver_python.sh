# The official Python client (Debian's python3-kubernetes, which make deps
# installs) against kbatch-apiserver: see apiserver_python.py.
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# Debian's interpreter, whatever python3 comes first on PATH.
PY=/usr/bin/python3
if ! $PY -c 'import kubernetes' 2>/dev/null; then
        echo "FAIL: python3-kubernetes is not installed (make deps installs it)"
        exit 1
fi
start_server --nodes "2:cpu=4,memory=8Gi" --history 40 --bookmark-interval 0.5
if ! timeout 120 $PY "$ROOT/test/e2e/apiserver_python.py" "$KC" "$ROOT"; then
        fail "python client checks"
fi
stop_server
finish

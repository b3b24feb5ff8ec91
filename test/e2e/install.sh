# make install DESTDIR=... stages the programs, a man page for each (help2man
# from its --help) that man renders, the docs, the CRDs and the examples;
# make uninstall takes them all away again.
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BIN in
"$ROOT/bin") mode=release ;;
"$ROOT"/build/*/bin) mode=$(basename "$(dirname "$BIN")") ;;
*) echo "install: skipped: BIN=$BIN is not a build of this tree"; exit 77 ;;
esac
# A make of its own, not a job of the make that may be running this test.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" MODE="$mode" "$@"; }
S=$T/stage
if ! mk install DESTDIR="$S" PREFIX=/usr >"$T/install.log" 2>&1; then
        fail "make install"; cat "$T/install.log"; finish install
fi
pass "make install DESTDIR=... PREFIX=/usr"

for c in "$ROOT"/cmd/*/; do
        p=$(basename "$c")
        [ -x "$S/usr/bin/$p" ] && pass "$p in usr/bin" || fail "$p not in usr/bin"
        page=$S/usr/share/man/man1/$p.1
        if [ ! -s "$page" ]; then fail "no man page usr/share/man/man1/$p.1"; continue; fi
        rc=0
        LC_ALL=C MANWIDTH=80 MANPAGER=cat man -l "$page" >"$T/$p.txt" 2>"$T/$p.err" || rc=$?
        expect_eq "man -l $p.1: exit status" "$rc" 0
        expect_eq "man -l $p.1: no warning" "$(cat "$T/$p.err")" ""
        text=$(cat "$T/$p.txt")
        expect_match "$p.1: its title" "$text" "^$(echo "$p" | tr a-z A-Z)\(1\)"
        expect_match "$p.1: NAME names it" "$text" "^ +$p +- [a-z]"
        expect_match "$p.1: a SYNOPSIS from the usage line" "$text" "^SYNOPSIS"
        # The page is the --help text: its first long option is there.
        opt=$("$S/usr/bin/$p" --help 2>&1 | grep -Eo -- '--[a-z][a-z-]+' | head -1)
        expect_match "$p.1: holds $opt from --help" "$text" "(^|[^a-z-])$opt([^a-z-]|$)"
done

for f in README.md docs/testing.md; do
        cmp -s "$ROOT/$f" "$S/usr/share/doc/kbatch/$f" && pass "doc $f" || fail "doc $f not in usr/share/doc/kbatch"
done
[ -n "$(ls "$S"/usr/share/kbatch/crds/*.yaml 2>/dev/null)" ] && pass "CRDs in usr/share/kbatch" ||
        fail "no CRDs in usr/share/kbatch"

if ! mk uninstall DESTDIR="$S" PREFIX=/usr >"$T/uninstall.log" 2>&1; then
        fail "make uninstall"; cat "$T/uninstall.log"
fi
expect_eq "make uninstall leaves no file" "$(find "$S" -type f | sed "s|^$S/||")" ""
finish install

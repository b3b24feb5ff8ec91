# Turns a kbatch program's --help text into the shape help2man reads, for
# make man (the Makefile runs each program through this):
#   "usage: PROG ARGS"                  -> "Usage: PROG ARGS"
#   "Usage:" then indented lines        -> "Usage: FIRST" and "   or: NEXT"
# so that the usage lines become the page's SYNOPSIS, not filled prose.
# Everything else passes unchanged.
usage && /^[ \t]+[^ \t]/ {
        sub(/^[ \t]+/, "")
        print (usage == 1 ? "Usage: " : "   or: ") $0
        usage++
        next
}
{ usage = 0 }
/^[Uu]sage:[ \t]*$/ { usage = 1; next }
/^usage: / { sub(/^usage:/, "Usage:") }
{ print }

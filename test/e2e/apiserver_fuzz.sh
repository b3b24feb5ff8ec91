# The fuzz targets (test/fuzz), built, each run once over its seeds and
# saved corpus: every input that ever mattered still passes.  make fuzz,
# and CI after make test, fuzz each for longer.
cd "$(dirname "$0")/../.." && exec bash test/fuzz/run.sh 0

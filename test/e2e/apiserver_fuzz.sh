# The apiserver's fuzz targets, briefly (make fuzz runs them longer).
cd "$(dirname "$0")/../.." && exec bash test/fuzz/run.sh 20

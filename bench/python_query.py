"""bench/python_query.py - the load and seed query from Python against the CLI.

    build/gpuperf demo --steps 2000 -q -o /tmp/demo2000.pftrace
    PYTHONPATH=python GPUPERF_BUILD=build python3 bench/python_query.py \
        /tmp/demo2000.pftrace build/gpuperf

In 7 interleaved rounds: gpuperf.TraceProcessor(path).query(SEED) in this
process, against `gpuperf query path SEED --format csv` as a process of its
own (fork and exec included, as a Python user would run it). Prints median
[min..max] of each and the ratio of the medians. The interpreter's own
start (about 40 ms here) is outside both.
"""
import statistics
import subprocess
import sys
import time

import gpuperf

SEED = ("SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) AS mean "
        "FROM gpu_slice GROUP BY name ORDER BY total DESC, name")


def main():
    trace, cli = sys.argv[1], sys.argv[2]
    py, sh = [], []
    for _ in range(7):
        t = time.perf_counter()
        with gpuperf.TraceProcessor(trace) as tp:
            tp.query(SEED)
        py.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([cli, "query", trace, SEED, "--format", "csv"],
                       stdout=subprocess.DEVNULL, check=True)
        sh.append(time.perf_counter() - t)

    def fmt(v):
        return (f"{statistics.median(v) * 1e3:.0f} "
                f"[{min(v) * 1e3:.0f}..{max(v) * 1e3:.0f}] ms")

    print(f"python: {fmt(py)}; cli: {fmt(sh)}; ratio "
          f"{statistics.median(py) / statistics.median(sh):.2f}")


if __name__ == "__main__":
    main()

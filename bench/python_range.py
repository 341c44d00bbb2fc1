"""bench/python_range.py - what a gpuperf.range costs a Python program.

    PYTHONPATH=python GPUPERF_BUILD=build python3 bench/python_range.py
    build/gpuperf record -q -o /tmp/r.pftrace -- env PYTHONPATH=python \
        GPUPERF_BUILD=build python3 bench/python_range.py

Times N empty `with gpuperf.range("r"):` blocks against N empty
`with nullcontext():` blocks (the floor: what any context manager costs),
in 7 interleaved rounds, and prints median [min..max] nanoseconds per
range for each and their difference. Under `gpuperf record` the ranges are
recorded; otherwise they only cost the calls.
"""
import contextlib
import os
import statistics
import sys
import time

import gpuperf

N = int(os.environ.get("N", "200000"))
ROUNDS = 7


def rounds():
    floor, rng = [], []
    null = contextlib.nullcontext()
    for _ in range(ROUNDS):
        t = time.perf_counter_ns()
        for _ in range(N):
            with null:
                pass
        floor.append((time.perf_counter_ns() - t) / N)
        t = time.perf_counter_ns()
        for _ in range(N):
            with gpuperf.range("r"):
                pass
        rng.append((time.perf_counter_ns() - t) / N)
    return floor, rng


def fmt(v):
    return f"{statistics.median(v):.0f} [{min(v):.0f}..{max(v):.0f}] ns"


floor, rng = rounds()
added = [r - f for r, f in zip(rng, floor)]
recording = "GPUPERF_RECORD_DIR" in os.environ
print(f"gpuperf.range ({'recording' if recording else 'not recording'}, "
      f"{N} per round, {ROUNDS} rounds): {fmt(rng)}; nullcontext: {fmt(floor)}; "
      f"added: {fmt(added)}", file=sys.stderr)

"""`gpuperf stat -x SEP` read by a reader written from perf's documented
CSV format (`man perf-stat`, "CSV FORMAT"), not from gpuperf's code:

    counter value, unit of the counter value or empty, event name, run
    time of counter, percentage of measurement time the counter was
    running, optional variance if multiple values are collected with -r,
    optional metric value, optional unit of metric

gpuperf adds two fields after those: the device and the kernel.
"""

import os
import subprocess

import pytest

CLI = os.environ.get("GPUPERF_CLI")
BUILD = os.environ.get("GPUPERF_BUILD")
APP = os.path.join(BUILD or "", "tests", "stat_app")

pytestmark = pytest.mark.skipif(
    not CLI or not BUILD or not os.access(APP, os.X_OK),
    reason="GPUPERF_CLI or GPUPERF_BUILD is not set (run through `make test`)")


def perf_csv_line(line, sep, repeated):
    """One line of perf stat -x as its manual describes it."""
    f = line.split(sep)
    rec = {"value": f[0], "unit": f[1], "event": f[2],
           "runtime": int(f[3]), "percent": float(f[4])}
    rest = f[5:]
    if repeated:
        var, rest = rest[0], rest[1:]
        rec["variance"] = float(var[:-1]) if var else None
        assert not var or var.endswith("%")
    rec["metric"] = float(rest[0]) if rest[0] else None
    rec["metric_unit"] = rest[1]
    rec["extra"] = rest[2:]  # gpuperf's device and kernel
    return rec


def stat(*args, sep=";"):
    env = dict(os.environ, GPUPERF_NO_PROGRESS="1")
    p = subprocess.run([CLI, "stat", "-x", sep, *args], capture_output=True,
                       text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    # The program's own output is on stdout; stat's lines on stderr.
    return [ln for ln in p.stderr.splitlines() if sep in ln]


@pytest.mark.parametrize("repeat", [1, 3])
def test_stat_x_is_perf_csv(repeat):
    args = ["-e", "dram__bytes_read.sum"]
    if repeat > 1:
        args += ["-r", str(repeat)]
    lines = stat(*args, "--", APP, "--launches", "3")
    recs = [perf_csv_line(ln, ";", repeat > 1) for ln in lines]
    assert recs
    for r in recs:
        float(r["value"])
        assert r["runtime"] > 0 and r["percent"] == 100.0
        assert len(r["extra"]) == 2  # device, kernel
        if repeat > 1 and r["variance"] is not None:
            assert r["variance"] >= 0
    by = {(r["event"], r["extra"][1]): r for r in recs}
    launches = by[("launches", "saxpy")]
    assert float(launches["value"]) == 3 and launches["unit"] == ""
    assert launches["extra"][0] == "Sim Compute GPU #0"
    kt = by[("kernel-time", "saxpy")]
    assert kt["unit"] == "msec" and float(kt["value"]) > 0
    dram = by[("dram__bytes_read.sum", "")]
    assert dram["unit"] == "bytes"
    # time-elapsed in seconds; its run time is the same time in ns.
    el = by[("time-elapsed", "")]
    assert el["unit"] == "s"
    assert abs(float(el["value"]) * 1e9 - el["runtime"]) <= 1
    # perf's own metrics where the host counts: task-clock's CPUs
    # utilized is the msec over the elapsed time.
    tc = by.get(("task-clock", ""))
    if tc is not None:
        assert tc["metric_unit"] == "CPUs utilized"
        want = float(tc["value"]) / 1e3 / float(el["value"])
        assert tc["metric"] == pytest.approx(want, rel=1e-2, abs=2e-3)


def test_stat_x_multiplexed_is_perf_csv():
    """`-e 'dram*'`: three counters of a block that counts two at once,
    multiplexed; perf's run-time and percentage fields say for how long
    and what share of the time each counted."""
    lines = stat("--period", "10000", "-e", "dram*", "--", APP,
                 "--launches", "30")
    recs = [perf_csv_line(ln, ";", False) for ln in lines]
    dev = [r for r in recs if r["event"].startswith("dram__")
           and r["extra"] == ["Sim Compute GPU #0", ""]]
    assert len(dev) == 3
    sampled = max(r["runtime"] / (r["percent"] / 100) for r in dev)
    for r in dev:
        float(r["value"])
        assert 0 < r["percent"] < 100
        # the run time is the time counted: its share of the time sampled
        assert r["runtime"] == pytest.approx(sampled * r["percent"] / 100,
                                             rel=1e-3)
    # two counted at any time
    assert sum(r["percent"] for r in dev) == pytest.approx(200, abs=0.05)
    rates = [r for r in dev if r["unit"] == "bytes"]
    assert rates and all(r["metric_unit"].endswith("/sec") for r in rates)

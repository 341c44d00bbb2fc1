"""`gpuperf export --format chrome-json|csv` read back with Python's own
json and csv modules, independently of gpuperf's C code: the JSON must
hold as many slices and flows as the trace (counted by `gpuperf query`
on the original), kernels with their launch arguments and correlation
ids, real process and thread names, and the categories docs/report.md
gives. The same JSON loaded by Perfetto's trace_processor_shell is the C
suite's export_chrome_json_in_perfetto.
"""

import csv
import io
import json
import os
import subprocess
from collections import Counter

import pytest

CLI = os.environ.get("GPUPERF_CLI")

pytestmark = pytest.mark.skipif(
    not CLI, reason="GPUPERF_CLI is not set (run through `make test`)")


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True,
                          check=True, timeout=300).stdout


def count(trace, sql):
    rows = list(csv.reader(io.StringIO(
        cli("query", trace, sql, "--format", "csv"))))
    return int(rows[1][0])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    trace, out = str(d / "demo.pftrace"), str(d / "demo.json")
    cli("demo", "-q", "-o", trace)
    cli("export", trace, "--format", "chrome-json", "-o", out)
    with open(out, encoding="utf-8") as f:
        return trace, json.load(f)["traceEvents"]


def test_chrome_json_slices_and_flows(demo):
    trace, events = demo
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == count(trace, "SELECT count(*) FROM slice")
    # Every flow: one start and one end with the same id, the end bound
    # to its enclosing slice; the start at the start of a slice on its
    # thread, the end inside a slice on its own.
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    flows = count(trace, "SELECT count(*) FROM flow")
    assert flows == 280  # the 10-step demo's launches, copies and waits
    assert len(starts) == len(ends) == flows
    assert set(starts) == set(ends)
    by_thread = {}
    for e in slices:
        by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for i, s in starts.items():
        f = ends[i]
        assert f["bp"] == "e"
        assert float(s["ts"]) <= float(f["ts"])
        assert any(x["ts"] == s["ts"] for x in by_thread[(s["pid"], s["tid"])])
        assert any(float(x["ts"]) <= float(f["ts"]) <=
                   float(x["ts"]) + float(x["dur"])
                   for x in by_thread[(f["pid"], f["tid"])])


def test_chrome_json_args_names_categories(demo):
    trace, events = demo
    cats = Counter(e["cat"] for e in events if e["ph"] == "X")
    assert cats["kernel"] == count(
        trace, "SELECT count(*) FROM gpu_slice WHERE render_stage_category = 2")
    assert cats["fill"] == count(
        trace, "SELECT count(*) FROM gpu_slice WHERE name = 'Memset'")
    assert cats["copy"] == count(
        trace, "SELECT count(*) FROM gpu_slice WHERE name GLOB 'Memcpy*'")
    assert cats["api"] > 0 and cats["stream"] == count(
        trace, "SELECT count(*) FROM gpu_slice")
    kernels = [e for e in events if e["ph"] == "X" and e["cat"] == "kernel"]
    for k in kernels:
        a = k["args"]
        for key in ("launch__grid_size_x", "launch__block_size_x",
                    "launch__registers_per_thread",
                    "launch__shared_mem_per_block_static",
                    "launch__shared_mem_per_block_dynamic", "correlation_id"):
            assert isinstance(a[key], int), (k["name"], key)
        assert a["stream"].startswith("Stream #")
    # A kernel's correlation id is its launch's.
    launches = {e["args"]["correlation_id"] for e in events
                if e["ph"] == "X" and e["name"] == "gp_sim_launch"}
    assert {k["args"]["correlation_id"] for k in kernels} == launches
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert "thread" not in names.values()
    assert names[(1000, 1000)] == "gpuperf" and procs[1000] == "gpuperf"
    assert "Sim Compute GPU #0" in procs.values()
    assert any(n.startswith("Device #0 Stream #") for n in names.values())
    for e in events:
        if e["ph"] == "X":
            assert (e["pid"], e["tid"]) in names and e["pid"] in procs


def test_csv_work_table(demo):
    trace, events = demo
    rows = list(csv.DictReader(io.StringIO(
        cli("export", trace, "--format", "csv", "--table", "work"))))
    assert len(rows) == count(trace, "SELECT count(*) FROM gpu_slice")
    for r in rows:
        if r["kind"] == "kernel":
            assert int(r["grid_x"]) > 0 and int(r["block_x"]) > 0
            assert int(r["registers"]) > 0 and r["shared_mem_static"] != ""
            assert int(r["correlation_id"]) > 0
            assert r["stream"].startswith("Stream #")
    # The same correlation ids as the JSON's kernels.
    want = sorted(e["args"]["correlation_id"] for e in events
                  if e["ph"] == "X" and e["cat"] == "kernel")
    assert sorted(int(r["correlation_id"]) for r in rows
                  if r["kind"] == "kernel") == want
    flows = list(csv.DictReader(io.StringIO(
        cli("export", trace, "--format", "csv", "--table", "flows"))))
    assert len(flows) == 280
    table = list(csv.DictReader(io.StringIO(
        cli("export", trace, "--format", "csv", "--table", "gpu_slice"))))
    assert len(table) == len(rows)

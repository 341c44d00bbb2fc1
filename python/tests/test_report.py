"""gpuperf.report() and gpuperf.diff() against the CLI's JSON.

Every table, every column, every cell of ``gpuperf report --format json``
and ``gpuperf diff --format json`` (the C suite checks those numbers
against SQL and against Perfetto's own trace processor) must come back
from Python, with the same filters. The significance hints are also
recomputed here from the two reports' kernel tables.
"""

import json
import math
import os
import subprocess

import pytest

import gpuperf

CLI = os.environ.get("GPUPERF_CLI")
BUILD = os.environ.get("GPUPERF_BUILD")

pytestmark = pytest.mark.skipif(
    not CLI or not BUILD,
    reason="GPUPERF_CLI or GPUPERF_BUILD is not set (run through `make test`)")


def cli(*args, check=True):
    return subprocess.run([CLI, *args], capture_output=True, text=True,
                          check=check, timeout=300)


def cli_json(*args, text_numbers=False):
    """The CLI's JSON; with text_numbers, numbers as the text it wrote."""
    out = cli(*args, "--format", "json").stdout
    if text_numbers:
        return json.loads(out, parse_int=str, parse_float=str)
    return json.loads(out)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    a, b = str(d / "a.pftrace"), str(d / "b.pftrace")
    cli("demo", "-q", "--steps", "8", "-o", a)
    cli("demo", "-q", "--steps", "5", "--gpus", "3", "-o", b)
    return a, b


def raw(v):
    """A number as the CLI's JSON writes it (report_fmt.c raw_num); the
    CLI's own text (text_numbers) passes unchanged."""
    if v is None or isinstance(v, str):
        return v
    v = float(v)
    if math.isnan(v):
        return None
    if v == math.floor(v) and abs(v) < 9e15:
        return "%.0f" % v
    return "%.6f" % v


def rows_of(frame):
    """Rows of a DataFrame or a Table as lists of Python values."""
    if hasattr(frame, "itertuples"):
        return [[None if isinstance(x, float) and math.isnan(x) else x
                 for x in r] for r in frame.itertuples(index=False)]
    return [list(r) for r in frame.rows()]


def columns_of(frame):
    return list(frame.columns)


def assert_table_equal(got, want, what):
    """got: DataFrame or Table; want: the CLI's list of row objects."""
    assert len(rows_of(got)) == len(want), what
    for i, (g, w) in enumerate(zip(rows_of(got), want)):
        assert columns_of(got) == list(w.keys()), what
        assert [raw(x) for x in g] == [raw(x) for x in w.values()], \
            f"{what} row {i}"


FILTERS = [
    ({}, []),
    ({"top": 3}, ["--top", "3"]),
    ({"gpu": 1}, ["--gpu", "1"]),
    ({"from_": "1ms", "to": "3ms"}, ["--from", "1ms", "--to", "3ms"]),
    ({"from_": 2000000, "to": "4ms"}, ["--from", "2000000", "--to", "4ms"]),
    ({"from_": "training step 2", "to": "training step 4"},
     ["--from", "training step 2", "--to", "training step 4"]),
    ({"process": "nosuchprocess"}, ["--process", "nosuchprocess"]),
    ({"process": "it's %s%n"}, ["--process", "it's %s%n"]),
]


@pytest.mark.parametrize("kw,args", FILTERS, ids=[str(a) for _, a in FILTERS])
def test_report_tables_equal_the_cli_json(traces, kw, args):
    for path in traces:
        want = cli_json("report", path, *args, text_numbers=True)
        got = gpuperf.report(path, **kw)
        assert got.trace == want["trace"]
        assert str(got.trace_bytes) == want["trace_bytes"]
        assert tuple(map(str, got.window)) == (want["window"]["start_ns"],
                                               want["window"]["end_ns"])
        assert list(got) == list(want["sections"])
        for tid, rows in want["sections"].items():
            assert_table_equal(got[tid], rows, f"{path} {args} {tid}")
            assert_table_equal(got.tables[tid], rows, f"{path} {args} {tid}")


def test_report_has_rows_and_types(traces):
    rep = gpuperf.report(traces[0], top=0)
    k = rep.tables["kernels"]
    assert k.title == "Kernels by total time"
    assert k.kinds[:3] == ["text", "int", "ns"]
    assert len(k) >= 4
    names = [r[0] for r in k.rows()]
    assert "matmul_kernel" in names
    assert all(isinstance(r[1], int) for r in k.rows())
    assert rep.tables["counters"].unit_column == "unit"


def test_report_dataframes(traces):
    pandas = pytest.importorskip("pandas")
    rep = gpuperf.report(traces[0])
    assert all(isinstance(df, pandas.DataFrame) for df in rep.values())
    df = rep["kernels"]
    assert list(df.columns)[:3] == ["kernel", "count", "total_ns"]
    assert df["share_pct"].sum() <= 100.0 + 1e-9


def test_report_of_an_open_trace_processor(traces):
    with gpuperf.TraceProcessor(traces[1]) as tp:
        got = gpuperf.report(tp, top=0)
        # The processor stays open and usable.
        assert tp.query("SELECT 1 AS x").rows() == [(1,)]
    want = gpuperf.report(traces[1], top=0)
    for tid in want:
        assert rows_of(got.tables[tid]) == rows_of(want.tables[tid])


def test_report_errors(traces, tmp_path):
    missing = str(tmp_path / "missing.pftrace")
    with pytest.raises(gpuperf.GpuperfError) as e:
        gpuperf.report(missing)
    cli_err = cli("report", missing, check=False).stderr.strip()
    assert str(e.value) in cli_err
    with pytest.raises(gpuperf.GpuperfError, match="no such range"):
        gpuperf.report(traces[0], from_="no such range")
    with pytest.raises(gpuperf.GpuperfError, match="gpu"):
        gpuperf.report(traces[0], gpu=-1)
    with pytest.raises(gpuperf.GpuperfError, match="outside the trace"):
        gpuperf.report(traces[0], from_="5s")
    with pytest.raises(gpuperf.GpuperfError, match="GPU 7 is not"):
        gpuperf.report(traces[0], gpu=7)
    with pytest.raises(gpuperf.GpuperfError, match="top"):
        gpuperf.report(traces[0], top=-1)
    with pytest.raises(gpuperf.GpuperfError, match="longer than"):
        gpuperf.report(traces[0], process="p" * 2000)
    tp = gpuperf.TraceProcessor(traces[0])
    tp.close()
    with pytest.raises(gpuperf.GpuperfError, match="closed"):
        gpuperf.report(tp)


def diff_rows_of_cli(a, b):
    want = cli_json("diff", a, b, text_numbers=True)
    return [[sec] + list(r.values())
            for sec, rows in want["sections"].items() for r in rows], want


@pytest.mark.parametrize("order", ["ab", "ba", "aa"])
def test_diff_equals_the_cli_json(traces, order):
    paths = {"a": traces[0], "b": traces[1]}
    a, b = paths[order[0]], paths[order[1]]
    want, raw_json = diff_rows_of_cli(a, b)
    got = gpuperf.diff(a, b)
    assert columns_of(got) == ["section"] + list(
        next(iter(r for rows in raw_json["sections"].values()
                  for r in rows)).keys())
    assert [[raw(x) for x in r] for r in rows_of(got)] == \
        [[raw(x) for x in r] for r in want]
    assert len(want) > 0
    if order == "aa":
        assert {r[-1] for r in rows_of(got) if r[2] == "mean"} <= {"same", ""}


def test_diff_hints_recomputed(traces):
    """The significance hint, recomputed from the two reports' kernels:
    a change under the minimum effect is "small", else the spread decides."""
    a, b = traces
    ka = {r["kernel"]: r for r in cli_json("report", a, "--top", "100000")
          ["sections"]["kernels"]}
    kb = {r["kernel"]: r for r in cli_json("report", b, "--top", "100000")
          ["sections"]["kernels"]}
    t = gpuperf.diff_table(a, b)
    seen = 0
    for sec, name, metric, unit, va, vb, change, hint in t.rows():
        if sec != "kernels" or metric != "mean":
            continue
        seen += 1
        if name not in ka:
            assert hint == "new in B"
            continue
        if name not in kb:
            assert hint == "gone in B"
            continue
        x, y = ka[name], kb[name]
        d = abs(y["mean_ns"] - x["mean_ns"])
        se = math.sqrt(x["stddev_ns"] ** 2 / x["count"] +
                       y["stddev_ns"] ** 2 / y["count"])
        # The minimum effect first (1% of A, 50 ns: the defaults), then
        # the spread.
        small = 100 * d / x["mean_ns"] < 1 or d < 50
        want = ("same" if d == 0 else "small" if small
                else "significant" if se == 0 or d / se >= 3
                else "noise" if d / se < 1 else "maybe")
        # The JSON rounds to 6 decimals: skip the knife edges.
        if se and d and min(abs(d / se - 1), abs(d / se - 3)) < 1e-3:
            continue
        assert hint == want, name
        assert change == pytest.approx(100 * (y["mean_ns"] - x["mean_ns"]) /
                                       x["mean_ns"], rel=1e-6, abs=1e-9)
    assert seen == len(set(ka) | set(kb))


def test_diff_without_pandas_is_a_table(traces):
    t = gpuperf.diff_table(traces[0], traces[1])
    assert t.columns[0] == "section" and t.columns[-2:] == ["change_pct", "hint"]
    assert {r[0] for r in t.rows()} <= {"run", "kernels", "copies", "queues",
                                        "counters"}
    assert len(t.result()) == len(t)


def test_help_is_useful():
    doc = gpuperf.__doc__ + gpuperf.report.__doc__ + gpuperf.diff.__doc__
    for word in ("report", "diff", "DataFrame", "significant", "from_"):
        assert word in doc
    assert "report" in gpuperf.__all__ and "diff" in gpuperf.__all__

"""The gpuperf Python package against the CLI it wraps.

Run by `make test` (test-python) with GPUPERF_BUILD and GPUPERF_CLI set;
expected values come from the CLI (`gpuperf query --format csv`), which
the C suite checks against Perfetto's own trace processor.
"""

import csv
import io
import os
import subprocess
import sys
import time

import pytest

import gpuperf

CLI = os.environ.get("GPUPERF_CLI")
BUILD = os.environ.get("GPUPERF_BUILD")

SEED_SQL = ("SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) AS mean "
            "FROM gpu_slice GROUP BY name ORDER BY total DESC, name")

pytestmark = pytest.mark.skipif(
    not CLI or not BUILD,
    reason="GPUPERF_CLI or GPUPERF_BUILD is not set (run through `make test`)")


def cli(*args, check=True, **kw):
    return subprocess.run([CLI, *args], capture_output=True, text=True,
                          check=check, timeout=300, **kw)


def cli_csv(path, sql):
    out = cli("query", path, sql, "--format", "csv").stdout
    return list(csv.reader(io.StringIO(out)))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("demo") / "demo.pftrace")
    cli("demo", "-q", "--steps", "5", "-o", path)
    return path


def cell(v):
    """A value as the CLI's CSV writes it."""
    if v is None:
        return "[NULL]"
    if isinstance(v, float):
        return "%f" % v
    return str(v)


def test_seed_query_equals_the_cli(demo):
    with gpuperf.TraceProcessor(demo) as tp:
        res = tp.query(SEED_SQL)
    want = cli_csv(demo, SEED_SQL)
    assert want[0] == res.columns
    assert [[cell(v) for v in r] for r in res.rows()] == want[1:]
    assert len(res) > 0


def test_rows_are_named_tuples(demo):
    tp = gpuperf.TraceProcessor(demo)
    rows = list(tp.query("SELECT count(*) AS n, 1.5 AS x, 'a' AS s, NULL AS z"))
    assert rows[0].n > 0
    assert rows[0].x == 1.5 and rows[0].s == "a" and rows[0].z is None
    tp.close()
    with pytest.raises(gpuperf.GpuperfError, match="closed"):
        tp.query("SELECT 1")


def test_dataframe(demo):
    pandas = pytest.importorskip("pandas")
    df = gpuperf.TraceProcessor(demo).query(
        "select count(*) as n from gpu_slice").as_pandas_dataframe()
    assert isinstance(df, pandas.DataFrame)
    assert int(df["n"][0]) == int(cli_csv(demo, "select count(*) as n from gpu_slice")[1][0])


def test_perfetto_sql_modules(demo):
    tp = gpuperf.TraceProcessor(demo)
    sql = ("CREATE PERFETTO MACRO twice(x Expr) RETURNS Expr AS $x * 2; "
           "SELECT twice!(count(*)) AS n FROM gpu_slice")
    assert tp.query(sql).rows() == [(2 * tp.query(
        "SELECT count(*) FROM gpu_slice").rows()[0][0],)]


def test_errors_carry_the_clis_message(demo, tmp_path):
    tp = gpuperf.TraceProcessor(demo)
    with pytest.raises(gpuperf.GpuperfError) as e:
        tp.query("SELECT * FROM no_such_table")
    r = cli("query", demo, "SELECT * FROM no_such_table", check=False)
    assert r.returncode != 0 and str(e.value) in r.stderr
    bad = tmp_path / "bad.pftrace"
    bad.write_bytes(b"\x0a\xff\xff\xff\x0f not a trace")
    with pytest.raises(gpuperf.GpuperfError) as e2:
        gpuperf.TraceProcessor(str(bad))
    r2 = cli("query", str(bad), "SELECT 1", check=False)
    assert r2.returncode != 0 and str(e2.value) in r2.stderr
    assert e2.value.offset is not None


def test_batch_over_20_traces(tmp_path):
    paths = []
    for i in range(20):
        p = tmp_path / f"t{i:02d}.pftrace"
        cli("demo", "-q", "--steps", str(1 + i % 3), "-o", str(p))
        paths.append(str(p))
    out = gpuperf.batch(str(tmp_path / "*.pftrace"),
                        "SELECT count(*) AS n FROM gpu_slice", jobs=4)
    rows = list(zip(out["trace"], out["n"])) if hasattr(out, "columns") and \
        not isinstance(out, gpuperf.QueryResult) else [tuple(r) for r in out]
    assert [r[0] for r in rows] == sorted(paths)
    for path, n in rows:
        assert int(n) == int(cli_csv(path, "SELECT count(*) AS n FROM gpu_slice")[1][0])
    with pytest.raises(gpuperf.GpuperfError, match="no trace matches"):
        gpuperf.batch(str(tmp_path / "none-*.pftrace"), "SELECT 1")


def test_ranges_of_a_recorded_python_program(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import gpuperf\n"
        "@gpuperf.range()\n"
        "def step():\n"
        "    with gpuperf.range('inner'):\n"
        "        pass\n"
        "with gpuperf.range('epoch'):\n"
        "    for _ in range(3):\n"
        "        step()\n"
        "gpuperf.instant('done')\n")
    trace = tmp_path / "py.pftrace"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(gpuperf.__file__))] +
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    cli("record", "-q", "-o", str(trace), "--", sys.executable, str(prog), env=env)
    got = cli_csv(str(trace), "SELECT name, count(*) AS n FROM slice WHERE name "
                  "IN ('epoch', 'step', 'inner', 'done') GROUP BY 1 ORDER BY 1")
    assert got[1:] == [["done", "1"], ["epoch", "1"], ["inner", "3"], ["step", "3"]]
    depth = cli_csv(str(trace), "SELECT max(depth) FROM slice WHERE name = 'inner'")
    assert depth[1][0] == "2"


def test_a_range_costs_little():
    # Not a timing assertion a loaded machine could break: the figure is
    # printed (bench: python/bench_range.py); this checks ranges balance.
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        with gpuperf.range("r"):
            pass
    per = (time.perf_counter() - t) / n
    print(f"gpuperf.range: {per * 1e6:.2f} us per range (not recording)")
    assert per > 0

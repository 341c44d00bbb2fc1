"""gpuperf from Python.

Read Perfetto traces with gpuperf's trace processor, and mark ranges in
Python programs that ``gpuperf record`` records::

    import gpuperf
    tp = gpuperf.TraceProcessor("demo.pftrace")
    df = tp.query("SELECT name, count(*) AS n FROM gpu_slice GROUP BY 1")
    print(df.as_pandas_dataframe())

    with gpuperf.range("epoch"):
        train()

The tables of ``gpuperf report`` and ``gpuperf diff``, computed by the
library, as DataFrames::

    tables = gpuperf.report("demo.pftrace", top=5)
    print(tables["kernels"])          # kernel, count, total_ns, ...
    changes = gpuperf.diff("before.pftrace", "after.pftrace")
    print(changes[changes.hint == "significant"])

SQL is PerfettoSQL, as in ``gpuperf query`` (docs/sql.md): tables and views
have Perfetto's names (``gpu_slice``, ``counter``, ``track``, ...).
pandas is optional: rows iterate as named tuples without it.
"""

from __future__ import annotations

import builtins
import collections
import concurrent.futures
import ctypes
import functools
import glob as _glob
import os
import re
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar

from ._lib import GpuperfError, TpError, lib, raise_for
from ._report import Report, Table, diff, diff_table, report

__all__ = [
    "GpuperfError",
    "QueryResult",
    "Report",
    "Table",
    "TraceProcessor",
    "batch",
    "diff",
    "diff_table",
    "instant",
    "range",
    "report",
    "version",
]

_NULL, _INT, _REAL, _TEXT, _BLOB = 0, 1, 2, 3, 4


def version() -> str:
    """The version of the libgpuperf.so in use."""
    return lib.gp_version().decode()


def _field(name: str, i: int, seen: set) -> str:
    """A valid, unique namedtuple field for column name."""
    f = re.sub(r"\W", "_", name) or f"c{i}"
    if f[0].isdigit() or f.startswith("_"):
        f = "c_" + f.lstrip("_")
    base, k = f, 1
    while f in seen:
        k += 1
        f = f"{base}_{k}"
    seen.add(f)
    return f


class QueryResult:
    """The rows of one query: iterate them as named tuples, or convert.

    The columns keep their SQL names in :attr:`columns`; the named tuples'
    fields are those names made valid Python identifiers.
    """

    def __init__(self, columns: List[str], rows: List[Tuple[Any, ...]]):
        self.columns = columns
        seen: set = set()
        self._Row = collections.namedtuple(
            "Row", [_field(c, i, seen) for i, c in enumerate(columns)])
        self._rows = rows

    def __iter__(self) -> Iterator[Tuple[Any, ...]]:
        return (self._Row(*r) for r in self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"<QueryResult {len(self._rows)} rows: {', '.join(self.columns)}>"

    def rows(self) -> List[Tuple[Any, ...]]:
        """The rows as plain tuples."""
        return list(self._rows)

    def as_pandas_dataframe(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas
        except ImportError as e:
            raise GpuperfError(
                "as_pandas_dataframe() needs pandas (Debian: python3-pandas; "
                "pip install pandas)") from e
        return pandas.DataFrame.from_records(self._rows, columns=self.columns)

    def as_arrow(self):
        """The rows as a pyarrow Table (needs pyarrow)."""
        try:
            import pyarrow
        except ImportError as e:
            raise GpuperfError("as_arrow() needs pyarrow (pip install pyarrow)") from e
        cols = list(zip(*self._rows)) if self._rows else [[] for _ in self.columns]
        return pyarrow.table({c: list(v) for c, v in zip(self.columns, cols)})


class TraceProcessor:
    """A trace imported once, queried as often as wanted.

    ``TraceProcessor(path)`` imports the trace (any Perfetto trace; errors
    raise :class:`GpuperfError` with the message ``gpuperf query`` prints).
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str):
        self.path = os.fspath(path)
        self._tp = ctypes.c_void_p()
        err = TpError()
        rc = lib.gp_tp_open(self.path.encode(), None, ctypes.byref(self._tp),
                            ctypes.byref(err))
        if rc != 0:
            raise_for(rc, err)

    @property
    def warning(self) -> Optional[str]:
        """What the import warned about (a truncated file, ...), or None."""
        w = lib.gp_tp_warning(self._tp) if self._tp else None
        return w.decode("utf-8", "replace") if w else None

    def query(self, sql: str) -> QueryResult:
        """Runs sql (one or more statements; the last one's rows are
        returned), PerfettoSQL included (INCLUDE PERFETTO MODULE, macros)."""
        if not self._tp:
            raise GpuperfError(f"{self.path}: the trace processor is closed")
        rows = ctypes.c_void_p()
        err = TpError()
        rc = lib.gp_tp_query(self._tp, sql.encode(), ctypes.byref(rows),
                             ctypes.byref(err))
        if rc != 0:
            raise_for(rc, err)
        try:
            n = lib.gp_tp_rows_columns(rows)
            columns = [lib.gp_tp_rows_name(rows, i).decode("utf-8", "replace")
                       for i in builtins.range(n)]
            out: List[Tuple[Any, ...]] = []
            while True:
                rc = lib.gp_tp_rows_next(rows, ctypes.byref(err))
                if rc == 0:
                    break
                if rc < 0:
                    raise_for(rc, err)
                out.append(tuple(self._cell(rows, i) for i in builtins.range(n)))
        finally:
            lib.gp_tp_rows_destroy(rows)
        return QueryResult(columns, out)

    @staticmethod
    def _cell(rows, i: int) -> Any:
        t = lib.gp_tp_rows_type(rows, i)
        if t == _INT:
            return lib.gp_tp_rows_int(rows, i)
        if t == _REAL:
            return lib.gp_tp_rows_real(rows, i)
        if t == _TEXT:
            p = lib.gp_tp_rows_text(rows, i)
            return ctypes.string_at(p).decode("utf-8", "replace") if p else None
        if t == _BLOB:
            size = ctypes.c_size_t()
            p = lib.gp_tp_rows_blob(rows, i, ctypes.byref(size))
            return ctypes.string_at(p, size.value) if p else b""
        return None

    def close(self) -> None:
        """Frees the imported tables."""
        if self._tp:
            lib.gp_tp_close(self._tp)
            self._tp = ctypes.c_void_p()

    def __enter__(self) -> "TraceProcessor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def batch(paths: Any, sql: str, jobs: Optional[int] = None,
          path_column: str = "trace"):
    """Runs sql on many traces and returns one table of all their rows.

    ``paths`` is a glob pattern or a sequence of paths. Each trace is
    imported and queried on its own (``jobs`` at once, by default the
    number of CPUs; the library runs without the GIL). The result is a
    pandas DataFrame with the trace's path in column ``path_column`` first,
    or, without pandas, a :class:`QueryResult`. Traces are in sorted path
    order; a trace that fails raises :class:`GpuperfError` naming it.
    """
    if isinstance(paths, (str, os.PathLike)):
        files = sorted(_glob.glob(os.fspath(paths)))
        if not files:
            raise GpuperfError(f"no trace matches {os.fspath(paths)}")
    else:
        files = [os.fspath(p) for p in paths]

    def one(path: str) -> QueryResult:
        with TraceProcessor(path) as tp:
            return tp.query(sql)

    jobs = jobs or os.cpu_count() or 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        results = list(ex.map(one, files))
    columns = [path_column] + (results[0].columns if results else [])
    rows = [(f,) + r for f, res in zip(files, results) for r in res.rows()]
    out = QueryResult(columns, rows)
    try:
        return out.as_pandas_dataframe()
    except GpuperfError:
        return out


F = TypeVar("F", bound=Callable[..., Any])


class range:  # noqa: N801 - named like the C API's ranges
    """A range of the calling thread, in the trace ``gpuperf record`` writes.

    As a context manager::

        with gpuperf.range("load data"):
            ...

    or as a decorator (the range is named after the function unless a name
    is given)::

        @gpuperf.range()
        def step(): ...

    Ranges nest, and become user ranges in the recording, as NVTX ranges do
    in Nsight; outside a recording they cost a call and record nothing.
    """

    def __init__(self, name: Optional[str] = None, domain: Optional[str] = None):
        self.name = name
        self.domain = domain

    def __enter__(self) -> "range":
        rc = lib.gp_range_push(self.domain.encode() if self.domain else None,
                               (self.name or "range").encode())
        if rc != 0:
            raise GpuperfError(lib.gp_strerror(rc).decode(), rc)
        return self

    def __exit__(self, *exc) -> None:
        lib.gp_range_pop()

    def __call__(self, fn: F) -> F:
        name = self.name or getattr(fn, "__qualname__", None) or "function"
        domain = self.domain

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with range(name, domain):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def instant(name: str, domain: Optional[str] = None) -> None:
    """Marks an instant in the recording."""
    lib.gp_marker_instant(domain.encode() if domain else None, name.encode())

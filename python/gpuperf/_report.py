"""The tables of ``gpuperf report`` and ``gpuperf diff``, from the library.

The tables are computed by libgpuperf's report layer (``gpuperf/report.h``),
the same code that ``gpuperf report`` prints, so a DataFrame here holds the
numbers of ``gpuperf report --format json``: durations in ns, bytes,
percent, bytes per second, under the same column names (``total_ns``).
"""

from __future__ import annotations

import ctypes
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._lib import GpuperfError, TpError, lib, raise_for

# gp_report_kind
TEXT, INT, NS, BYTES, PCT, BW, VALUE = range(7)
KIND_NAMES = ("text", "int", "ns", "bytes", "pct", "bw", "value")

_ENOENT = -2


class _Filter(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("top", ctypes.c_uint32),
        ("from_", ctypes.c_int64),
        ("to", ctypes.c_int64),
        ("gpu", ctypes.c_int64),
        ("process", ctypes.c_char_p),
    ]


class _Cell(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double), ("text", ctypes.c_void_p)]


c_report = ctypes.c_void_p
c_table = ctypes.c_void_p
_err = ctypes.POINTER(TpError)


def _declare(name: str, restype: Any, *argtypes: Any) -> None:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_declare("gp_report_filter_init", None, ctypes.POINTER(_Filter))
_declare("gp_report_build", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
         ctypes.POINTER(_Filter), ctypes.POINTER(c_report), _err)
_declare("gp_report_time", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
         ctypes.c_bool, ctypes.POINTER(ctypes.c_int64), _err)
_declare("gp_report_diff", ctypes.c_int, c_report, c_report,
         ctypes.POINTER(c_report))
_declare("gp_report_destroy", None, c_report)
_declare("gp_report_name", ctypes.c_void_p, c_report)
_declare("gp_report_trace_bytes", ctypes.c_uint64, c_report)
_declare("gp_report_window", None, c_report, ctypes.POINTER(ctypes.c_int64),
         ctypes.POINTER(ctypes.c_int64))
_declare("gp_report_table_count", ctypes.c_size_t, c_report)
_declare("gp_report_table_at", c_table, c_report, ctypes.c_size_t)
_declare("gp_report_table_id", ctypes.c_char_p, c_table)
_declare("gp_report_table_title", ctypes.c_char_p, c_table)
_declare("gp_report_table_note", ctypes.c_char_p, c_table)
_declare("gp_report_table_columns", ctypes.c_int, c_table)
_declare("gp_report_column_id", ctypes.c_char_p, c_table, ctypes.c_int)
_declare("gp_report_column_kind", ctypes.c_int, c_table, ctypes.c_int)
_declare("gp_report_table_unit_column", ctypes.c_int, c_table)
_declare("gp_report_table_rows", ctypes.c_size_t, c_table)
_declare("gp_report_table_row", ctypes.POINTER(_Cell), c_table,
         ctypes.c_size_t)


def _text(p: Optional[int]) -> str:
    return ctypes.string_at(p).decode("utf-8", "replace") if p else ""


def _value(kind: int, cell: _Cell) -> Any:
    """A cell as Python: str, int (whole counts, ns, bytes), float, or None
    for a missing number."""
    if kind == TEXT:
        return _text(cell.text)
    v = cell.value
    if math.isnan(v):
        return None
    if kind in (INT, NS, BYTES) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


class Table:
    """One table of a report: its id, title, note, column ids and kinds,
    and rows of Python values (see :func:`report`)."""

    def __init__(self, id: str, title: str, note: Optional[str],
                 columns: List[str], kinds: List[str], unit_column: Optional[str],
                 rows: List[Tuple[Any, ...]]):
        self.id = id
        self.title = title
        self.note = note
        self.columns = columns
        self.kinds = kinds
        self.unit_column = unit_column
        self._rows = rows

    def rows(self) -> List[Tuple[Any, ...]]:
        """The rows as plain tuples, in the order gpuperf report prints."""
        return list(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"<Table {self.id}: {len(self._rows)} rows: {', '.join(self.columns)}>"

    def result(self):
        """The rows as a :class:`gpuperf.QueryResult` (named tuples)."""
        from . import QueryResult
        return QueryResult(list(self.columns), list(self._rows))

    def as_pandas_dataframe(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        return self.result().as_pandas_dataframe()


def _table(t: int) -> Table:
    n = lib.gp_report_table_columns(t)
    cols = [lib.gp_report_column_id(t, c).decode() for c in range(n)]
    kinds = [lib.gp_report_column_kind(t, c) for c in range(n)]
    rows = []
    for i in range(lib.gp_report_table_rows(t)):
        cells = lib.gp_report_table_row(t, i)
        rows.append(tuple(_value(kinds[c], cells[c]) for c in range(n)))
    note = lib.gp_report_table_note(t)
    unit = lib.gp_report_table_unit_column(t)
    return Table(lib.gp_report_table_id(t).decode(),
                 lib.gp_report_table_title(t).decode(),
                 note.decode() if note else None, cols,
                 [KIND_NAMES[k] if 0 <= k < len(KIND_NAMES) else "?" for k in kinds],
                 cols[unit] if unit >= 0 else None, rows)


class Report(dict):
    """A report: table id -> DataFrame (a :class:`Table` without pandas),
    in the order ``gpuperf report`` prints them.

    Attributes: ``trace`` (the name it was built with), ``trace_bytes``,
    ``window`` (start and end in trace ns) and ``tables`` (id ->
    :class:`Table`, with titles, notes and column kinds).
    """

    trace: str
    trace_bytes: int
    window: Tuple[int, int]
    tables: Dict[str, Table]


def _collect(r: int) -> Tuple[str, int, Tuple[int, int], List[Table]]:
    start, end = ctypes.c_int64(), ctypes.c_int64()
    lib.gp_report_window(r, ctypes.byref(start), ctypes.byref(end))
    tables = [_table(lib.gp_report_table_at(r, i))
              for i in range(lib.gp_report_table_count(r))]
    return (_text(lib.gp_report_name(r)), int(lib.gp_report_trace_bytes(r)),
            (start.value, end.value), tables)


def _frames(tables: List[Table]) -> Dict[str, Any]:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return {t.id: t for t in tables}
    return {t.id: t.as_pandas_dataframe() for t in tables}


Bound = Union[str, int, None]


def _bound(tp: Any, spec: Bound, end: bool, default: int) -> int:
    if spec is None:
        return default
    if isinstance(spec, bool) or not isinstance(spec, (str, int)):
        raise GpuperfError(f"a window bound is a str or an int, not {spec!r}")
    ns = ctypes.c_int64()
    err = TpError()
    rc = lib.gp_report_time(tp, str(spec).encode(), end, ctypes.byref(ns),
                            ctypes.byref(err))
    if rc != 0:
        raise_for(rc, err)
    return ns.value


def _build(tp: Any, name: str, top: int, from_: Bound, to: Bound,
           process: Union[str, int, None], gpu: Optional[int]) -> int:
    """A new gp_report* of tp (free with gp_report_destroy)."""
    if not isinstance(top, int) or not 0 <= top < 2**32:
        raise GpuperfError(f"top must be an int from 0 (all rows), not {top!r}")
    if gpu is not None and (not isinstance(gpu, int) or gpu < 0):
        raise GpuperfError(f"gpu must be a GPU number (int >= 0), not {gpu!r}")
    f = _Filter()
    lib.gp_report_filter_init(ctypes.byref(f))
    f.top = top
    f.from_ = _bound(tp, from_, False, f.from_)
    f.to = _bound(tp, to, True, f.to)
    f.gpu = -1 if gpu is None else gpu
    proc = None if process is None else str(process).encode()
    f.process = proc
    r = c_report()
    err = TpError()
    rc = lib.gp_report_build(tp, name.encode(), ctypes.byref(f),
                             ctypes.byref(r), ctypes.byref(err))
    if rc != 0:
        raise_for(rc, err)
    return r.value


def _open(trace: Any):
    """(a TraceProcessor, whether we opened it) for a path or a processor."""
    from . import TraceProcessor
    if isinstance(trace, TraceProcessor):
        if not trace._tp:
            raise GpuperfError(f"{trace.path}: the trace processor is closed")
        return trace, False
    return TraceProcessor(os.fspath(trace)), True


def report(trace: Any, *, top: int = 0, from_: Bound = None, to: Bound = None,
           process: Union[str, int, None] = None,
           gpu: Optional[int] = None) -> Report:
    """The tables of ``gpuperf report`` for a trace.

    ``trace`` is a path or an open :class:`gpuperf.TraceProcessor`. The
    filters are those of the command line: ``top`` rows per ranking
    (kernels, API calls, ranges; 0, the default: all, as the CLI's JSON
    and CSV), the window ``from_``/``to`` (a
    time after the trace start such as ``"1.5ms"`` or an int of ns, or the
    name of a user range: from its start, to its end), a ``process`` (pid
    or name) and a ``gpu`` number.

    Returns a :class:`Report`: a dict from table id (``gpus``, ``queues``,
    ``streams``, ``kernels``, ``copies``, ``api``, ``ranges``,
    ``counters``, ``overhead``, ``losses``) to a pandas DataFrame with the
    columns of ``gpuperf report --format json`` (raw ns, bytes, percent),
    or to a :class:`Table` (``.rows()``) without pandas. A missing number
    is None (NaN in a DataFrame). Errors raise :class:`GpuperfError`.
    """
    tp, opened = _open(trace)
    try:
        r = _build(tp._tp, tp.path, top, from_, to, process, gpu)
        try:
            name, size, window, tables = _collect(r)
        finally:
            lib.gp_report_destroy(r)
    finally:
        if opened:
            tp.close()
    out = Report(_frames(tables))
    out.trace, out.trace_bytes, out.window = name, size, window
    out.tables = {t.id: t for t in tables}
    return out


DIFF_COLUMNS = ["section", "name", "metric", "unit", "a", "b", "change_pct",
                "hint"]


def diff_table(a: Any, b: Any) -> Table:
    """The rows of :func:`diff` as a :class:`Table` (no pandas needed)."""
    reports: List[int] = []
    try:
        for t in (a, b):
            tp, opened = _open(t)
            try:
                reports.append(_build(tp._tp, tp.path, 0, None, None, None, None))
            finally:
                if opened:
                    tp.close()
        d = c_report()
        rc = lib.gp_report_diff(reports[0], reports[1], ctypes.byref(d))
        if rc != 0:
            raise GpuperfError(lib.gp_strerror(rc).decode(), rc)
        try:
            _, _, _, tables = _collect(d.value)
        finally:
            lib.gp_report_destroy(d.value)
    finally:
        for r in reports:
            lib.gp_report_destroy(r)
    rows = [(t.id,) + r for t in tables for r in t.rows()]
    kinds = ["text"] + (tables[0].kinds if tables else [])
    return Table("diff", "gpuperf diff", None, list(DIFF_COLUMNS), kinds,
                 "unit", rows)


def diff(a: Any, b: Any):
    """What changed from trace ``a`` to trace ``b``, as ``gpuperf diff``.

    ``a`` and ``b`` are paths or open :class:`gpuperf.TraceProcessor`\\ s.
    Every row of both reports is compared (no top-N cut); rows are matched
    by key: kernels by name, copies by kind, queues by GPU and queue,
    counters by name and GPU. One row per metric, with the columns
    ``section`` (run, kernels, copies, queues, counters), ``name``,
    ``metric`` (time, count, total, mean, bytes, busy), ``unit``, ``a``,
    ``b``, ``change_pct`` (None where ``a`` is 0 or a side is missing) and
    ``hint``: ``small`` for a change under 1% of A or, for a time, 50 ns
    (never significant); past that, for a kernel's mean or total,
    ``significant`` when the change is 3 or more standard errors (or there
    is no spread at all), ``maybe`` from 1, ``noise`` under 1; ``changed``
    for other metrics; ``same`` for no change; ``new in B`` / ``gone in
    B`` for a key on one side only.

    Returns a pandas DataFrame, or a :class:`Table` without pandas.
    """
    t = diff_table(a, b)
    try:
        import pandas  # noqa: F401
    except ImportError:
        return t
    return t.as_pandas_dataframe()


__all__: Sequence[str] = ["Report", "Table", "report", "diff", "diff_table"]

"""Finding libgpuperf.so and declaring the C functions the package calls.

The library is looked for, in order:

1. ``$GPUPERF_LIB`` (a path to ``libgpuperf.so.0`` or ``libgpuperf.so``);
2. the copy already loaded in the process (``gpuperf record`` runs a
   program with it, and its ranges must go to that copy);
3. ``$GPUPERF_BUILD`` (a build directory, as the test suite sets it);
4. ``build/`` of the source tree the package is imported from
   (``PYTHONPATH=python`` in a checkout);
5. the ``libdir`` that ``pkg-config gpuperf`` names (an installed gpuperf);
6. the dynamic linker's own search (``ldconfig``, ``LD_LIBRARY_PATH``).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from typing import List, Optional

SONAME = "libgpuperf.so.0"


class GpuperfError(Exception):
    """An error from gpuperf's library, with the message the CLI prints."""

    def __init__(self, message: str, code: int = 0, offset: Optional[int] = None):
        super().__init__(message)
        self.code = code
        self.offset = offset


class TpError(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_int),
        ("offset", ctypes.c_uint64),
        ("message", ctypes.c_char * 512),
    ]


def _candidates() -> List[str]:
    out: List[str] = []
    env = os.environ.get("GPUPERF_LIB")
    if env:
        out.append(env)
    build = os.environ.get("GPUPERF_BUILD")
    if build:
        out.append(os.path.join(build, SONAME))
    tree = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "build", SONAME)
    if os.path.exists(tree):
        out.append(tree)
    try:  # the checkout an installed package was built from
        from ._built_from import BUILD
        out.append(os.path.join(BUILD, SONAME))
    except ImportError:
        pass
    pkg = shutil.which("pkg-config")
    if pkg:
        try:
            libdir = subprocess.run(
                [pkg, "--variable=libdir", "gpuperf"],
                capture_output=True, text=True, timeout=10,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            out.append(os.path.join(libdir, SONAME))
    out.append(SONAME)
    return out


def _load() -> ctypes.CDLL:
    env = os.environ.get("GPUPERF_LIB")
    if not env:
        # The copy a recorded program already has, if any.
        try:
            return ctypes.CDLL(SONAME, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        except OSError:
            pass
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path, mode=os.RTLD_GLOBAL)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise GpuperfError(
        "cannot load libgpuperf.so: " + "; ".join(errors) +
        " (set GPUPERF_LIB to its path, or install gpuperf: make install)")


lib = _load()

c_tp = ctypes.c_void_p
c_rows = ctypes.c_void_p

lib.gp_version.restype = ctypes.c_char_p
lib.gp_version.argtypes = []
lib.gp_strerror.restype = ctypes.c_char_p
lib.gp_strerror.argtypes = [ctypes.c_int]
lib.gp_tp_open.restype = ctypes.c_int
lib.gp_tp_open.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                           ctypes.POINTER(c_tp), ctypes.POINTER(TpError)]
lib.gp_tp_close.restype = None
lib.gp_tp_close.argtypes = [c_tp]
lib.gp_tp_warning.restype = ctypes.c_char_p
lib.gp_tp_warning.argtypes = [c_tp]
lib.gp_tp_query.restype = ctypes.c_int
lib.gp_tp_query.argtypes = [c_tp, ctypes.c_char_p, ctypes.POINTER(c_rows),
                            ctypes.POINTER(TpError)]
lib.gp_tp_rows_next.restype = ctypes.c_int
lib.gp_tp_rows_next.argtypes = [c_rows, ctypes.POINTER(TpError)]
lib.gp_tp_rows_columns.restype = ctypes.c_int
lib.gp_tp_rows_columns.argtypes = [c_rows]
lib.gp_tp_rows_name.restype = ctypes.c_char_p
lib.gp_tp_rows_name.argtypes = [c_rows, ctypes.c_int]
lib.gp_tp_rows_type.restype = ctypes.c_int
lib.gp_tp_rows_type.argtypes = [c_rows, ctypes.c_int]
lib.gp_tp_rows_int.restype = ctypes.c_int64
lib.gp_tp_rows_int.argtypes = [c_rows, ctypes.c_int]
lib.gp_tp_rows_real.restype = ctypes.c_double
lib.gp_tp_rows_real.argtypes = [c_rows, ctypes.c_int]
lib.gp_tp_rows_text.restype = ctypes.c_void_p  # bytes decoded by hand
lib.gp_tp_rows_text.argtypes = [c_rows, ctypes.c_int]
lib.gp_tp_rows_blob.restype = ctypes.c_void_p
lib.gp_tp_rows_blob.argtypes = [c_rows, ctypes.c_int,
                                ctypes.POINTER(ctypes.c_size_t)]
lib.gp_tp_rows_destroy.restype = None
lib.gp_tp_rows_destroy.argtypes = [c_rows]
lib.gp_range_push.restype = ctypes.c_int
lib.gp_range_push.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
lib.gp_range_pop.restype = ctypes.c_int
lib.gp_range_pop.argtypes = []
lib.gp_marker_instant.restype = ctypes.c_int
lib.gp_marker_instant.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


def raise_for(rc: int, err: TpError) -> None:
    """Raises GpuperfError for a failed call (rc != 0)."""
    msg = err.message.decode("utf-8", "replace")
    if not msg:
        msg = (lib.gp_strerror(rc) or b"error").decode("utf-8", "replace")
    off = None if err.offset == 2**64 - 1 else int(err.offset)
    raise GpuperfError(msg, rc, off)

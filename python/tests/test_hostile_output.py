"""Output a terminal and a JSON parser can trust (issue 35 D9, D10).

A trace whose kernel and counter names hold terminal escapes (ESC, BEL, a
C1 CSI) and a byte that is not UTF-8, whose counter says +Infinity and
-Infinity, saved under a file name with ESC and BEL in it, goes through
every command that reads a trace: query (one trace and a batch), report
in each format, export, diff and merge. On a pseudo-terminal (stdout and
stderr both) no ESC or BEL byte may come out; every JSON output must be
read by Python's json module (strict UTF-8, no bare inf), with the
infinities as null.

The trace is protobuf written here by hand, so that nothing of gpuperf's
writer is trusted to make it.
"""

import json
import math
import os
import pty
import struct
import subprocess

import pytest

CLI = os.environ.get("GPUPERF_CLI")

pytestmark = pytest.mark.skipif(
    not CLI, reason="GPUPERF_CLI is not set (run through `make test`)")

EVIL = b"ev\x1b]0;pwned\x07\x1b[2Jil\xc2\x9b\xff"  # OSC, BEL, CSI, C1, not UTF-8


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def f_int(field, v):
    return varint(field << 3) + varint(v)


def f_bytes(field, b):
    return varint(field << 3 | 2) + varint(len(b)) + b


def f_double(field, d):
    return varint(field << 3 | 1) + struct.pack("<d", d)


def packet(ts, body):
    # TracePacket: timestamp 8, trusted_packet_sequence_id 10.
    return f_bytes(1, f_int(8, ts) + f_int(10, 1) + body)


def hostile_trace():
    """Two kernels named EVIL on GPU 0, and a counter named EVIL whose
    samples are 0.5, +Infinity, -Infinity and 1.5 (as Perfetto's, the
    importer keeps the first sample of a GPU counter only as the start of
    the next interval)."""
    # clock_snapshot (6): clocks 1 {clock_id 1, timestamp 2}: BOOTTIME (6)
    # with REALTIME (1), for merge.
    snap = (f_bytes(1, f_int(1, 6) + f_int(2, 1000)) +
            f_bytes(1, f_int(1, 1) + f_int(2, 1_700_000_000_000_000_000)))
    out = packet(1000, f_bytes(6, snap))
    for i in range(2):
        # gpu_render_stage_event (53): event_id 1, duration 2, hw_queue_id
        # 3, stage_id 4, gpu_id 11, name 17.
        stage = (f_int(1, i + 1) + f_int(2, 500) + f_int(3, 0) + f_int(4, 0) +
                 f_int(11, 0) + f_bytes(17, EVIL))
        out += packet(1000 + 1000 * i, f_bytes(53, stage))
    # gpu_counter_event (52): counter_descriptor 1 (specs 1: counter_id 1,
    # name 2), counters 2 (counter_id 1, double_value 3), gpu_id 3.
    spec = f_bytes(1, f_int(1, 7) + f_bytes(2, EVIL))
    for k, v in enumerate([0.5, math.inf, -math.inf, 1.5]):
        body = f_bytes(1, spec) if k == 0 else b""
        body += f_bytes(2, f_int(1, 7) + f_double(3, v)) + f_int(3, 0)
        out += packet(1000 + 500 * k, f_bytes(52, body))
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    sub = os.path.join(str(d), "runs\x1b[31m\x07")
    os.mkdir(sub)
    trace = os.path.join(sub, "t\x1b]0;x\x07.pftrace")
    with open(trace, "wb") as f:
        f.write(hostile_trace())
    # A second trace for the batch, and a file that is no trace: its
    # FAILED line names it.
    with open(os.path.join(sub, "u\x1b[2J.pftrace"), "wb") as f:
        f.write(hostile_trace())
    with open(os.path.join(sub, "zz\x07bad.pftrace"), "wb") as f:
        f.write(b"\x1b[2Jnot a trace\x07")
    return str(d), sub, trace


def on_tty(args):
    """Runs the CLI with stdout and stderr on a pseudo-terminal; returns
    the exit status and every byte it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen([CLI, *args], stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=slave)
    os.close(slave)
    out = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=300), bytes(out)


def commands(d, sub, trace):
    batch = os.path.join(sub, "*.pftrace")
    merged = os.path.join(d, "m\x1b[1m.pftrace")
    return [
        ["query", trace],
        ["query", trace, "SELECT name FROM gpu_slice"],
        ["query", trace, "--format", "csv", "SELECT name FROM gpu_slice"],
        ["query", trace, "--format", "json", "SELECT name FROM gpu_slice"],
        ["query", batch, "--keep-going", "SELECT name FROM gpu_slice"],
        ["query", batch, "--keep-going", "--format", "csv",
         "SELECT name FROM gpu_slice"],
        ["query", batch, "--keep-going", "--format", "json",
         "SELECT name FROM gpu_slice"],
        ["report", trace],
        ["report", trace, "--format", "csv"],
        ["report", trace, "--format", "json"],
        ["export", trace, "--format", "csv"],
        ["export", trace, "--format", "csv", "--table", "counters"],
        ["export", trace, "--format", "chrome-json"],
        ["diff", trace, trace],
        ["diff", trace, trace, "--format", "csv"],
        ["diff", trace, trace, "--format", "json"],
        ["merge", trace, trace, "-o", merged],
        ["report", os.path.join(sub, "zz\x07bad.pftrace")],
        ["report", os.path.join(sub, "missing\x1b[2J.pftrace")],
    ]


def test_no_escape_or_bell_reaches_a_terminal(hostile):
    d, sub, trace = hostile
    for args in commands(d, sub, trace):
        rc, out = on_tty(args)
        shown = [a.encode("utf-8", "surrogateescape") for a in args]
        assert b"\x1b" not in out and b"\x07" not in out, (shown, out[:2000])
        assert b"\xc2\x9b" not in out, (shown, out[:2000])
        if "bad" in args[-1] or "missing" in args[-1]:
            assert rc == 2, (shown, rc)
            assert b"\\x07" in out or b"\\x1b" in out, (shown, out)
        else:
            assert rc == (2 if args[1].endswith("*.pftrace") else 0), \
                (shown, rc, out[:2000])
        if args[:2] == ["report", trace] and len(args) == 2:
            # The text report shows an infinity as such, with no unit.
            assert b" -inf " in out, out
            assert b"inf P" not in out


def strings(doc):
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v)


def test_every_json_output_is_json(hostile):
    d, sub, trace = hostile
    for args in commands(d, sub, trace):
        if "json" not in args:
            continue
        p = subprocess.run([CLI, *args], capture_output=True, timeout=300)
        assert p.returncode in (0, 2), (args, p.stderr)
        doc = json.loads(p.stdout)  # bytes: strict UTF-8, no bare inf
        assert doc is not None
        # The names survive (escaped in the JSON, whole once parsed).
        assert any("\x1b" in t for t in strings(doc)), args
        assert b"\x1b" not in p.stdout and b"\x07" not in p.stdout


def counter_values(trace, fmt):
    sql = ("SELECT c.value FROM counter c JOIN counter_track t ON "
           "c.track_id = t.id WHERE t.name GLOB 'ev*' ORDER BY c.ts")
    return subprocess.run([CLI, "query", trace, "--format", fmt, sql],
                          capture_output=True, check=True,
                          timeout=300).stdout


def test_infinities_are_null_in_json_and_inf_in_csv(hostile):
    _, _, trace = hostile
    # What the importer stored (Perfetto's diff-test CSV: doubles as %f,
    # which C writes as inf and -inf): the trace says both infinities.
    stored = [float(v) for v in
              counter_values(trace, "csv").decode().splitlines()[1:]]
    assert math.inf in stored and -math.inf in stored, stored
    as_json = [None if math.isinf(v) else v for v in stored]
    q = json.loads(counter_values(trace, "json"))
    assert [r["value"] for r in q] == as_json
    chrome = json.loads(subprocess.run(
        [CLI, "export", trace, "--format", "chrome-json"],
        capture_output=True, check=True, timeout=300).stdout)
    events = chrome["traceEvents"] if isinstance(chrome, dict) else chrome
    assert [e["args"]["value"] for e in events if e.get("ph") == "C"] == \
        as_json
    csv = subprocess.run([CLI, "export", trace, "--format", "csv", "--table",
                          "counters"], capture_output=True, check=True,
                         timeout=300).stdout.decode("utf-8", "replace")
    assert [float(line.rsplit(",", 1)[1])
            for line in csv.splitlines()[1:]] == stored
    rep = json.loads(subprocess.run([CLI, "report", trace, "--format",
                                     "json"], capture_output=True,
                                    check=True, timeout=300).stdout)
    (c,) = [r for r in rep["sections"]["counters"]
            if r["counter"].startswith("ev")]
    assert c["samples"] == len(stored)
    assert c["min"] == (None if math.isinf(min(stored)) else min(stored))
    assert c["max"] == (None if math.isinf(max(stored)) else max(stored))
    rcsv = subprocess.run([CLI, "report", trace, "--format", "csv"],
                          capture_output=True, check=True,
                          timeout=300).stdout
    assert b",-inf," in rcsv

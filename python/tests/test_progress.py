"""The progress line of report, export and diff, on a real terminal (a
pseudo-terminal from Python's pty) and not elsewhere.

GPUPERF_PROGRESS_AFTER_MS=0 makes the line appear at once rather than
after a second, so that what it says does not depend on how fast this
machine is: each phase is named as it starts (reading, preparing,
exporting, summarising), and the last state is shown before "done":
for an export, whose total is known, "100%".
"""

import os
import pty
import subprocess

import pytest

CLI = os.environ.get("GPUPERF_CLI")

pytestmark = pytest.mark.skipif(
    not CLI, reason="GPUPERF_CLI is not set (run through `make test`)")


def on_terminal(*args):
    """Runs the CLI with stderr on a pseudo-terminal; its status and what
    the terminal received, \\r as line ends, clear-to-end removed."""
    master, slave = pty.openpty()
    env = dict(os.environ, GPUPERF_PROGRESS_AFTER_MS="0")
    env.pop("GPUPERF_NO_PROGRESS", None)
    p = subprocess.Popen([CLI, *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    rc = p.wait(timeout=300)
    text = got.decode(errors="replace").replace("\x1b[K", "")
    return rc, [ln for ln in text.replace("\r", "\n").split("\n") if ln]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    t = str(d / "demo.pftrace")
    subprocess.run([CLI, "demo", "-q", "-o", t], check=True, timeout=300)
    return t, d


def test_export_progress_names_phases_and_ends_at_100(trace):
    t, d = trace
    rc, lines = on_terminal("export", t, "--format", "chrome-json", "-o",
                            str(d / "out.json"))
    assert rc == 0
    phases = [ln.split(" ")[1] for ln in lines if ln.startswith("gpuperf: ")]
    assert "exporting" in phases and "preparing" in phases
    assert lines[-1].startswith("gpuperf: exporting ")
    assert lines[-1].endswith(": 100%, 0 s left done")
    # Percent and time left only where the total is known: the export's
    # rows, the import's bytes.
    for ln in lines:
        if "%" in ln:
            assert ln.startswith(("gpuperf: exporting ", "gpuperf: reading "))


def test_report_and_diff_progress_say_summarising(trace):
    t, _ = trace
    rc, lines = on_terminal("report", t)
    assert rc == 0
    assert any(ln.startswith("gpuperf: summarising ") for ln in lines)
    assert lines[-1].endswith(" done")
    rc, lines = on_terminal("diff", t, t)
    assert rc == 0
    assert sum(ln.startswith("gpuperf: summarising ") and
               ln.endswith(" done") for ln in lines) == 2


def test_no_progress_when_not_a_terminal(trace):
    t, d = trace
    env = dict(os.environ, GPUPERF_PROGRESS_AFTER_MS="0")
    env.pop("GPUPERF_NO_PROGRESS", None)
    p = subprocess.run([CLI, "export", t, "--format", "chrome-json", "-o",
                        str(d / "o2.json")], capture_output=True, env=env,
                       timeout=300)
    assert p.returncode == 0 and p.stderr == b""

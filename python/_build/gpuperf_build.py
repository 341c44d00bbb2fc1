"""A PEP 517 build backend of a few lines, so that `pip install ./python`
works offline in any virtual environment: it needs neither setuptools nor
wheel to be installed or downloaded. The package is pure Python (it loads
libgpuperf.so through ctypes), so a wheel is a zip of gpuperf/ and its
dist-info.
"""
import base64
import hashlib
import os
import tarfile
import zipfile

NAME = "gpuperf"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: gpuperf from Python: Perfetto traces as rows and pandas DataFrames, and ranges from Python programs
License: Apache-2.0
Requires-Python: >=3.9
Provides-Extra: pandas
Requires-Dist: pandas; extra == "pandas"
"""

WHEEL = f"""Wheel-Version: 1.0
Generator: gpuperf_build
Root-Is-Purelib: true
Tag: {TAG}
"""


def _files():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        path = os.path.join(pkg, name)
        if os.path.isfile(path) and (name.endswith(".py") or name == "py.typed"):
            yield f"{NAME}/{name}", path


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{arc},sha256={digest.decode()},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def _dist_info():
    return f"{NAME}-{VERSION}.dist-info"


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return _dist_info()


def _wheel(wheel_directory, entries):
    name = f"{NAME}-{VERSION}-{TAG}.whl"
    di = _dist_info()
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries + [(f"{di}/METADATA", METADATA.encode()),
                                    (f"{di}/WHEEL", WHEEL.encode())]:
            z.writestr(arc, data)
            records.append(_record_line(arc, data))
        records.append(f"{di}/RECORD,,")
        z.writestr(f"{di}/RECORD", "\n".join(records) + "\n")
    return name


def _built_from():
    """The build tree of the checkout the wheel is built from (its
    libgpuperf.so is where an installed package looks after GPUPERF_LIB),
    as a module of the wheel; None outside a checkout."""
    build = os.path.join(os.path.dirname(HERE), "build")
    if not os.path.isfile(os.path.join(HERE, "..", "Makefile")):
        return None
    return (f"{NAME}/_built_from.py",
            ('"""Written by the build backend: the build tree of the checkout '
             'this package was installed from."""\n'
             f"BUILD = {build!r}\n").encode())


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for arc, path in _files():
        if arc == f"{NAME}/_built_from.py":
            continue
        with open(path, "rb") as f:
            entries.append((arc, f.read()))
    built = _built_from()
    if built:
        entries.append(built)
    return _wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth file that puts this directory first."""
    return _wheel(wheel_directory, [(f"_{NAME}_editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/gpuperf_build.py"]:
            t.add(os.path.join(HERE, rel), f"{base}/{rel}")
        for arc, path in _files():
            t.add(path, f"{base}/{arc}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = METADATA.encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name

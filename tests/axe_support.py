"""axe-core, the accessibility checker the browser tests inject into each page: one pinned
release from the npm registry, checked against its published sha512 before it is unpacked.

Run as a script (standard library only, so ``.ci/run`` can call it before the venv exists), it
downloads the tarball once into a cache folder and prints the path of ``axe.min.js``::

    export ATTNLAB_AXE="$(python3 tests/axe_support.py)"

The tests read ``ATTNLAB_AXE``, else the cached file if an earlier run left it there.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import sys
import tarfile
import urllib.request
from pathlib import Path

#: The pinned release and its npm ``dist.integrity`` (sha512, base64), as the registry lists it.
VERSION = "4.10.3"
INTEGRITY = (
    "sha512-"
    "Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/PbZhideTcEg=="
)
TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
MEMBER = "package/axe.min.js"


def cache_path() -> Path:
    """Where the unpacked ``axe.min.js`` of the pinned release is kept."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "attnlab" / f"axe-core-{VERSION}" / "axe.min.js"


def found() -> Path | None:
    """``$ATTNLAB_AXE`` if set, else the cached file if present, else None."""
    named = os.environ.get("ATTNLAB_AXE")
    if named:
        return Path(named)
    path = cache_path()
    return path if path.is_file() else None


def check_integrity(data: bytes) -> None:
    """Raise ``ValueError`` unless ``data`` has the pinned sha512."""
    got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    if got != INTEGRITY:
        raise ValueError(f"axe-core {VERSION}: tarball sha512 {got} is not the pinned {INTEGRITY}")


def fetch() -> Path:
    """Download, check and unpack the pinned release into :func:`cache_path` (once)."""
    path = cache_path()
    if path.is_file():
        return path
    with urllib.request.urlopen(TARBALL, timeout=60) as response:  # the pinned https URL
        data = response.read()
    check_integrity(data)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise ValueError(f"axe-core {VERSION}: {MEMBER} missing from the tarball")
        script = member.read()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(script)
    tmp.replace(path)
    return path


if __name__ == "__main__":
    try:
        print(fetch())
    except (OSError, ValueError) as exc:
        print(f"axe-core: {exc}", file=sys.stderr)
        sys.exit(1)

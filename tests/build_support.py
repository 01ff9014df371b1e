"""Helpers of the build/install/check tests: server folders and zips (good ones and a corpus of bad ones)."""

from __future__ import annotations

import json
import shutil
import stat
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).parent / "build_fixtures"
TINYCONN = FIXTURES / "tinyconn"

SERVER_PY = '''"""A script ACP server (test fixture): serves the tiny connector copied into lib/."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
import analytics_acp_tinyconn.plugin as plugin  # noqa: E402

from analytics_acp.cli import serve_module_main  # noqa: E402

sys.exit(serve_module_main(plugin, sys.argv[1:]))
'''

DEAD_SERVER_PY = 'import sys\nprint("this server cannot start", file=sys.stderr)\nsys.exit(3)\n'


def manifest(ident: str = "tinyconn", version: str = "1.0.0", **extra) -> dict:
    """An acp.json for a script server (``python server.py``)."""
    doc = {
        "acp_version": "1.0", "id": ident, "name": "Tiny connector", "version": version, "publisher": "tests",
        "description": "Counts from 1 to N.", "icon": "icon.svg",
        "transport": {"type": "stdio", "command": "python", "args": ["server.py"]},
        "http": {"args": ["server.py", "--http", "--port", "7413"]},
    }
    doc.update(extra)
    return doc


def server_folder(folder: Path, *, ident: str = "tinyconn", version: str = "1.0.0", dead: bool = False,
                  acp: dict | None = None, bom: bool = False, runtime: str = "raw") -> Path:
    """Write a runnable server folder (acp.json, server.py, lib/, skills/, icon) and return it.

    ``runtime="raw"``: server.py is the bare-SDK fixture server (independent of the core runtime);
    ``runtime="core"``: server.py serves the tiny connector through ``analytics_acp.cli.serve_module_main``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(acp if acp is not None else manifest(ident, version), indent=2)
    (folder / "acp.json").write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    if dead:
        (folder / "server.py").write_text(DEAD_SERVER_PY)
    elif runtime == "raw":
        shutil.copy(FIXTURES / "raw_acp_server.py", folder / "server.py")
    else:
        (folder / "server.py").write_text(SERVER_PY)
    shutil.copytree(TINYCONN / "src" / "analytics_acp_tinyconn", folder / "lib" / "analytics_acp_tinyconn",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(TINYCONN / "skills", folder / "skills")
    shutil.copy(TINYCONN / "icon.svg", folder / "icon.svg")
    (folder / "VERSION").write_text(version)
    return folder


def zip_tree(folder: Path, zip_path: Path, root: str | None = "tinyconn", *, extra: list[tuple] = ()) -> Path:
    """Zip ``folder`` under ``root/`` (or at the zip root when None) plus ``extra`` (ZipInfo|name, bytes) entries."""
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = path.relative_to(folder).as_posix()
                zf.write(path, f"{root}/{rel}" if root else rel)
        for name, data in extra:
            zf.writestr(name, data)
    return zip_path


def symlink_entry(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    """A zip entry that is a symbolic link (external_attr S_IFLNK)."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def mark_encrypted(zip_path: Path, entry: str) -> None:
    """Set the 'encrypted' flag bit (flag_bits & 1) on ``entry`` in its local and central headers."""
    data = bytearray(zip_path.read_bytes())
    name = entry.encode()
    for sig, flag_at, name_len_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        pos = data.find(sig)
        while pos != -1:
            n = int.from_bytes(data[pos + name_len_at:pos + name_len_at + 2], "little")
            if bytes(data[pos + name_at:pos + name_at + n]) == name:
                data[pos + flag_at] |= 0x01
            pos = data.find(sig, pos + 4)
    zip_path.write_bytes(bytes(data))


def add_zip64_entry(zip_path: Path, name: str, data: bytes = b"x") -> None:
    """Append an entry written with zip64 extensions (force_zip64=True)."""
    with zipfile.ZipFile(zip_path, "a", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        with zf.open(name, "w", force_zip64=True) as out:
            out.write(data)


def internal_packages(folder: Path) -> set[str]:
    """Top-level names in a frozen folder's ``_internal/`` (packages and their .dist-info, by name)."""
    return {p.name.split(".")[0].split("-")[0] for p in (folder / "_internal").iterdir()}

"""The .zip of a server folder (13.1.1): write one, and read one the way a host must.

Reading rules: plain zips only (stored or deflate; no zip64, no encrypted entries); no entry may
leave the extraction folder (``..``, absolute paths, drive letters) and none may be a symlink;
the shallowest ``acp.json`` decides the server folder and everything outside it is ignored.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .manifest import ManifestError, parse_manifest

ZIP64_EXTRA_ID = 0x0001
ZIP64_EOCD_LOCATOR = b"PK\x06\x07"
ALLOWED_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
MAX_TOTAL_BYTES = 4 * 1024**3  # a server folder larger than this is refused (zip bombs)


class ZipRefused(ValueError):
    """The zip breaks a rule of 13.1.1; the message names the entry and the rule."""


@dataclass
class ZipPlan:
    """What to extract: the server folder's prefix inside the zip, its acp.json and its members."""

    prefix: str  # "" when acp.json is at the root, else "folder/" (with the slash)
    manifest: dict
    members: list[tuple[zipfile.ZipInfo, str]] = field(default_factory=list)  # (entry, path relative to the folder)
    ignored: list[str] = field(default_factory=list)  # entries outside the server folder

    @property
    def total_bytes(self) -> int:
        """Uncompressed size of the members."""
        return sum(info.file_size for info, _ in self.members)


# --- writing -----------------------------------------------------------------------------------

def write_zip(folder: Path, zip_path: Path, root_name: str | None = None) -> Path:
    """Zip ``folder`` as ``root_name/...`` (deflate, no zip64, symlinks resolved), atomically."""
    folder = Path(folder)
    root = root_name or folder.name
    zip_path = Path(zip_path)
    tmp = zip_path.with_name(f".{zip_path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6, allowZip64=False) as zf:
            for path, rel in _walk_resolved(folder):
                arc = f"{root}/{rel}"
                st = path.stat()  # follows symlinks: the target's bytes and mode go in
                if stat.S_ISDIR(st.st_mode):
                    info = zipfile.ZipInfo.from_file(path, arc + "/")
                    zf.writestr(info, b"")
                    continue
                info = zipfile.ZipInfo.from_file(path, arc)
                info.external_attr = (stat.S_IFREG | stat.S_IMODE(st.st_mode)) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as src, zf.open(info, "w", force_zip64=False) as dst:
                    shutil.copyfileobj(src, dst, 1024 * 1024)
        os.replace(tmp, zip_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return zip_path


def _walk_resolved(folder: Path):
    """(path, posix relative path) of every file and directory, following symlinks, loops skipped."""
    seen_dirs: set[tuple[int, int]] = set()

    def walk(current: Path, rel: str):
        st = current.stat()
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            return
        seen_dirs.add(key)
        for entry in sorted(os.scandir(current), key=lambda e: e.name):
            path = Path(entry.path)
            child = f"{rel}{entry.name}"
            try:
                is_dir = path.is_dir()  # follows symlinks
            except OSError:
                continue
            if is_dir:
                yield path, child
                yield from walk(path, child + "/")
            elif path.exists():
                yield path, child

    yield from walk(folder, "")


# --- reading -----------------------------------------------------------------------------------

def _entry_path(name: str) -> PurePosixPath:
    """The entry's path, refusing anything that could leave the extraction folder."""
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":") or norm.startswith("//"):
        raise ZipRefused(f"Entry {name!r} has an absolute path; refusing the zip (13.1.1).")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ZipRefused(f"Entry {name!r} leaves the destination folder ('..'); refusing the zip (13.1.1).")
    if any("\x00" in p for p in parts):
        raise ZipRefused(f"Entry {name!r} has a NUL byte in its name; refusing the zip.")
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _has_zip64_extra(extra: bytes) -> bool:
    pos = 0
    while pos + 4 <= len(extra):
        header_id, size = struct.unpack_from("<HH", extra, pos)
        if header_id == ZIP64_EXTRA_ID:
            return True
        pos += 4 + size
    return False


def _local_extra(fp, info: zipfile.ZipInfo) -> bytes:
    fp.seek(info.header_offset)
    header = fp.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise ZipRefused(f"Entry {info.filename!r} has no valid local header; the zip is damaged.")
    name_len, extra_len = struct.unpack_from("<HH", header, 26)
    fp.seek(info.header_offset + 30 + name_len)
    return fp.read(extra_len)


def _refuse_zip64(zip_path: Path, zf: zipfile.ZipFile) -> None:
    # Archive-level zip64 (end-of-central-directory locator just before the EOCD record).
    with open(zip_path, "rb") as fp:
        fp.seek(0, os.SEEK_END)
        size = fp.tell()
        fp.seek(max(0, size - 65536 - 22 - 20))
        tail = fp.read()
        if ZIP64_EOCD_LOCATOR in tail:
            raise ZipRefused("The zip uses zip64 records; only plain zips are accepted (13.1.1).")
        for info in zf.infolist():
            # Entry-level zip64: a zip64 extra field in the central or the local header.
            if _has_zip64_extra(info.extra) or _has_zip64_extra(_local_extra(fp, info)):
                raise ZipRefused(f"Entry {info.filename!r} is a zip64 entry; only plain zips are accepted (13.1.1).")


def read_plan(zip_path: Path, *, max_total_bytes: int = MAX_TOTAL_BYTES) -> ZipPlan:
    """Validate a server zip and say what to extract; raises ZipRefused or ManifestError."""
    zip_path = Path(zip_path)
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ZipRefused(f"{zip_path.name} is not a readable zip: {exc}.") from None
    with zf:
        _refuse_zip64(zip_path, zf)
        paths: dict[str, zipfile.ZipInfo] = {}
        manifests: list[tuple[int, str, zipfile.ZipInfo]] = []
        for info in zf.infolist():
            path = _entry_path(info.filename)
            if info.flag_bits & 0x1:
                raise ZipRefused(f"Entry {info.filename!r} is encrypted; encrypted zips are not accepted (13.1.1).")
            if _is_symlink(info):
                raise ZipRefused(f"Entry {info.filename!r} is a symbolic link; refusing the zip (13.1.1).")
            if info.compress_type not in ALLOWED_METHODS:
                raise ZipRefused(f"Entry {info.filename!r} uses compression method {info.compress_type}; only stored or deflate are accepted (13.1.1).")
            key = str(path)
            if key in paths and not info.is_dir():
                raise ZipRefused(f"Entry {info.filename!r} appears twice in the zip.")
            paths[key] = info
            if not info.is_dir() and path.name == "acp.json":
                manifests.append((len(path.parts), key, info))
        if not manifests:
            raise ZipRefused("The zip has no acp.json; a server folder needs one (13.1.1).")
        manifests.sort(key=lambda m: (m[0], m[1]))
        depth = manifests[0][0]
        shallowest = [m for m in manifests if m[0] == depth]
        if len(shallowest) > 1:
            raise ZipRefused(f"The zip has several acp.json at the same depth ({', '.join(m[1] for m in shallowest)}); which server to install is ambiguous.")
        _, manifest_key, manifest_info = shallowest[0]
        prefix = str(PurePosixPath(manifest_key).parent)
        prefix = "" if prefix == "." else prefix + "/"
        manifest = parse_manifest(zf.read(manifest_info), f"{zip_path.name}:{manifest_key}")
        plan = ZipPlan(prefix=prefix, manifest=manifest)
        for key, info in paths.items():
            if key == ".":
                continue
            if prefix and not (key + "/").startswith(prefix):
                plan.ignored.append(info.filename)
                continue
            rel = key[len(prefix):]
            if rel:
                plan.members.append((info, rel))
        if plan.total_bytes > max_total_bytes:
            raise ZipRefused(f"The server folder would be {plan.total_bytes} bytes; the limit is {max_total_bytes}.")
        return plan


def extract_plan(zip_path: Path, plan: ZipPlan, dest: Path) -> None:
    """Extract the plan's members into ``dest`` (created, must not exist), keeping the mode bits."""
    dest = Path(dest)
    dest.mkdir(mode=0o755)
    root = dest.resolve()
    with zipfile.ZipFile(zip_path) as zf:
        for info, rel in plan.members:
            target = (root / rel).resolve()
            if root not in target.parents:  # defence in depth: _entry_path already refused escapes
                raise ZipRefused(f"Entry {info.filename!r} would land outside {dest}.")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            with zf.open(info) as src, open(target, "xb") as out:
                while chunk := src.read(1024 * 1024):
                    written += len(chunk)
                    if written > info.file_size:
                        raise ZipRefused(f"Entry {info.filename!r} is larger than it declares.")
                    out.write(chunk)
            mode = stat.S_IMODE(info.external_attr >> 16)
            os.chmod(target, (mode or 0o644) & 0o755 | 0o400)


__all__ = ["ManifestError", "ZipPlan", "ZipRefused", "extract_plan", "read_plan", "write_zip"]

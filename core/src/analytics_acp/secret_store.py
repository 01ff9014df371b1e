"""Secrets at rest, in one place: the OS keyring when a usable backend exists, else a private file (issue 35.4).

A host tool (the set-up page, ``login google``) that must keep a secret the person gave it stores it
here and writes only a *reference* into sources.json (16.3): ``{"keyring": "<name>"}`` or
``{"file": "<absolute path>"}``. The file fallback lives in the user's analytics-acp config folder
(outside any project, so no repository picks it up): a 0600 file in a 0700 folder, written whole
through a temp file and renamed. It is not encrypted, and callers say so to the person.

Reading the Secret Service can be slow, so what was read is cached for the life of the process.
Tests choose a backend with ``PYTHON_KEYRING_BACKEND`` or ``keyring.set_keyring()``: never the
machine's real keychain.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG_ENV = "ANALYTICS_ACP_CONFIG_DIR"
APP_NAME = "analytics-acp"
KEYRING_SERVICE = "analytics-acp"  # the keyring's "service"; the reference's name is its "username"
SECRETS_FOLDER = "secrets"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9@._+-]")
# Backends that exist but keep nothing (or refuse everything): a secret stored there would be lost.
_UNUSABLE_BACKENDS = ("keyring.backends.fail.Keyring", "keyring.backends.null.Keyring")

_cache: dict[str, str] = {}
_cache_lock = threading.Lock()


class SecretStoreError(Exception):
    """A secret could not be stored, read or removed (the message names places, never values)."""


def config_dir() -> Path:
    """The user's analytics-acp config folder: ``$ANALYTICS_ACP_CONFIG_DIR``, else platformdirs' user config dir."""
    override = os.environ.get(CONFIG_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def private_dir(folder: Path) -> None:
    """Create ``folder`` (and parents) mode 0700; an existing folder of ours is tightened, not trusted as is."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)


def write_atomic(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder and ``os.replace``; ``mode`` from the start."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def secrets_dir() -> Path:
    """Where the file fallback keeps secrets: ``<config>/secrets``."""
    return config_dir() / SECRETS_FOLDER


def _keyring() -> Any | None:
    """The keyring backend if a usable one is configured, else None (headless Linux without a Secret Service)."""
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # a broken backend configuration: use the file fallback rather than fail
        return None
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if name in _UNUSABLE_BACKENDS or (name == "keyring.backends.chainer.ChainerBackend" and not getattr(backend, "backends", None)):
        return None
    try:
        backend.get_password(KEYRING_SERVICE, "__analytics_acp_probe__")
    except (KeyringError, OSError, RuntimeError):
        return None
    return backend


def backend_description() -> str:
    """Where new secrets go, in words for a page or a terminal."""
    backend = _keyring()
    if backend is not None:
        return f"the system keyring ({type(backend).__name__})"
    return f"private files in {secrets_dir()} (mode 0600; not encrypted)"


@dataclass(frozen=True)
class Stored:
    """Where a secret went: the sources.json reference and, in words, the place."""

    reference: dict[str, str]
    place: str  # "keyring" | "file"
    description: str


def store(name: str, value: str) -> Stored:
    """Keep ``value`` under ``name`` (keyring, else a private file); returns the reference for sources.json."""
    safe = _SAFE_NAME.sub("_", name).strip("._") or "secret"
    backend = _keyring()
    why = ""
    if backend is not None:
        try:
            backend.set_password(KEYRING_SERVICE, safe, value)
        except Exception as exc:  # a locked or refusing keyring: fall back to the file, never lose the secret
            why = type(exc).__name__
        else:
            with _cache_lock:
                _cache[safe] = value
            return Stored({"keyring": safe}, "keyring", f"the system keyring ({type(backend).__name__})")
    folder = secrets_dir()
    path = folder / safe
    try:
        private_dir(folder.parent)
        private_dir(folder)
        write_atomic(path, value, 0o600)
    except OSError as exc:
        raise SecretStoreError(f"Cannot write a secret file in {folder}: {exc.strerror or type(exc).__name__}.") from None
    note = f" (the keyring refused it: {why})" if why else ""
    return Stored({"file": str(path)}, "file", f"a private file in {folder} (mode 0600; not encrypted){note}")


def read_keyring(name: str) -> str:
    """The secret a ``{"keyring": name}`` reference names; SecretStoreError when there is none."""
    with _cache_lock:
        if name in _cache:
            return _cache[name]
    backend = _keyring()
    if backend is None:
        raise SecretStoreError(f"no usable system keyring to read the secret {name!r} from "
                               "(set it again on the set-up page, or use a {\"file\"} reference).")
    try:
        value = backend.get_password(KEYRING_SERVICE, name)
    except Exception as exc:
        raise SecretStoreError(f"the system keyring could not read the secret {name!r} ({type(exc).__name__}).") from None
    if value is None:
        raise SecretStoreError(f"the system keyring has no secret {name!r} (set it again on the set-up page).")
    with _cache_lock:
        _cache[name] = value
    return str(value)


def owned_file(reference: Any) -> Path | None:
    """The path of a ``{"file": ...}`` reference that points into this store's folder, else None."""
    if not (isinstance(reference, dict) and len(reference) == 1 and isinstance(reference.get("file"), str)):
        return None
    path = Path(reference["file"]).expanduser()
    try:
        folder = secrets_dir().resolve()
        resolved = path.resolve()
    except OSError:
        return None
    return resolved if resolved.parent == folder else None


def remove(reference: Any) -> bool:
    """Delete the secret a reference names when this store owns it (a keyring entry, a file of its folder).

    Returns True when something was removed. References to anything else (an env variable, a file the
    person keeps elsewhere) are left alone: they are not ours to delete.
    """
    if isinstance(reference, dict) and len(reference) == 1 and isinstance(reference.get("keyring"), str):
        name = reference["keyring"]
        with _cache_lock:
            _cache.pop(name, None)
        backend = _keyring()
        if backend is None:
            return False
        try:
            backend.delete_password(KEYRING_SERVICE, name)
        except Exception:  # already gone (PasswordDeleteError) or a keyring that refuses: nothing more to do
            return False
        return True
    path = owned_file(reference)
    if path is None:
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise SecretStoreError(f"Cannot delete {path}: {exc.strerror or type(exc).__name__}.") from None
    return True


def is_reference(value: Any) -> bool:
    """True for a secret-store reference (``{"keyring": name}`` or a ``{"file": path}`` of this store)."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("keyring"), str):
        return True
    return owned_file(value) is not None

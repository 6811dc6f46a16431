"""Writing output files safely: checked first, then all written or none (chapters 02-04).

Every `piilab` command that writes files goes through this module, so one set of
rules holds for all of them:

1. **Check before writing** (`check_outputs`). An output that is the same file
   as an input, or as another output, is refused: the same path once resolved
   (``sub/../x`` is ``x``; a symbolic link is followed) or, for a file that
   exists, the same device and inode (a hard link). An output that exists is
   refused unless ``force`` is given; so is a directory, and a name whose folder
   is missing or cannot be written.
2. **Write atomically** (`write_atomic`). A file is written to a temporary file
   in its own folder, flushed to disk and renamed over its target, so a reader
   sees the old file or the new one, never half of one. The temporary name is
   short and fixed in length (``.piilab-XXXXXXXX.tmp``), so it fits wherever the
   user's own name fits, a 250-character name included.
3. **All or nothing** (`write_all`). Several outputs are staged as temporary
   files first; each target that exists is kept under a backup name (a hard
   link, else a copy); then the files are renamed into place. If anything fails
   on the way (a full disk, a read-only file system, Ctrl-C) the targets
   already replaced get their old content back, new targets are removed and
   every temporary file is deleted: the outputs are all new, or all as before.

File modes: a file that holds values (a mapping, restored text, predictions) is
created 0600, readable by its owner only, from its first byte (`PRIVATE_MODE`);
any other file gets the mode a new file gets under the umask (``mode=None``).

What this module does not do: make the renames of step 3 one transaction for
the kernel. A power cut in the middle of them can leave some targets new and
the backups (``.piilab-*.bak``) behind. Nor does it lock files against another
process writing them at the same time; the check of step 1 and the writes are
not one atomic step.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

#: Mode of files that hold PII values: owner read and write only.
PRIVATE_MODE = 0o600

#: Every temporary or backup file this module creates starts with this prefix.
TEMP_PREFIX = ".piilab-"

StrPath = str | os.PathLike


class OutputError(ValueError):
    """An output is refused before anything is written; the message names the path."""


def umask_mode() -> int:
    """The mode a new file gets under the current umask (0o666 without the umask bits)."""
    umask = os.umask(0o077)  # the only portable way to read it is to set it
    os.umask(umask)
    return 0o666 & ~umask


def _identities(path: StrPath) -> set[tuple]:
    """The keys that say "same file": the resolved path, and device and inode if it exists."""
    keys: set[tuple] = {("path", os.path.realpath(path))}
    with contextlib.suppress(OSError, ValueError):
        info = os.stat(path)
        keys.add(("inode", info.st_dev, info.st_ino))
    return keys


def check_outputs(outputs: Iterable[StrPath | None], inputs: Iterable[StrPath | None] = (), *,
                  force: bool = False) -> list[Path]:
    """Refuse outputs that would lose data or cannot be written; return them as paths.

    ``None`` entries (stdin, stdout) are skipped. Raises `OutputError` naming the
    path as the caller gave it; nothing is read from or written to any file.

    >>> check_outputs(["out.txt"], inputs=["./out.txt"])
    Traceback (most recent call last):
    ...
    piilab.files.OutputError: out.txt: is the same file as the input ./out.txt
    """
    claimed: dict[tuple, tuple[str, str]] = {}
    for path in inputs:
        if path is not None:
            for key in _identities(path):
                claimed.setdefault(key, ("input", os.fspath(path)))
    checked = []
    for path in outputs:
        if path is None:
            continue
        name = os.fspath(path)
        keys = _identities(path)
        for key in keys:
            if key in claimed:
                role, other = claimed[key]
                if role == "input":
                    raise OutputError(f"{name}: is the same file as the input {other}")
                raise OutputError(f"{other} and {name} are the same file: "
                                  "give each output its own name")
        claimed.update(dict.fromkeys(keys, ("output", name)))
        _check_writable(Path(path), name, force)
        checked.append(Path(path))
    return checked


def _check_writable(path: Path, name: str, force: bool) -> None:
    if path.is_dir():
        raise OutputError(f"{name}: is a directory (name a file)")
    if os.path.lexists(path) and not force:
        raise OutputError(f"{name}: exists; use --force to replace it")
    folder = path.parent
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise OutputError(f"cannot write {name}: the folder {folder} {what}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {name}: the folder {folder} is not writable")


def write_atomic(path: StrPath, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` through a temporary file, fsync and a rename.

    `mode` is the file's final mode; ``None`` means the umask's (`umask_mode`).
    The temporary file is 0600 until it is complete. An `OSError` names `path`,
    not the temporary file, and leaves no temporary file behind.
    """
    write_all([(path, data, mode)])


def write_all(outputs: Sequence[tuple[StrPath, bytes, int | None]]) -> None:
    """Write every ``(path, data, mode)`` or none of them (see the module docstring).

    The files are renamed into place in the order given (write a manifest last).
    Call `check_outputs` first: this function replaces whatever is there.
    """
    default_mode = umask_mode() if any(mode is None for _, _, mode in outputs) else 0
    staged: list[tuple[str, Path]] = []
    backups: dict[Path, str | None] = {}
    replaced: list[Path] = []
    current = Path(outputs[0][0]) if outputs else Path()
    try:
        # 1. Every new file complete on disk, under a temporary name next to its target.
        for path, data, mode in outputs:
            current = Path(path)
            staged.append((_stage(current, data, default_mode if mode is None else mode),
                           current))
        # 2. The old content of every target kept, so that step 3 can be undone.
        if len(staged) > 1:
            for _, target in staged:
                current = target
                backups[target] = _backup(target)
        # 3. The renames: each one atomic, all of them undone if one fails.
        for temporary, target in staged:
            current = target
            os.replace(temporary, target)
            replaced.append(target)
        for folder in {target.parent for _, target in staged}:
            _sync_folder(folder)
    except BaseException as exc:
        if len(staged) > 1:  # one file alone is replaced atomically: nothing to undo
            _undo(replaced, backups)
        for temporary, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        _drop(backups)
        if isinstance(exc, OSError):
            # Name the user's file, never the temporary one.
            raise OSError(exc.errno, exc.strerror or type(exc).__name__,
                          os.fspath(current)) from exc
        raise
    _drop(backups)


def _stage(target: Path, data: bytes, mode: int) -> str:
    """Write `data` to a new 0600 temporary file in `target`'s folder; return its name."""
    descriptor, temporary = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".tmp",
                                             dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)  # complete now: it may get its final mode
    except BaseException:
        os.unlink(temporary)
        raise
    return temporary


def _backup(target: Path) -> str | None:
    """Keep `target`'s current content under a backup name; None if it does not exist."""
    if not os.path.lexists(target):
        return None
    while True:
        name = str(target.parent / f"{TEMP_PREFIX}{secrets.token_hex(4)}.bak")
        try:
            if os.path.islink(target):  # keep the link itself, not what it points to
                os.symlink(os.readlink(target), name)
            else:
                os.link(target, name)
            return name
        except FileExistsError:
            continue
        except OSError:  # no hard links here (some file systems): copy instead
            shutil.copy2(target, name)
            return name


def _undo(replaced: list[Path], backups: dict[Path, str | None]) -> None:
    """Put back the old content of every replaced target (best effort, never raises)."""
    for target in reversed(replaced):
        backup = backups.pop(target, None)
        with contextlib.suppress(OSError):
            if backup is None:
                os.unlink(target)
            else:
                os.replace(backup, target)


def _drop(backups: dict[Path, str | None]) -> None:
    for backup in backups.values():
        if backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(backup)
    backups.clear()


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (the renames) to disk, where the platform allows it."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

"""Writing output files safely: checked first, then all written or none (chapters 02-04).

Every `piilab` command that writes files goes through this module, so one set of
rules holds for all of them:

1. **Check before writing** (`check_outputs`). An output that is the same file
   as an input, or as another output, is refused: the same path once resolved
   (``sub/../x`` is ``x``; a symbolic link is followed) or, for a file that
   exists, the same device and inode (a hard link). Standard input counts as an
   input (`STDIN`: ``piilab mask --out doc.txt < doc.txt`` is refused), and
   standard output as an output (`STDOUT`). An output that exists is refused
   unless ``force`` is given; so is a directory, and a name whose folder is
   missing or cannot be written.
2. **Write atomically** (`write_atomic`). A file is written to a temporary file
   in its own folder, flushed to disk and renamed over its target, so a reader
   sees the old file or the new one, never half of one. The temporary name is
   short and fixed in length (``.piilab-PPPPPPPP-XXXXXXXX.tmp``, ``P`` the
   writing process's id), so it fits wherever the user's own name fits, a
   250-character name included.
3. **All or nothing** (`write_all`). Several outputs are staged as temporary
   files first; each target that exists is kept under a backup name (a hard
   link, else a copy); a journal (``.piilab-*.jnl``, file names only) records
   which temporary file goes where; then the files are renamed into place,
   each one recorded before it is renamed. If anything fails on the way (a
   full disk, a read-only file system, Ctrl-C, SIGTERM) the targets already
   replaced get their old content back, new targets are removed and every
   temporary file is deleted: the outputs are all new, or all as before.
   Ctrl-C, SIGTERM and SIGHUP are held back while the renames, their undoing
   and the clean-up run (where the platform can block signals), so an
   interruption lands before or after them, never between two of them.
   A whole new folder (a masked corpus) is built in a staging folder and
   renamed into place (`publish_folder`).
4. **Clean up after a killed run** (`recover`). A process killed outright
   (SIGKILL, a power cut) can leave its temporary files, backups (hard links
   to the old content: a mapping, a dataset) and journal behind. The next
   write into the same folder finds the ones whose process is gone: a journal
   is played back (every target it renamed gets its old content back), then
   the leftovers are deleted.

File modes: a file that holds values (a mapping, restored text, predictions) is
created 0600, readable by its owner only, from its first byte (`PRIVATE_MODE`);
any other file gets the mode a new file gets under the umask (``mode=None``).

What this module does not do: lock files against another process writing them
at the same time; the check of step 1 and the writes are not one atomic step.
A leftover is recognized by the process id in its name, so one left by a
process on another machine (a shared network folder) is taken for a live one's
and kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from piilab.errors import PiilabError

#: Mode of files that hold PII values: owner read and write only.
PRIVATE_MODE = 0o600

#: Every temporary or backup file this module creates starts with this prefix.
TEMP_PREFIX = ".piilab-"

StrPath = str | os.PathLike

#: A leftover of this module: ``.piilab-<pid, 8 hex>-<8 random>.<kind>``.
_LEFTOVER = re.compile(r"\.piilab-(?:([0-9a-f]{8})-)?[0-9a-z_]{8}\.(tmp|bak|jnl)")
#: Leftovers of older versions carry no process id: removed once this old (seconds).
_UNOWNED_AGE = 3600

#: The signals held back while renames run (the ones the CLI turns into an interruption).
_HELD_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                          if hasattr(signal, name))


class _Stream:
    """A standard stream named in `check_outputs` (`STDIN`, `STDOUT`)."""

    def __init__(self, name: str, descriptor: int) -> None:
        self.name, self.descriptor = name, descriptor

    def __repr__(self) -> str:
        return self.name


#: Standard input, as an entry of `check_outputs`' inputs.
STDIN = _Stream("<stdin>", 0)
#: Standard output, as an entry of `check_outputs`' outputs.
STDOUT = _Stream("<stdout>", 1)


class OutputError(PiilabError):
    """An output is refused before anything is written; the message names the path."""


def umask_mode() -> int:
    """The mode a new file gets under the current umask (0o666 without the umask bits)."""
    umask = os.umask(0o077)  # the only portable way to read it is to set it
    os.umask(umask)
    return 0o666 & ~umask


def _identities(path: StrPath | _Stream) -> set[tuple]:
    """The keys that say "same file": the resolved path, and device and inode if it exists.

    A standard stream has only its device and inode, and only when it is a file
    (a terminal or a pipe is never the same file as an input or output).
    """
    if isinstance(path, _Stream):
        try:
            info = os.fstat(path.descriptor)
        except (OSError, ValueError):
            return set()
        return {("inode", info.st_dev, info.st_ino)} if stat.S_ISREG(info.st_mode) else set()
    keys: set[tuple] = {("path", os.path.realpath(path))}
    with contextlib.suppress(OSError, ValueError):
        info = os.stat(path)
        keys.add(("inode", info.st_dev, info.st_ino))
    return keys


def check_outputs(outputs: Iterable[StrPath | _Stream | None],
                  inputs: Iterable[StrPath | _Stream | None] = (), *,
                  force: bool = False) -> list[Path]:
    """Refuse outputs that would lose data or cannot be written; return them as paths.

    ``None`` entries are skipped. `STDIN` among the inputs and `STDOUT` among
    the outputs are compared by what they are open on (``os.fstat``), so a
    redirected ``< doc.txt`` is an input like ``--in doc.txt``; a stream is only
    compared, never checked for writing, and not returned. Raises `OutputError`
    naming the path as the caller gave it; nothing is read from or written to
    any file.

    >>> check_outputs(["out.txt"], inputs=["./out.txt"])
    Traceback (most recent call last):
    ...
    piilab.files.OutputError: out.txt: is the same file as the input ./out.txt
    """
    claimed: dict[tuple, tuple[str, str]] = {}
    for path in inputs:
        if path is not None:
            for key in _identities(path):
                claimed.setdefault(key, ("input", _name(path)))
    checked = []
    for path in outputs:
        if path is None:
            continue
        name = _name(path)
        keys = _identities(path)
        for key in keys:
            if key in claimed:
                role, other = claimed[key]
                if role == "input":
                    raise OutputError(f"{name}: is the same file as the input {other}")
                raise OutputError(f"{other} and {name} are the same file: "
                                  "give each output its own name")
        claimed.update(dict.fromkeys(keys, ("output", name)))
        if isinstance(path, _Stream):
            continue
        _check_writable(Path(path), name, force)
        checked.append(Path(path))
    return checked


def _name(path: StrPath | _Stream) -> str:
    return path.name if isinstance(path, _Stream) else os.fspath(path)


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
    targets = [Path(path) for path, _, _ in outputs]
    folders = list(dict.fromkeys(target.parent for target in targets))
    for folder in folders:
        recover(folder)
    default_mode = umask_mode() if any(mode is None for _, _, mode in outputs) else 0
    several = len(outputs) > 1
    staged: list[tuple[str, Path]] = []  # (temporary, target), in renaming order
    backups: dict[Path, str | None] = {}
    journals: list[str] = []
    current = targets[0] if targets else Path()
    # The signals held back in step 4 (and while undoing) are delivered when `held`
    # closes, after this try statement: an interruption that arrives during the renames
    # ends the command once the outputs are complete, and never runs the undo.
    with contextlib.ExitStack() as held:
        try:
            # 1. Every new file complete on disk, under a temporary name next to its target.
            for (_, data, mode), target in zip(outputs, targets, strict=True):
                current = target
                staged.append((_stage(target, data, default_mode if mode is None else mode),
                               target))
            if several:
                # 2. The old content of every target kept, so that step 4 can be undone.
                for _, target in staged:
                    current = target
                    backups[target] = _backup(target)
                # 3. The journal: what a later run needs to undo step 4 if this one is killed.
                current = targets[0]
                journals = _write_journal(folders, staged, backups)
            held.enter_context(_signals_held())
            # 4. The renames, each atomic; an undo checks which ones happened (`_undo`).
            for temporary, target in staged:
                current = target
                os.replace(temporary, target)
            for folder in folders:
                _sync_folder(folder)
            # 5. Committed: the journal goes first, then the backups.
            _remove_all(journals)
            journals = []
            for folder in folders:
                _sync_folder(folder)
            _drop(backups)
        except BaseException as exc:
            held.enter_context(_signals_held())
            if several:  # one file alone is replaced atomically: nothing to undo
                _undo(staged, backups)
            for temporary, _ in staged:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
            _drop(backups)
            _remove_all(journals)
            if isinstance(exc, OSError):
                # Name the user's file, never the temporary one.
                raise OSError(exc.errno, exc.strerror or type(exc).__name__,
                              os.fspath(current)) from exc
            raise


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold back Ctrl-C, SIGTERM and SIGHUP in the block; they are delivered after it.

    Two layers, because blocking alone is not enough: a signal sent to the process
    goes to any thread that does not block it (Arrow and Ray start threads of
    their own), and Python then runs its handler in the main thread all the same.
    So in the main thread the Python handlers are also replaced, for the block,
    by one that only notes the signal; the old handlers come back and the noted
    signals are raised again when the block ends. Where signals cannot be
    blocked (Windows, or not the main thread of a platform without
    ``pthread_sigmask``) the block runs unprotected; the journal and the
    record-before-rename undo still keep the outputs whole.
    """
    noted: list[int] = []
    handlers: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _HELD_SIGNALS:
            if signal.getsignal(signum) is None:  # set outside Python: left alone
                continue
            with contextlib.suppress(ValueError, OSError):
                handlers[signum] = signal.signal(signum,
                                                 lambda number, frame: noted.append(number))
    block = getattr(signal, "pthread_sigmask", None)
    previous = block(signal.SIG_BLOCK, _HELD_SIGNALS) if block is not None else None
    try:
        yield
    finally:
        for signum, handler in handlers.items():  # back first, while still blocked
            signal.signal(signum, handler)
        if block is not None:
            block(signal.SIG_SETMASK, previous)  # a blocked one reaches its handler here
        for signum in dict.fromkeys(noted):
            signal.raise_signal(signum)


def _new_name(folder: Path, kind: str) -> Path:
    """A fresh leftover-shaped name in `folder` (``.piilab-<pid>-<random>.<kind>``)."""
    return folder / f"{TEMP_PREFIX}{os.getpid() & 0xFFFFFFFF:08x}-{secrets.token_hex(4)}.{kind}"


def _create(folder: Path, kind: str) -> tuple[int, Path]:
    """Create a new 0600 file named by `_new_name`; its descriptor and path."""
    while True:
        name = _new_name(folder, kind)
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), name
        except FileExistsError:
            continue


def _stage(target: Path, data: bytes, mode: int) -> str:
    """Write `data` to a new 0600 temporary file in `target`'s folder; return its name."""
    descriptor, temporary = _create(target.parent, "tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)  # complete now: it may get its final mode
    except BaseException:
        os.unlink(temporary)
        raise
    return str(temporary)


def _backup(target: Path) -> str | None:
    """Keep `target`'s current content under a backup name; None if it does not exist."""
    if not os.path.lexists(target):
        return None
    while True:
        name = str(_new_name(target.parent, "bak"))
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


def _write_journal(folders: Sequence[Path], staged: Sequence[tuple[str, Path]],
                   backups: dict[Path, str | None]) -> list[str]:
    """Write the journal of the renames into every folder involved; return its copies.

    One copy per folder, so the clean-up of any of them finds it. It holds
    absolute file names only, never content.
    """
    names = [str(_new_name(folder, "jnl")) for folder in folders]
    entries = [[os.path.abspath(temporary), os.path.abspath(target),
                None if backups.get(target) is None else os.path.abspath(backups[target])]
               for temporary, target in staged]
    data = json.dumps({"journals": [os.path.abspath(n) for n in names],
                       "renames": entries}).encode()
    written: list[str] = []
    try:
        for name in names:
            descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            written.append(name)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        for folder in folders:
            _sync_folder(folder)
    except BaseException:
        _remove_all(written)
        raise
    return written


def _undo(staged: Sequence[tuple[str, Path]], backups: dict[Path, str | None]) -> None:
    """Put back the old content of every target whose rename happened (never raises).

    A rename happened exactly when its temporary file is gone (`os.replace` is
    atomic), so this holds wherever the interruption fell, inside `os.replace`
    or just after it.
    """
    for temporary, target in reversed(staged):
        if os.path.lexists(temporary):
            continue  # not renamed: the target still has its old content
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


def _remove_all(names: Iterable[str]) -> None:
    for name in names:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (the renames) to disk, where the platform allows it."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


# --- after a killed run ----------------------------------------------------------------------


def _owner_gone(entry: os.DirEntry, pid_hex: str | None) -> bool:
    """True when the process that made this leftover no longer runs."""
    if pid_hex is None:  # an older version's name: judged by age
        with contextlib.suppress(OSError):
            return time.time() - entry.stat(follow_symlinks=False).st_mtime > _UNOWNED_AGE
        return False
    pid = int(pid_hex, 16)
    if pid == os.getpid() & 0xFFFFFFFF:
        return False  # this process: another thread may be writing
    if os.name == "nt":  # os.kill would end the process: judge by age
        with contextlib.suppress(OSError):
            return time.time() - entry.stat(follow_symlinks=False).st_mtime > _UNOWNED_AGE
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists but belongs to someone else
        return False
    return False


def recover(folder: StrPath) -> int:
    """Undo and remove what killed `piilab` processes left in `folder`; return the count.

    A leftover is a file named like this module's temporary files, backups and
    journals whose process no longer runs. A journal is played back first:
    each target it had renamed gets its backup back (or is removed, if it was
    new), so the folder holds the old outputs again; then the journal, the
    temporary files and the backups are deleted. Never raises: what cannot be
    removed stays for a later run.
    """
    try:
        entries = [(entry, match) for entry in os.scandir(folder)
                   if (match := _LEFTOVER.fullmatch(entry.name))]
    except OSError:
        return 0
    stale = [(entry, match.group(2)) for entry, match in entries
             if _owner_gone(entry, match.group(1))]
    if not stale:
        return 0
    with _signals_held():
        for entry, kind in stale:
            if kind == "jnl":
                _play_back(entry.path)
        removed = 0
        for entry, _ in stale:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                elif os.path.lexists(entry.path):
                    os.unlink(entry.path)
                removed += 1
        _sync_folder(Path(folder))
    return removed


def _play_back(journal: str) -> None:
    """Give every target a killed run renamed its old content back; remove the journal."""
    try:
        with open(journal, "rb") as handle:
            record = json.loads(handle.read().decode("utf-8"))
        renames = [(str(t), str(g), None if b is None else str(b))
                   for t, g, b in record["renames"]]
        copies = [str(name) for name in record["journals"]]
    except (OSError, ValueError, KeyError, TypeError):
        # Unreadable: the run was killed while writing it, before any rename.
        with contextlib.suppress(OSError):
            os.unlink(journal)
        return
    for temporary, target, backup in reversed(renames):
        with contextlib.suppress(OSError):
            if os.path.lexists(temporary):
                os.unlink(temporary)  # never renamed: the target is as it was
            elif backup is not None and os.path.lexists(backup):
                os.replace(backup, target)
            elif backup is None and os.path.lexists(target):
                os.unlink(target)  # a new target of the killed run
    for name in [*(b for _, _, b in renames if b is not None), *copies, journal]:
        with contextlib.suppress(OSError):
            os.unlink(name)


@contextlib.contextmanager
def staging_folder(next_to: StrPath) -> Iterator[Path]:
    """A new empty folder beside `next_to` (``.piilab-*.tmp``), removed after the block.

    For outputs that a library writes as a whole folder (a model's
    ``save_pretrained``): build them here, then move them into place with
    `write_all`. A folder left by a killed run is removed by `recover`.
    """
    parent = Path(next_to).parent
    recover(parent)
    while True:
        folder = _new_name(parent, "tmp")
        try:
            folder.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def output_folder(path: StrPath, mode: int = 0o777) -> Iterator[Path]:
    """Create the folder `path` if it is missing; if the block fails, remove it again.

    Only a folder this call created is removed, and only while it is empty,
    so a failed command leaves no empty output folder behind.
    """
    folder = Path(path)
    created = not folder.exists()
    folder.mkdir(mode=mode, parents=True, exist_ok=True)
    try:
        yield folder
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


@contextlib.contextmanager
def publish_folder(target: StrPath) -> Iterator[Path]:
    """Build the new folder `target` all at once: the block fills a staging folder.

    The staging folder (``.piilab-<pid>-<random>.tmp``, mode 0700) is made beside
    `target`, inside the ``try`` that removes it again; when the block ends without
    an error it is renamed to `target`. On an error or an interruption it is
    removed, with Ctrl-C, SIGTERM and SIGHUP held until that is done; one left by
    a killed run is removed by the next `recover` of the folder, which this
    function runs first. `target` must not exist (`OutputError`, checked again
    just before the rename).
    """
    target = Path(target)
    parent = target.parent
    recover(parent)
    stage = _new_name(parent, "tmp")
    with contextlib.ExitStack() as held:
        try:
            while True:
                try:
                    stage.mkdir(mode=0o700)
                    break
                except FileExistsError:
                    stage = _new_name(parent, "tmp")
            yield stage
            held.enter_context(_signals_held())
            if os.path.lexists(target):
                raise OutputError(f"{target}: exists; choose a new folder")
            os.rename(stage, target)
            _sync_folder(parent)
        except BaseException:
            held.enter_context(_signals_held())
            shutil.rmtree(stage, ignore_errors=True)
            raise

"""One writer per map folder, staging folders, and a swap that never leaves `--out` missing.

Every writer of a map folder (`build`, `add`, `curate`) holds `out_lock` from reading the map to
`swap_in`; `recover` undoes what a killed writer left beside the folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import glob
import os
import re
import shutil
import stat
import sys
import time
from pathlib import Path

from pipeline import UserError

_held: dict[Path, tuple[int, int]] = {}  # lock path -> (file descriptor, nesting depth) in this process


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


@contextlib.contextmanager
def out_lock(out: Path, command: str = "build"):
    """Hold the lock of map folder `out` (`.<name>.lock` next to it) or fail at once.

    `command` is what the writer does, as a noun and a verb: "build", "add", "edit" (`curate`); a
    refused writer is told "cannot edit now: an add (pid 42) is writing this map; run this edit
    again when it has finished".

    Every writer of a map folder (`build`, `add`) holds it from the moment it reads the map until
    its swap, so no writer ever replaces a map another one changed in between (a lost update).
    A second writer fails fast, naming its own `command` and the first one's, rather than waiting
    behind it: the user learns at once, and can run it again when the first has finished.
    Re-entrant within one process, so `build` can lock before its work and `write_map` again
    around the swap.
    """
    out = map_path(out)  # `--out .` from inside a map names the map, not ".."; a link names its target
    created = [p for p in [out.parent, *out.parent.parents] if not p.exists()]  # made here, for the lock
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except PermissionError:
        raise UserError(f"{out}: cannot create the folder for --out (permission denied)") from None
    path = lock_path(out)  # never resolved: a link at the lock's name is refused, not followed
    if path in _held:
        fd, depth = _held[path]
        _held[path] = (fd, depth + 1)
        try:
            yield
        finally:
            fd, depth = _held[path]
            _held[path] = (fd, depth - 1)
        return
    while True:
        fd = _open_lock(path, out)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # The holder writes its pid and command just after taking the lock: a writer that started
            # at the same moment may find the file still empty, so it waits a little for the name.
            deadline = time.monotonic() + 2.0
            while (
                not (owner := os.pread(fd, 64, 0).decode(errors="replace").strip())
                and time.monotonic() < deadline
            ):
                time.sleep(0.02)
            pid, _, other = owner.partition(" ")
            os.close(fd)
            holder = f"{_a(other)} (pid {pid})" if other else "another build or add"
            raise UserError(
                f"{out}: cannot {command} now: {holder} is writing this map; "
                f"run this {command} again when it has finished"
            ) from None
        # The file we locked must still be the one at `path`: a writer that finished removes the lock
        # file of a folder it did not create (below), and a lock on a removed file guards nothing.
        try:
            if os.lstat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {command}\n".encode(), 0)
    _held[path] = (fd, 1)
    try:
        yield
    finally:
        fd, depth = _held[path]
        if depth > 1:
            _held[path] = (fd, depth - 1)
        else:
            del _held[path]
            os.ftruncate(fd, 0)
            if not os.path.lexists(out):
                # A failed build into a new folder leaves nothing: not its lock file (a writer that
                # opened it meanwhile sees it gone and opens the new one), nor the folders made for it.
                with contextlib.suppress(OSError):
                    path.unlink()
                for folder in created:
                    with contextlib.suppress(OSError):
                        folder.rmdir()
            os.close(fd)  # closing releases the lock


def _open_lock(path: Path, out: Path) -> int:
    """The lock file at `path`, opened (created if missing) without following a link or waiting on a
    pipe; refused unless it is a plain file of this user's with no other name, which truncating can
    never empty for someone else (a link or a hard link to a user's file, planted beside the map)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except PermissionError:
        raise UserError(f"{out}: cannot write next to --out in {out.parent} (permission denied)") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):  # a link, a folder, a socket
            what = {errno.ELOOP: "a link", errno.EISDIR: "a folder"}.get(exc.errno, "a socket or device")
            raise UserError(_not_our_lock(path, what)) from None
        raise UserError(f"{out}: cannot make its lock file ({exc.strerror or exc})") from None
    info = os.fstat(fd)
    problems = [
        (not stat.S_ISREG(info.st_mode), "not a plain file"),
        (info.st_nlink != 1, "a file with another name too (a hard link)"),
        (info.st_uid != os.geteuid(), "another user's file"),
    ]
    problem = next((what for found, what in problems if found), None)
    if problem:
        os.close(fd)
        raise UserError(_not_our_lock(path, problem))
    return fd


def _not_our_lock(path: Path, what: str) -> str:
    return (
        f"{path}: this map's lock file is {what}, not one a build made; "
        "nothing was written (remove it if no build, add or curate of this map is running)"
    )


def lock_path(out: Path) -> Path:
    """The lock file of map folder `out`: `.<name>.lock` beside it (`out` as `map_path` gives it)."""
    out = map_path(out)
    return out.parent / f".{out.name}.lock"


# Names a writer of map folders owns beside a map: its lock `.<name>.lock`, its staging folder
# `.<name>.tmp-<pid>-<random>` and its backup `.<name>.old-<pid>`. `recover` removes staging and
# backup folders of dead writers, so a user's file in one would be lost: no output is ever written
# at such a name, or inside one (`pipeline.mapfolder.safe_output.check_not_build_owned`).
_BUILD_OWNED = re.compile(r"^\..+\.(?:lock|(?:tmp|old)-.*)$", re.DOTALL)


def build_owned(name: str) -> bool:
    """Whether a file or folder name is one a map writer owns (lock, staging, backup).

    Examples:
        >>> [build_owned(n) for n in (".exp.lock", ".exp.tmp-99-ab", ".exp.old-7", "exp", ".exp.csv")]
        [True, True, True, False, False]
    """
    return bool(_BUILD_OWNED.match(name))


def _a(command: str) -> str:
    return f"an {command}" if command[:1] in "aeiou" else f"a {command}"


def _owner_pid(name: str) -> int | None:
    """The pid in a staging or backup folder's name (`.map.tmp-<pid>-<random>`, `.map.old-<pid>`)."""
    match = re.search(r"\.(?:tmp|old)-(\d+)(?:-|$)", name)
    return int(match.group(1)) if match else None


def leftovers(out: Path, kind: str) -> list[Path]:
    return sorted(out.parent.glob(f".{glob.escape(out.name)}.{kind}-*"))


def recover(out: Path) -> list[str]:
    """Undo what a killed build left next to `out`; call with the lock held. Returns notices.

    A build killed between the two renames of a swap leaves the previous map in `.<name>.old-<pid>`
    and nothing at `out`: it is put back (only a real folder, never a link planted under that name). Staging and backup folders of dead builds are removed;
    a live process's are left alone.
    """
    out = map_path(out)
    notes = []
    # Only a real folder a build set aside is put back: a link planted under that name would make
    # `out` name whatever it points at (the next writer would then write there).
    backups = [
        p
        for p in leftovers(out, "old")
        if p.is_dir() and not p.is_symlink() and not _pid_alive(_owner_pid(p.name) or os.getpid())
    ]
    if not out.exists() and backups:
        latest = max(backups, key=lambda p: p.stat().st_mtime)
        os.replace(latest, out)
        backups.remove(latest)
        notes.append(f"{out}: restored the previous map, which an interrupted build had left aside")
    for stale in backups + leftovers(out, "tmp"):
        pid = _owner_pid(stale.name)
        if pid is not None and pid != os.getpid() and not _pid_alive(pid):
            shutil.rmtree(stale, ignore_errors=True)
    return notes


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if result == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.EOPNOTSUPP):
        return False
    raise OSError(error, os.strerror(error), str(a))


def swap_in(staging: Path, out: Path) -> None:
    """Put the finished `staging` folder at `out` so that `out` always holds a whole map.

    Where the system can exchange two folders atomically, it does; elsewhere the old map is
    renamed aside to `.<name>.old-<pid>` first, and `recover` puts it back if we die in between.
    """
    if not out.exists():
        os.replace(staging, out)
    elif _exchange(staging, out):
        shutil.rmtree(staging, ignore_errors=True)  # now the old map
    else:
        backup = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, backup)
        os.replace(staging, out)
        shutil.rmtree(backup, ignore_errors=True)


def map_path(out: str | Path) -> Path:
    """The map folder `out` names, as every writer and lock sees it: absolute, links followed (a
    `--out` that is a link to a map replaces the map it points to, and keeps the link)."""
    return Path(os.path.realpath(out))

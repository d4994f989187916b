"""One writer for every file a user names as output (`export --out`): it replaces only what the user
handed over as an output, never a map's own files, its lock, its inputs, or anything that is not a
plain writable file.

`write_output` checks the path (`output_target`), then writes a temporary file beside the target and
renames it into place, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from pipeline import UserError
from pipeline.mapfolder.manifest import Manifest
from pipeline.text import shorten

# A file name longer than this (in bytes) leaves no room for the temporary names written beside it
# (`.<name>.tmp-<pid>-<random>`) within the 255 bytes most file systems allow.
MAX_NAME_BYTES = 200
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


# A path (made absolute) longer than this leaves no room for what a writer puts beside or inside it
# (`.<name>.tmp-<pid>-<random>/search.sqlite-journal`) within the 4,096 bytes Linux allows a path;
# one name within it may have 255 bytes.
MAX_PATH_BYTES = 4096 - 96
MAX_PART_BYTES = 255


def path_problem(path: str | Path) -> str | None:
    """Why the system would refuse `path` as too long ("File name too long"), or None.

    Examples:
        >>> path_problem("maps/" + "d" * 300)
        'a name in it is 300 bytes long; at most 255 are allowed'
        >>> path_problem("maps/seeds") is None
        True
    """
    longest = max((len(os.fsencode(part)) for part in Path(path).parts), default=0)
    if longest > MAX_PART_BYTES:
        return f"a name in it is {longest} bytes long; at most {MAX_PART_BYTES} are allowed"
    # As the system sees it: from the working folder, `../` hops and all (`abspath` would fold them
    # away, and a path the system refuses would pass).
    size = len(os.fsencode(Path(path).absolute()))
    if size > MAX_PATH_BYTES:
        return f"the path is {size:,} bytes long; give one of at most {MAX_PATH_BYTES:,}"
    return None


def check_name_length(path: Path, what: str = "--out") -> None:
    """Refuse a name too long to write beside (one `UserError`, not an OSError later)."""
    size = len(os.fsencode(Path(path).name))
    if size > MAX_NAME_BYTES:
        raise UserError(
            f"{shown_path(path)}: {what} name is {size} bytes long; give one of at most {MAX_NAME_BYTES}"
        )


def check_not_build_owned(path: Path, what: str = "--out") -> None:
    """Refuse a `path` that is, or lies inside, a name a map writer owns (`lock.build_owned`: a lock
    file, a staging or backup folder), as given or with links followed: a later build removes such
    folders, and a lock file is what keeps two writers apart."""
    from pipeline.mapfolder.lock import build_owned

    path = Path(path)
    for candidate in dict.fromkeys([Path(os.path.abspath(path)), Path(os.path.realpath(path))]):
        for part in [candidate, *candidate.parents]:
            if build_owned(part.name):
                where = "is" if part == candidate else "is inside"
                raise UserError(
                    f"{shown_path(path)}: {what} {where} {shown_path(part.name, 60)}, a name a map writer keeps "
                    "for itself (a map's lock file .NAME.lock, or a build's .NAME.tmp-* or .NAME.old-* "
                    "folder, which a later build removes); give another name"
                )


def shown_path(path: object, limit: int = 120) -> str:
    """A path for an `error:` line: on one line (line breaks shown as \\n), cut when very long."""
    text = str(path).replace("\r", "\\r").replace("\n", "\\n")
    return shorten(text, limit)


def file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is ("a named pipe (FIFO)"), or None for a regular file."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def map_inputs(map_folder: Path, manifest: Manifest) -> list[Path]:
    """Every path the map's manifest names as an input (its build's and each `add`'s), resolved against
    every folder it may have been relative to: the folder the build ran in (`input_folder`), this
    process's folder, and the map folder's own parents (maps written before `input_folder`)."""
    raw: list[str] = list(manifest.inputs)
    bases: list[Path] = [Path(manifest.input_folder)] if manifest.input_folder else []
    for record in manifest.added:
        raw += record.inputs
        if record.input_folder is not None:
            bases.append(Path(record.input_folder))
    folder = Path(os.path.realpath(map_folder))
    bases += [Path.cwd(), *folder.parents]
    found: list[Path] = []
    for text in raw:
        path = Path(text)
        for base in [Path("/")] if path.is_absolute() else bases:
            with contextlib.suppress(OSError, ValueError):
                found.append(Path(os.path.realpath(base / path)))
    return list(dict.fromkeys(found))


def output_target(out: Path, *, map_folder: Path | None = None, manifest: Manifest | None = None) -> Path:
    """The file `out` names (a symlink's target), or a `UserError` when writing it would replace
    anything the user did not hand over as an output:

    a folder; a file inside a map folder; a name a map writer owns, or a path inside one (a lock
    file, a staging or backup folder: `check_not_build_owned`); an input of the map; a named pipe,
    device or socket; a read-only file.
    """
    from pipeline.mapfolder.files import holds_a_map

    out = Path(out)
    shown = shown_path(out)
    check_name_length(out)
    check_not_build_owned(out)
    if out.is_dir():
        raise UserError(f"{shown}: --out is a folder; give a file name (.csv, .md or .bib)")
    if out.is_symlink() and not out.exists():
        raise UserError(f"{shown}: --out is a link to {os.readlink(out)}, which does not exist")
    target = Path(os.path.realpath(out))  # a link is followed: its target is what gets replaced
    for parent in target.parents:
        if parent.exists() and not parent.is_dir():
            raise UserError(f"{shown}: --out is inside {parent}, which is a file")
    own = None if map_folder is None else Path(os.path.realpath(map_folder))
    for folder in [target.parent, *target.parent.parents]:
        if folder == own or holds_a_map(folder):
            raise UserError(
                f"{shown}: --out is inside the map folder {folder}; write the export outside any map folder"
            )
    inputs = map_inputs(own, manifest or Manifest()) if own is not None else []
    if target in inputs or (target.exists() and any(_same(target, p) for p in inputs)):
        raise UserError(f"{shown}: --out is an input of the map {map_folder}; give another file name")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise UserError(f"{shown}: cannot use --out ({exc.strerror or exc})") from None
    kind = file_kind(info.st_mode)
    if kind:
        raise UserError(f"{shown}: --out is {kind}, not a file; give a file name")
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise UserError(f"{shown}: --out is a read-only file; give another file name or make it writable")
    return target


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_output(
    out: Path, payload: bytes, *, map_folder: Path | None = None, manifest: Manifest | None = None
) -> Path:
    """Check `out` (`output_target`), then write `payload` to it whole; returns the path written."""
    target = output_target(out, map_folder=map_folder, manifest=manifest)
    partial = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(
            prefix=f".{target.name[:60]}.", suffix=".partial", dir=target.parent
        )
        with os.fdopen(handle, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(partial, 0o644 & ~_umask())
        os.replace(partial, target)
    except OSError as exc:
        raise UserError(f"{shown_path(out)}: cannot write the file ({exc.strerror or exc})") from None
    finally:
        if partial is not None and os.path.lexists(partial):
            with contextlib.suppress(OSError):
                os.unlink(partial)
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

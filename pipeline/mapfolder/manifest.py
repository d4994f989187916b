"""manifest.json: how a map was made (schema 2). Read, checked field by field, and typed as `Manifest`."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline import UserError
from pipeline.mapfolder.files import MANIFEST, MAX_TOPIC_ID
from pipeline.mapfolder.lock import leftovers


def read_manifest(folder: Path) -> dict:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        if not Path(folder).exists() and leftovers(Path(folder), "old"):
            raise UserError(
                f"{folder}: missing; an interrupted build left the previous map aside, and the next "
                f"`python -m pipeline build ... --out {folder}` puts it back"
            )
        raise UserError(
            f"{folder}: not a map folder (no {MANIFEST}); build one with `python -m pipeline build`"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: damaged manifest ({exc})") from None
    except PermissionError:
        raise UserError(f"{path}: cannot read the file (permission denied)") from None
    if not isinstance(manifest, dict):
        raise UserError(
            f"{path}: damaged manifest (a JSON {type(manifest).__name__}, not a JSON object); rebuild the map"
        )
    return manifest


# The manifest fields readers rely on, and the JSON each must hold when present (None: may be null).
_WHOLE, _NUMBER, _TEXT, _LIST, _OBJECT = "a whole number", "a number", "text", "a list", "an object"
MANIFEST_FIELDS = {
    "name": (_TEXT, True),
    "papers": (_WHOLE, False),
    "topics": (_WHOLE, False),
    "themes": (_WHOLE, False),
    "unassigned": (_WHOLE, False),
    "kept_added": (_WHOLE, False),
    "abstracts_per_second": (_NUMBER, True),
    "built_at": (_TEXT, True),
    "input_fingerprint": (_TEXT, True),
    "checksum": (_TEXT, True),
    "inputs": (_LIST, True),
    "notes": (_LIST, True),
    "added": (_LIST, True),
    "config": (_OBJECT, True),
    "model": (_OBJECT, True),
    "embedding": (_OBJECT, True),
    "versions": (_OBJECT, True),
    "timings_seconds": (_OBJECT, True),
    "quality": (_OBJECT, True),
    "stability": (_OBJECT, True),
    "lineage": (_OBJECT, True),
    "config.embedder": (_TEXT, True),
    "config.max_tokens": (_WHOLE, True),
    "model.name": (_TEXT, True),
    "model.encoder": (_TEXT, True),
    "model.max_tokens": (_WHOLE, True),
    "lineage.next_topic_id": (_WHOLE, True),
    "lineage.previous": (_OBJECT, True),
}


def _is(value: object, kind: str) -> bool:
    if kind == _WHOLE:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOPIC_ID
    if kind == _NUMBER:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, {_TEXT: str, _LIST: list, _OBJECT: dict}[kind])


def check_manifest(manifest: dict, path: Path) -> None:
    """Refuse a manifest whose fields have the wrong JSON type (text where a count belongs, a list
    for `lineage`, a huge `next_topic_id`): one message naming the field, not a traceback later."""
    for key, (kind, nullable) in MANIFEST_FIELDS.items():
        parent, _, child = key.rpartition(".")
        holder = manifest.get(parent) if parent else manifest
        if not isinstance(holder, dict) or child not in holder:
            continue
        value = holder[child]
        if (value is None and nullable) or _is(value, kind):
            continue
        shown = json.dumps(value, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        raise UserError(f"{path}: damaged manifest ({key} is {shown}, not {kind}); rebuild the map")
    for key, kind in (("notes", str), ("added", dict)):
        if any(not isinstance(item, kind) for item in manifest.get(key) or []):
            raise UserError(
                f"{path}: damaged manifest ({key} holds something other than {kind.__name__}); rebuild the map"
            )

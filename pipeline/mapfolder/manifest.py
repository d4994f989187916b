"""manifest.json: how a map was made (schema 2). Read, checked field by field, and typed as `Manifest`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path

from pipeline import UserError
from pipeline.embedding.model import LEGACY_MAX_TOKENS
from pipeline.mapfolder.files import MANIFEST, MAX_TOPIC_ID
from pipeline.mapfolder.lock import leftovers


def read_manifest(folder: Path) -> dict:
    from pipeline.mapfolder.bounded_json import read_json_file

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
    manifest = read_json_file(path, "damaged manifest")  # bounded: depth, numbers, size
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
    "similarity": (_OBJECT, True),
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


@dataclass(frozen=True)
class Manifest:
    """manifest.json (schema 2) typed: each field a reader uses, with its one default.

    `Manifest.from_dict` reads any map's manifest (an older one lacks fields: they take their
    default); `to_dict` gives the JSON object again, fields in the order the build writes them,
    leaving out those the file did not hold and keeping any field this class does not know.
    `AtlasMap.manifest` stays that plain dict; read it through `Manifest.from_dict`.

    Examples:
        >>> old = Manifest.from_dict({"schema_version": 2, "name": "m", "config": {"max_tokens": 128}})
        >>> old.name, old.model_name, old.max_tokens, old.embedder, old.next_topic_id
        ('m', '', 128, 'onnx-int8', 0)
        >>> old.to_dict()
        {'schema_version': 2, 'name': 'm', 'config': {'max_tokens': 128}}
    """

    schema_version: int | None = None  # SCHEMA_VERSION for a map this code can read
    name: str = ""
    papers: int = 0
    topics: int = 0
    themes: int | None = None
    stability: dict | None = None
    unassigned: int = 0
    inputs: list[str] = field(default_factory=list)
    input_folder: str | None = None  # the folder relative `inputs` are in (where the build ran)
    notes: list[str] = field(default_factory=list)
    config: dict = field(default_factory=dict)  # the resolved BuildConfig.to_dict()
    model: dict = field(default_factory=dict)  # name, encoder, max_tokens, bundle, sha256
    embedding: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    numeric: dict = field(
        default_factory=dict
    )  # `pipeline.numeric_target()`: the code the numeric libraries ran
    timings_seconds: dict = field(default_factory=dict)
    abstracts_per_second: float | None = None
    quality: dict = field(default_factory=dict)
    similarity: dict = field(
        default_factory=dict
    )  # the map's pair similarities (`pipeline.modelling.floors`)
    input_fingerprint: str | None = None
    kept_added: int = 0
    lineage: dict = field(
        default_factory=dict
    )  # previous, next_topic_id, next_theme_id, themes, refit, carried_settings, edits
    built_at: str | None = None
    added: list[dict] = field(default_factory=list)  # one record per `add`
    checksum: str | None = None  # written by write_map
    curation: dict | None = None  # set by read_map when it applied the map's edits
    extra: dict = field(default_factory=dict)  # fields this class does not know, kept as they are
    # Fields the file did not hold, left out by to_dict while they keep their default; a build
    # writes all but these.
    absent: frozenset[str] = frozenset({"added", "checksum", "curation"})

    @classmethod
    def from_dict(cls, raw: Mapping) -> Manifest:
        """The typed manifest of a JSON object `check_manifest` accepted (or a build's dict)."""
        known = {f.name for f in fields(cls)} - {"extra", "absent"}
        values = {key: raw[key] for key in known if key in raw and raw[key] is not None}
        values = {key: value for key, value in values.items() if _fits(cls, key, value)}
        return cls(
            **values,
            extra={key: value for key, value in raw.items() if key not in known},
            absent=frozenset(key for key in known if key not in raw),
        )

    def to_dict(self) -> dict:
        """The JSON object `write_map` writes (the `checksum` it sets itself)."""
        out = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in ("extra", "absent") or (item.name in self.absent and value == _default(item)):
                continue
            out[item.name] = value
        return {**out, **self.extra}

    # ---- what readers ask, each answered here once ----

    @property
    def model_name(self) -> str:
        """The embedding model's name ("sentence-transformers/all-MiniLM-L6-v2"); "" if not recorded."""
        return str(self.model.get("name") or "")

    @property
    def encoder(self) -> str:
        """The encoder the vectors came from ("all-MiniLM-L6-v2/onnx-int8-x86-t192"); "" if not recorded."""
        return str(self.model.get("encoder") or "")

    @property
    def embedder(self) -> str:
        """The `--embedder` the map was built with."""
        return str(self.config.get("embedder") or "onnx-int8")

    @property
    def max_tokens(self) -> int:
        """Word pieces embedded per abstract: what a query must use to land in the map's space.
        Recorded in `model` and `config` alike; maps from before it was recorded used 256."""
        return int(self.model.get("max_tokens") or self.config.get("max_tokens") or LEGACY_MAX_TOKENS)

    @property
    def bundle(self) -> str | None:
        """The int8 model folder under assets/models/ the map's vectors came from, if recorded."""
        return self.model.get("bundle") or None

    @property
    def sha256(self) -> str | None:
        """The digest of that bundle's model.onnx, if recorded."""
        return self.model.get("sha256") or None

    @property
    def next_topic_id(self) -> int:
        """The lowest id a new topic may take (ids are never reused)."""
        return int(self.lineage.get("next_topic_id") or 0)

    @property
    def previous_name(self) -> str | None:
        """The name of the map this one was matched to, if any."""
        return (self.lineage.get("previous") or {}).get("name")


def _default(item: Field) -> object:
    return item.default_factory() if item.default_factory is not MISSING else item.default


def _fits(cls: type, key: str, value: object) -> bool:
    """Whether `value` has the JSON type of field `key` (a mistyped field reads as its default)."""
    default = _default(next(f for f in fields(cls) if f.name == key))
    if isinstance(default, list | dict):
        return isinstance(value, type(default))
    if key in ("stability", "curation"):
        return isinstance(value, dict)
    if key in ("name", "input_fingerprint", "built_at", "checksum"):
        return isinstance(value, str)
    return isinstance(value, int | float) and not isinstance(value, bool)

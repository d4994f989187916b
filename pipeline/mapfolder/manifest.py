"""manifest.json: how a map was made (schema 2), typed as `Manifest` from one field table.

Each block of the manifest (the whole, `config`, `model`, `lineage`, `lineage.previous`, a record of
`added`, `curation`) is a frozen dataclass whose fields are its table: name, JSON type, nullable,
default (`entry`). The check (`Manifest.from_dict(raw, path)`), the reading (`from_dict`) and the
writing (`to_dict`) all read that table; `MANIFEST_FIELDS` lists it flat, dotted names first to last.
The schema is additive: keys the table does not know are kept as they are and written back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pipeline import UserError
from pipeline.embedding.model import LEGACY_MAX_TOKENS
from pipeline.mapfolder.files import MANIFEST, MAX_TOPIC_ID
from pipeline.mapfolder.lock import leftovers
from pipeline.text import shorten


@dataclass(frozen=True)
class Kind:
    """A JSON type a field holds, named as a refusal names it ("lineage.next_topic_id is "many", not
    a whole number")."""

    said: str
    fits: Callable[[object], bool]


MAX_WHOLE = 2**62  # counts and sizes: far above any map, within int64
WHOLE = Kind(
    "a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_WHOLE
)
# The next free topic or theme id: ids run from 0 to `MAX_TOPIC_ID`, the one limit every reader checks.
NEXT_ID = Kind(
    f"a whole number from 0 to {MAX_TOPIC_ID + 1:,}",
    lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_TOPIC_ID + 1,
)
NUMBER = Kind("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool))
TEXT = Kind("text", lambda v: isinstance(v, str))
TRUTH = Kind("true or false", lambda v: isinstance(v, bool))
# A build's seconds by stage ({"embed": 61.2, "topics": 8.1, ...}).
SECONDS = Kind(
    "an object of seconds by stage",
    lambda v: isinstance(v, dict) and all(NUMBER.fits(s) and s >= 0 for s in v.values()),
)
LIST = Kind("a list", lambda v: isinstance(v, list))
OBJECT = Kind("an object", lambda v: isinstance(v, dict))


@dataclass(frozen=True)
class Spec:
    """One field's row of the table besides its name and default (the dataclass field's)."""

    kind: Kind
    nullable: bool = True  # may be null in the file (it then reads as the default)
    optional: bool = False  # a writer may leave it out: a block made in code does not write it at its default
    items: Kind | type[Block] | None = None  # what a list holds
    block: type[Block] | None = None  # an object read as this typed block


def entry(
    kind: Kind | type[Block],
    default: object = None,
    *,
    factory: Callable[[], object] | None = None,
    nullable: bool = True,
    optional: bool = False,
    items: Kind | type[Block] | None = None,
) -> Any:
    """A table row: a dataclass field of JSON type `kind` (a `Block` class: an object of that block)."""
    block = kind if isinstance(kind, type) else None
    spec = Spec(OBJECT if block else kind, nullable, optional, items, block)
    if factory is not None:
        return field(default_factory=factory, metadata={"json": spec})
    return field(default=default, metadata={"json": spec})


class Row(NamedTuple):
    name: str
    spec: Spec
    default: object


B = TypeVar("B", bound="Block")


@dataclass(frozen=True, kw_only=True)
class Block:
    """A JSON object read through its field table; what the table does not know is kept."""

    extra: dict = field(default_factory=dict, repr=False)  # unknown keys, kept as they are
    # Table fields the file did not hold (None: the block was made in code, and leaves out its
    # optional fields), left out by to_dict while they hold their default.
    absent: frozenset[str] | None = field(default=None, repr=False, compare=False)
    # Fields the file held as null (they read as their default, and are written back null).
    nulls: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @classmethod
    def empty(cls: type[B]) -> B:
        """The block a file without it reads as: every field at its default, none written."""
        return cls.from_dict({})

    @classmethod
    def table(cls) -> list[Row]:
        return [Row(f.name, f.metadata["json"], _default(f)) for f in fields(cls) if "json" in f.metadata]

    @classmethod
    def from_dict(cls: type[B], raw: Mapping, path: Path | None = None, *, at: str = "") -> B:
        """The typed block of the JSON object `raw`. Given the `path` it was read from, a field of the
        wrong JSON type (or null where it may not be) is a `UserError` naming the field and the file;
        without, such a field reads as its default. Null reads as the default and is written back null."""
        values: dict[str, object] = {}
        nulls: set[str] = set()
        table = cls.table()
        for row in table:
            if row.name not in raw:
                continue
            value, key = raw[row.name], at + row.name
            if value is None:
                if not row.spec.nullable:
                    _refuse(path, key, value, row.spec.kind)
                if row.default is not None:
                    nulls.add(row.name)
                continue
            if not row.spec.kind.fits(value):
                _refuse(path, key, value, row.spec.kind)
                continue
            values[row.name] = _typed(row.spec, value, path, key)
        known = {row.name for row in table}
        return cls(
            **values,
            extra={key: value for key, value in raw.items() if key not in known},
            absent=frozenset(name for name in known if name not in raw),
            nulls=frozenset(nulls),
        )

    def holds(self, name: str) -> bool:
        """Whether the file held the field `name` (a block made in code holds all but its optional ones)."""
        return name not in self._absent()

    def _absent(self) -> frozenset[str]:
        if self.absent is not None:
            return self.absent
        return frozenset(row.name for row in self.table() if row.spec.optional)

    def to_dict(self) -> dict:
        """The JSON object again: the table's fields in its order, then the keys it does not know."""
        absent = self._absent()
        out: dict[str, object] = {}
        for row in self.table():
            value = getattr(self, row.name)
            if value == row.default and row.name in absent:
                continue
            out[row.name] = None if value == row.default and row.name in self.nulls else _json(value)
        return {**out, **self.extra}


def _default(item: Field) -> object:
    return item.default_factory() if item.default_factory is not MISSING else item.default


def _refuse(path: Path | None, key: str, value: object, kind: Kind) -> None:
    if path is None:
        return  # read leniently: the field takes its default
    shown = json.dumps(value, ensure_ascii=False, default=str)
    shown = shorten(shown, 40)
    raise UserError(f"{path}: damaged manifest ({key} is {shown}, not {kind.said}); rebuild the map")


def _typed(spec: Spec, value: object, path: Path | None, key: str) -> object:
    if spec.block is not None:
        return spec.block.from_dict(value, path, at=key + ".")  # type: ignore[arg-type]
    if spec.items is None:
        return value
    typed = []
    for number, item in enumerate(value):  # type: ignore[arg-type]
        kind = OBJECT if isinstance(spec.items, type) else spec.items
        if not kind.fits(item):
            _refuse(path, f"{key}[{number}]", item, kind)
            continue
        typed.append(
            spec.items.from_dict(item, path, at=f"{key}[{number}].") if isinstance(spec.items, type) else item
        )
    return typed


def _json(value: object) -> object:
    if isinstance(value, Block):
        return value.to_dict()
    if isinstance(value, list):
        return [_json(item) for item in value]
    return value


# ---- the blocks, each field a row: name, JSON type, nullable, default ----


@dataclass(frozen=True)
class ConfigBlock(Block):
    """`config`: the resolved `BuildConfig.to_dict()`. The two settings a reader of the map needs are
    typed; the rest are kept as written (`settings` gives them all)."""

    embedder: str = entry(TEXT, "onnx-int8")  # the `--embedder` the map was built with
    max_tokens: int | None = entry(WHOLE)

    @property
    def settings(self) -> dict:
        """Every setting, as the file holds them."""
        return self.to_dict()


@dataclass(frozen=True)
class ModelBlock(Block):
    """`model`: the embedding model the map's vectors came from."""

    name: str = entry(TEXT, "")  # "sentence-transformers/all-MiniLM-L6-v2"
    encoder: str = entry(TEXT, "")  # "…/onnx-int8-x86-r3-t192": model, variant and token budget
    max_tokens: int | None = entry(WHOLE)
    bundle: str | None = entry(TEXT, optional=True)  # the int8 model folder under assets/models/
    sha256: str | None = entry(TEXT, optional=True)  # the digest of that bundle's model.onnx


@dataclass(frozen=True)
class PreviousBlock(Block):
    """`lineage.previous`: the map this one was matched to."""

    name: str = entry(TEXT, "")
    fingerprint: str | None = entry(TEXT)


@dataclass(frozen=True)
class LineageBlock(Block):
    """`lineage`: how the map's ids and settings follow from the previous map's."""

    previous: PreviousBlock | None = entry(PreviousBlock)  # null: numbered afresh
    next_topic_id: int = entry(NEXT_ID, 0)  # ids below it were used and are never given to a new topic
    next_theme_id: int = entry(NEXT_ID, 0)
    themes: list[dict] = entry(LIST, factory=list, items=OBJECT)  # `pipeline.modelling.theme_lineage` records
    refit: bool = entry(TRUTH, False)  # fitted afresh (True) or the previous map's settings carried
    carried_settings: dict = entry(OBJECT, factory=dict)
    edits: dict = entry(
        OBJECT, factory=dict
    )  # the curation edits the build applied and those left for review


@dataclass(frozen=True)
class AddedBlock(Block):
    """One record of `added`: one `python -m pipeline add` run since the last full build."""

    at: str = entry(TEXT, "")
    inputs: list[str] = entry(LIST, factory=list, items=TEXT)
    input_folder: str | None = entry(TEXT)
    papers: int = entry(WHOLE, 0)
    skipped: int = entry(WHOLE, 0)
    refused: int = entry(WHOLE, 0)
    outside_topics: int = entry(WHOLE, 0)
    unassigned: int = entry(WHOLE, 0)


@dataclass(frozen=True)
class CurationBlock(Block):
    """`curation`: set by `read_map` when it applied the map's edits (not written by a build)."""

    edits: int = entry(WHOLE, 0)
    applied: list[int] = entry(LIST, factory=list)
    review: list[int] = entry(LIST, factory=list)


NAME_GIVEN, NAME_DERIVED = "given", "derived"  # `Manifest.name_source`


@dataclass(frozen=True)
class Manifest(Block):
    """manifest.json (schema 2) typed: each field with its one default.

    `Manifest.from_dict` reads any map's manifest (an older one lacks fields: they take their
    default); `to_dict` gives the JSON object again, fields in the order the build writes them,
    leaving out those the file did not hold and keeping any key the table does not know.

    Examples:
        >>> old = Manifest.from_dict({"schema_version": 2, "name": "m", "config": {"max_tokens": 128}})
        >>> old.name, old.model.name, old.max_tokens, old.config.embedder, old.lineage.next_topic_id
        ('m', '', 128, 'onnx-int8', 0)
        >>> old.to_dict()
        {'schema_version': 2, 'name': 'm', 'config': {'max_tokens': 128}}
    """

    schema_version: int | None = entry(WHOLE)  # SCHEMA_VERSION for a map this code can read
    name: str = entry(TEXT, "")
    # NAME_GIVEN (`--name`) or NAME_DERIVED (from the inputs: derived again by a rebuild); None: older maps
    name_source: str | None = entry(TEXT)
    papers: int = entry(WHOLE, 0, nullable=False)
    topics: int = entry(WHOLE, 0, nullable=False)
    themes: int | None = entry(WHOLE, nullable=False)
    stability: dict | None = entry(OBJECT)  # runs, method, seconds
    unassigned: int = entry(WHOLE, 0, nullable=False)
    inputs: list[str] = entry(LIST, factory=list, items=TEXT)
    input_folder: str | None = entry(TEXT)  # the folder relative `inputs` are in (where the build ran)
    notes: list[str] = entry(LIST, factory=list, items=TEXT)
    config: ConfigBlock = entry(ConfigBlock, factory=ConfigBlock.empty)
    model: ModelBlock = entry(ModelBlock, factory=ModelBlock.empty)
    embedding: dict = entry(OBJECT, factory=dict)  # encoder, cached, from_map, computed, speeds
    versions: dict = entry(OBJECT, factory=dict)
    numeric: dict = entry(
        OBJECT, factory=dict
    )  # `pipeline.numeric_target()`: the code the numeric libraries ran
    timings_seconds: dict[str, float] = entry(SECONDS, factory=dict)  # the stage table the build printed
    abstracts_per_second: float | None = entry(NUMBER)
    quality: dict = entry(OBJECT, factory=dict)
    similarity: dict = entry(
        OBJECT, factory=dict
    )  # the map's pair similarities (`pipeline.modelling.floors`)
    input_fingerprint: str | None = entry(TEXT)
    kept_added: int = entry(WHOLE, 0, nullable=False)
    lineage: LineageBlock = entry(LineageBlock, factory=LineageBlock.empty)
    built_at: str | None = entry(TEXT)
    added: list[AddedBlock] = entry(LIST, factory=list, items=AddedBlock, optional=True)
    checksum: str | None = entry(TEXT, optional=True)  # written by write_map
    curation: CurationBlock | None = entry(CurationBlock, optional=True)
    synthetic: bool = entry(
        TRUTH, False, optional=True
    )  # a benchmark's stand-in map (`benchmarks/bench_app.py`)

    # ---- what readers ask of more than one field, answered here once ----

    @property
    def max_tokens(self) -> int:
        """Word pieces embedded per abstract: what a query must use to land in the map's space.
        Recorded in `model` and `config` alike; maps from before it was recorded used 256."""
        return int(self.model.max_tokens or self.config.max_tokens or LEGACY_MAX_TOKENS)

    @property
    def previous_name(self) -> str | None:
        """The name of the map this one was matched to, if any."""
        return self.lineage.previous.name if self.lineage.previous is not None else None


class FieldRow(NamedTuple):
    name: str  # dotted: "lineage.next_topic_id", "added[].papers"
    kind: str
    nullable: bool
    default: object


def field_table(block: type[Block] = Manifest, at: str = "") -> list[FieldRow]:
    """Every field of `block` and of the blocks within it, flat, in the order they are written."""
    rows = []
    for row in block.table():
        inner = row.spec.block or (row.spec.items if isinstance(row.spec.items, type) else None)
        default = None if isinstance(row.default, Block) else row.default
        rows.append(FieldRow(at + row.name, row.spec.kind.said, row.spec.nullable, default))
        if inner is not None:
            rows += field_table(inner, at + row.name + ("[]." if row.spec.items else "."))
    return rows


MANIFEST_FIELDS = field_table()


def read_manifest(folder: Path, *, check: bool = True, schema: int | None = None) -> Manifest:
    """The manifest of the map in `folder`. With `check` a field of the wrong JSON type is a
    `UserError` naming it (without, it reads as its default); with `schema`, so is a manifest of
    another `schema_version`."""
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
    raw = read_json_file(path, "damaged manifest")  # bounded: depth, numbers, size
    if not isinstance(raw, dict):
        raise UserError(
            f"{path}: damaged manifest (a JSON {type(raw).__name__}, not a JSON object); rebuild the map"
        )
    if schema is not None and raw.get("schema_version") != schema:
        raise UserError(
            f"{path}: schema_version {raw.get('schema_version')!r} is not {schema}; rebuild the map"
        )
    return Manifest.from_dict(raw, path if check else None)

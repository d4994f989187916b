"""Topic colours that stay distinguishable for 50+ topics (a Glasbey-style palette), plus the neutral greys."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

UNASSIGNED_COLOUR = "#9aa0a6"  # a named, visible grey: noise is never silently dropped
CONTEXT_COLOUR = "#d9dde3"  # papers outside the current filters or search, drawn faintly for context
_SEED_COLOURS = ("#1f6fd1", "#e4572e", "#2a9d5c", "#8e44ad", "#f0a202")


def _srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB rows in [0, 1]: distances there follow what people see."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = linear @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.column_stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])])


def _hex(rgb: np.ndarray) -> str:
    return "#" + "".join(f"{round(float(c) * 255):02x}" for c in rgb)


@lru_cache(maxsize=8)
def distinct_colours(n: int) -> tuple[str, ...]:
    """`n` colours, each chosen as far (in CIELAB) from all earlier ones as the candidates allow.

    Candidates exclude greys (kept for unassigned papers), near-whites that vanish on the light
    background, near-blacks that read as text and neon hues. The first colours are fixed, familiar hues.

    Examples:
        >>> colours = distinct_colours(60)
        >>> len(set(colours)), colours[0]
        (60, '#1f6fd1')
    """
    if n <= 0:
        return ()
    steps = np.linspace(0, 1, 18)
    grid = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 3)
    lab = _srgb_to_lab(grid)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    keep = (lab[:, 0] > 38) & (lab[:, 0] < 72) & (chroma > 30) & (chroma < 80)
    grid, lab = grid[keep], lab[keep]
    seeds = np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in _SEED_COLOURS])
    chosen = [_hex(c) for c in seeds[:n]]
    distance = np.min(np.linalg.norm(lab[:, None, :] - _srgb_to_lab(seeds)[None, :, :], axis=2), axis=1)
    while len(chosen) < n:
        best = int(np.argmax(distance))
        chosen.append(_hex(grid[best]))
        distance = np.minimum(distance, np.linalg.norm(lab - lab[best], axis=1))
    return tuple(chosen)


def _lab_to_srgb(lab: np.ndarray) -> np.ndarray:
    """sRGB rows in [0, 1] of CIELAB (D65) rows, clipped to the displayable range (inverse of `_srgb_to_lab`)."""
    fy = (lab[:, 0] + 16) / 116
    f = np.column_stack([fy + lab[:, 1] / 500, fy, fy - lab[:, 2] / 200])
    xyz = np.where(f > 0.206893, f**3, (f - 16 / 116) / 7.787) * np.array([0.95047, 1.0, 1.08883])
    to_rgb = np.linalg.inv(
        np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    )
    linear = np.clip(xyz @ to_rgb.T, 0, 1)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def _shades(base: str, count: int) -> list[str]:
    """`count` colours of one theme around `base`: lightness from darker to lighter, and, past two,
    the hue turned by up to `HUE_STEP` degrees either way in four steps taken in a stride, so topics
    next to each other in lightness differ in hue too. The topics of a big theme stay told apart
    (eight of one theme differ pairwise by more than 10 in CIELAB on every theme hue of the
    palette) while the theme still reads as one colour family.

    Examples:
        >>> shades = _shades("#1f6fd1", 8)
        >>> lab = _srgb_to_lab(np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in shades]))
        >>> bool(min(np.linalg.norm(lab[i] - lab[j]) for i in range(8) for j in range(i)) > 10)
        True
    """
    if count == 1:
        return [base]
    rgb = np.array([[int(base[i : i + 2], 16) / 255 for i in (1, 3, 5)]])
    lightness, a, b = _srgb_to_lab(rgb)[0]
    chroma, angle = np.hypot(a, b), np.arctan2(b, a)
    steps = np.linspace(-1, 1, count)
    spread = min(20.0, 6.0 * count)  # two shades differ by 12 L*, eight by 6 L* and a hue step
    turns = np.linspace(-1, 1, min(4, count)) if count > 2 else np.zeros(1)
    rows = []
    for i, s in enumerate(steps):
        turn = angle + np.radians(HUE_STEP) * turns[(i * (len(turns) // 2 + 1)) % len(turns)]
        c = chroma * (1 - 0.15 * s)
        rows.append([np.clip(lightness + spread * s, 30, 80), c * np.cos(turn), c * np.sin(turn)])
    return [_hex(c) for c in _lab_to_srgb(np.array(rows))]


# How far a theme's topics turn from its hue, either way (degrees in CIELAB's a*b* plane).
HUE_STEP = 36.0


def theme_topic_colours(topic_ids_by_size: list[int], theme_of: dict[int, int]) -> dict[int, str]:
    """Colour per topic as a shade of its theme's hue, so the map shows themes at a glance; -1 is grey.

    A theme's hue follows its id, not its rank: theme `h` takes the palette's colour number `h`
    (`distinct_colours` picks each colour from the earlier ones only, so colour `h` is the same
    however many there are). A theme that keeps its id (`pipeline.modelling.theme_lineage`) keeps
    its colour through curation and rebuilds, whatever other themes grow, shrink or go. Its topics
    are shades of that hue by topic id, from dark (the lowest id: on a first build, the largest
    topic) to light. Topics without a theme (-1) get hues after every theme's, by topic id.

    Examples:
        >>> colours = theme_topic_colours([0, 1, 2], {0: 5, 1: 7, 2: 5})
        >>> colours[0] != colours[2], colours[1] == distinct_colours(8)[7], colours[-1]
        (True, True, '#9aa0a6')
        >>> theme_topic_colours([1, 0], {0: 3, 1: 0})[1] == distinct_colours(1)[0]  # theme 0's hue, whatever its rank
        True
    """
    topics = [int(t) for t in topic_ids_by_size if int(t) != -1]
    theme_ids = sorted({theme_of.get(t, -1) for t in topics} - {-1})
    first_own = max(theme_ids) + 1 if theme_ids else 0
    own = sorted(t for t in topics if theme_of.get(t, -1) == -1)
    palette = distinct_colours(first_own + len(own))
    groups = [(palette[h], sorted(t for t in topics if theme_of.get(t, -1) == h)) for h in theme_ids]
    groups += [(palette[first_own + rank], [topic]) for rank, topic in enumerate(own)]
    colours = {}
    for hue, members in groups:
        colours.update(zip(members, _shades(hue, len(members)), strict=True))
    colours[-1] = UNASSIGNED_COLOUR
    return colours


def value_colours(count: int) -> tuple[str, ...]:
    """Colours for the values of a metadata column the map is coloured by (missing values use grey)."""
    return distinct_colours(count)


MAX_COLOUR_VALUES = 20  # a column with more values would need colours no reader can tell apart


def colour_columns(facets: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Metadata columns the map can be coloured by: filterable columns with at most `MAX_COLOUR_VALUES` values.

    Examples:
        >>> colour_columns({"year": ("2023", "2024"), "venue": tuple("abcdefghijklmnopqrstu")})
        ('year',)
    """
    return tuple(column for column, values in facets.items() if 2 <= len(values) <= MAX_COLOUR_VALUES)

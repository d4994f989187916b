"""The map's colours: twelve theme colours far apart, each theme's topics shades within its hue band,
distinct colours (Glasbey-style) for maps without themes and for a metadata column's values, and the
neutral greys."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

UNASSIGNED_COLOUR = "#9aa0a6"  # a named, visible grey: noise is never silently dropped
CONTEXT_COLOUR = "#d9dde3"  # papers outside the current filters or search, drawn faintly for context
_SEED_COLOURS = ("#1f6fd1", "#e4572e", "#2a9d5c", "#8e44ad", "#f0a202")
_RGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
_WHITE = np.array([0.95047, 1.0, 1.08883])  # D65


def _linear(rgb: np.ndarray) -> np.ndarray:
    """Linear light of sRGB rows in [0, 1]."""
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB rows in [0, 1]: distances there follow what people see."""
    xyz = _linear(rgb) @ _RGB_TO_XYZ.T / _WHITE
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
    seeds = _SEED_COLOURS[:n]
    return (*seeds, *_farthest(lab_of(seeds), n - len(seeds)))


# Twelve theme colours, in the order themes take them (each far from those before it, so a map of few
# themes gets the most different ones): their OKLab hues 30 degrees apart around the circle (OKLab, as
# hue there stays what a reader sees when a colour is lightened, where CIELAB's blue turns purple),
# their lightness and chroma chosen by a search over the sRGB gamut for the largest smallest CIELAB
# distance between any two (35.9; `test_app_helpers` checks at least 25).
THEME_COLOURS = (
    "#2340be", "#fc8800", "#0ab744", "#b9186a", "#00cfe2", "#bb0916",
    "#86068a", "#b0c500", "#00816e", "#b18bff", "#0090cd", "#ae8600",
)  # fmt: skip
# A topic's colour stays within this many degrees of its theme's OKLab hue: half the gap between two
# theme hues (30 degrees) less a margin, so each topic reads as its own theme's colour and no other's.
HUE_BAND = 10.0
HUE_TURN = 6.0  # how far a topic turns from its theme's hue at most: well inside the band
MIN_TOPIC_CHROMA = 0.08  # OKLab chroma: topics stay colours, never near the greys of unassigned papers
_LMS = np.array(
    [[0.4122214708, 0.5363325363, 0.0514459929], [0.2119034982, 0.6806995451, 0.1073969566],
     [0.0883024619, 0.2817188376, 0.6299787005]]
)  # fmt: skip
_OKLAB = np.array(
    [[0.2104542553, 0.7936177850, -0.0040720468], [1.9779984951, -2.4285922050, 0.4505937099],
     [0.0259040371, 0.7827717662, -0.8086757660]]
)  # fmt: skip


def _hex_rows(colours) -> np.ndarray:
    return np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colours])


def lab_of(colours) -> np.ndarray:
    """CIELAB rows of "#rrggbb" colours."""
    return _srgb_to_lab(_hex_rows(colours))


def oklab_of(colours) -> np.ndarray:
    """OKLab rows (L, a, b) of "#rrggbb" colours."""
    return np.cbrt(_linear(_hex_rows(colours)) @ _LMS.T) @ _OKLAB.T


def _oklab_to_linear(lab: np.ndarray) -> np.ndarray:
    """Linear sRGB rows of OKLab rows, unclipped (outside [0, 1] where sRGB cannot show them)."""
    return (lab @ np.linalg.inv(_OKLAB).T) ** 3 @ np.linalg.inv(_LMS).T


def _linear_to_hex(linear: np.ndarray) -> str:
    linear = np.clip(linear, 0, 1)
    return _hex(np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055))


@lru_cache(maxsize=64)
def theme_colour(slot: int) -> str:
    """The colour of the theme in `slot`: `THEME_COLOURS` first; past twelve, further colours each as
    far in CIELAB from the twelve and from one another as the gamut allows (closer than 30: a map of so
    many themes tells some apart by lightness more than by hue)."""
    if slot < len(THEME_COLOURS):
        return THEME_COLOURS[slot]
    return _farthest(lab_of(THEME_COLOURS), slot + 1 - len(THEME_COLOURS))[-1]


@lru_cache(maxsize=1)
def _candidates() -> tuple[np.ndarray, np.ndarray]:
    """sRGB colours on an 18-step grid that read as colours on the page (no greys, near-whites or near-blacks)."""
    steps = np.linspace(0, 1, 18)
    grid = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 3)
    lab = _srgb_to_lab(grid)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    keep = (lab[:, 0] > 38) & (lab[:, 0] < 72) & (chroma > 30) & (chroma < 80)
    return grid[keep], lab[keep]


def _in_gamut(lightness: np.ndarray, chroma: float, hue: np.ndarray) -> np.ndarray:
    """The largest OKLab chroma up to `chroma` that sRGB shows at each OKLab lightness and hue (degrees)."""
    low, high = np.zeros(len(lightness)), np.full(len(lightness), chroma)
    for _ in range(20):
        mid = (low + high) / 2
        lab = np.column_stack([lightness, mid * np.cos(np.radians(hue)), mid * np.sin(np.radians(hue))])
        linear = _oklab_to_linear(lab)
        shown = ((linear >= 0) & (linear <= 1)).all(axis=1)
        low, high = np.where(shown, mid, low), np.where(shown, high, mid)
    return low


@lru_cache(maxsize=64)
def _shade_sequence(base: str, count: int) -> tuple[str, ...]:
    """The first `count` colours of a theme's topics: the theme's own colour, then each the farthest in
    CIELAB from those before it among the colours of the theme's hue band (OKLab hue within
    `HUE_BAND` of the theme's, OKLab lightness 0.40-0.86, chroma at least `MIN_TOPIC_CHROMA`). The
    sequence does not depend on `count`: a topic's colour depends only on its rank in its theme.

    Examples:
        >>> shades = _shade_sequence("#2340be", 8)
        >>> lab = lab_of(shades)
        >>> shades[0], bool(min(np.linalg.norm(lab[i] - lab[j]) for i in range(8) for j in range(i)) > 10)
        ('#2340be', True)
    """
    _, a, b = oklab_of([base])[0]
    hue = float(np.degrees(np.arctan2(b, a)))
    light, turn = (
        g.ravel()
        for g in np.meshgrid(np.arange(0.40, 0.861, 0.02), np.arange(-HUE_TURN, HUE_TURN + 0.1, 2.0))
    )
    chroma = _in_gamut(light, 0.25, hue + turn)  # inside the band, hex rounding and all
    keep = chroma >= MIN_TOPIC_CHROMA
    angle = np.radians(hue + turn[keep])
    oklab = np.column_stack([light[keep], chroma[keep] * np.cos(angle), chroma[keep] * np.sin(angle)])
    colours = [_linear_to_hex(row) for row in _oklab_to_linear(oklab)]
    candidates = lab_of(colours)
    chosen = [base]
    distance = np.linalg.norm(candidates - lab_of([base])[0], axis=1)
    while len(chosen) < count:
        best = int(np.argmax(distance))
        chosen.append(colours[best])
        distance = np.minimum(distance, np.linalg.norm(candidates - candidates[best], axis=1))
    return tuple(chosen)


def _shades(base: str, count: int) -> list[str]:
    """`count` topic colours of a theme whose colour is `base` (`_shade_sequence`, built in steps of 8)."""
    return list(_shade_sequence(base, -(-count // 8) * 8)[:count])


def theme_slots(theme_ids) -> dict[int, int]:
    """Each theme's place in `THEME_COLOURS`: its id's (modulo twelve) unless a lower id took it, then
    the first free one, so up to twelve themes never share a colour, and a theme keeps its colour
    through rebuilds that keep its id (`pipeline.modelling.theme_lineage`) while lower ids keep theirs.

    Examples:
        >>> theme_slots([0, 2, 12, 14])
        {0: 0, 2: 2, 12: 1, 14: 3}
    """
    slots: dict[int, int] = {}
    taken: set[int] = set()
    size = len(THEME_COLOURS)
    for theme in sorted(int(t) for t in theme_ids):
        slot = theme % size
        if slot in taken:
            free = [s for s in range(size) if s not in taken]
            slot = free[0] if free else max(taken) + 1  # past twelve themes: further colours (`theme_colour`)
        taken.add(slot)
        slots[theme] = slot
    return slots


def theme_topic_colours(
    topic_ids_by_size: list[int], theme_of: dict[int, int]
) -> tuple[dict[int, str], dict[int, str]]:
    """Colour per topic, as a shade of its theme's colour, so the map shows themes at a glance (-1 is
    grey), and each theme's colour (what the key shows).

    A theme's colour follows its id, not its rank (`theme_slots`). Its topics take the shades of its
    colour by topic id (`_shade_sequence`): the lowest id (on a first build, the largest topic) the
    theme's own colour, the others each as far from the earlier ones as the theme's hue band allows.
    Topics without a theme (-1) get distinct colours of their own (`distinct_colours`) after the themes'.

    Examples:
        >>> colours, themes = theme_topic_colours([0, 1, 2], {0: 5, 1: 7, 2: 5})
        >>> colours[0] == themes[5] == THEME_COLOURS[5], colours[2] != colours[0], colours[-1]
        (True, True, '#9aa0a6')
        >>> theme_topic_colours([1, 0], {0: 3, 1: 0})[1][0] == THEME_COLOURS[0]  # theme 0's, whatever its rank
        True
    """
    topics = [int(t) for t in topic_ids_by_size if int(t) != -1]
    slots = theme_slots({theme_of.get(t, -1) for t in topics} - {-1})
    themes = {theme: theme_colour(slot) for theme, slot in slots.items()}
    colours = {}
    for theme, base in themes.items():
        members = sorted(t for t in topics if theme_of.get(t, -1) == theme)
        colours.update(zip(members, _shades(base, len(members)), strict=True))
    own = sorted(t for t in topics if theme_of.get(t, -1) not in themes)
    taken = lab_of(list(themes.values())) if themes else np.zeros((0, 3))
    colours.update(zip(own, _distinct_from(taken, len(own)), strict=True))
    colours[-1] = UNASSIGNED_COLOUR
    return colours, themes


def _distinct_from(taken: np.ndarray, n: int) -> list[str]:
    """`n` colours for topics of no theme: `distinct_colours` on a map without themes, else each the
    farthest from the themes' colours and the earlier ones."""
    return list(distinct_colours(n)) if not len(taken) else _farthest(taken, n)


def _farthest(taken: np.ndarray, n: int) -> list[str]:
    """`n` colours of `_candidates`, each as far in CIELAB from `taken` (rows) and the earlier ones as
    the candidates allow."""
    grid, lab = _candidates()
    distance = np.full(len(lab), np.inf)
    for row in taken:
        distance = np.minimum(distance, np.linalg.norm(lab - row, axis=1))
    chosen = []
    while len(chosen) < n:
        best = int(np.argmax(distance))
        chosen.append(_hex(grid[best]))
        distance = np.minimum(distance, np.linalg.norm(lab - lab[best], axis=1))
    return chosen


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

"""Files the live map's browser side downloads once: Plotly.js and each map's point table.

Streamlit serves `static/` beside the entry script at `app/static/…` (`[server] enableStaticServing`
in .streamlit/config.toml). The files are written there on first use, named by a fingerprint of their
content, so a browser caches each one and a rebuilt map gets a new name. `static/atlas/` is generated,
never committed; it works the same on Streamlit Community Cloud, whose checkout is writable.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from importlib import resources
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ASSET_DIR = REPO / "static" / "atlas"
URL_PREFIX = "app/static/atlas/"  # relative to the page, so it also works under a base URL path


def publish(name: str, content: bytes, folder: Path = ASSET_DIR) -> str:
    """Write `content` as `folder/name` unless it is there already; the URL the browser fetches it from.

    The name is a fingerprint of the content, so an existing file is the same file. The write goes
    through a temporary file and a rename: a reader never sees half a file, and two sessions
    publishing at once both succeed.
    """
    target = folder / name
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(content)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    return URL_PREFIX + name


def plotly_bundle() -> tuple[str, bytes]:
    """Plotly.js as the installed `plotly` package ships it, gzip'd (4.8 MB → 1.4 MB), and its file name."""
    source = resources.files("plotly") / "package_data" / "plotly.min.js"
    packed = gzip.compress(source.read_bytes(), compresslevel=9, mtime=0)
    return f"plotly-{hashlib.blake2b(packed, digest_size=8).hexdigest()}.min.js.gz", packed

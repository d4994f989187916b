"""Abstract Atlas offline pipeline: abstract files in, topic-map artifact folder out."""

__version__ = "0.1.0"


class UserError(Exception):
    """A problem the user can fix (bad input file, bad option); shown as one `error:` line."""

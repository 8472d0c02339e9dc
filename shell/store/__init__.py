"""panefleet's own stores: the Herdr fleet (SQLite), herdr run records, team records (team_record.py) and
the registry of teams (registry.py)."""

from pathlib import Path


class StoreFileError(Exception):
    """A file of panefleet's own cannot be read, is malformed, or cannot be written; the message names it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason

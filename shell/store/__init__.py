"""panefleet's own stores: the Herdr fleet (SQLite), herdr run records, team records (team_record.py) and
the registry of teams (registry.py)."""

import json
from pathlib import Path


class StoreFileError(Exception):
    """A file of panefleet's own cannot be read, is malformed, or cannot be written; the message names it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def read_json_file(path: Path, error: type[StoreFileError]) -> object | None:
    """The JSON value of the file at ``path``; None when there is no file. A file that cannot be read or
    parsed raises ``error`` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(path, f"cannot be read ({reason})") from None
    try:
        value: object = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
        raise error(path, f"not valid JSON ({exc})") from None
    return value

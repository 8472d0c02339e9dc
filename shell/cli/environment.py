"""The environment facts a request records: the one place that decides which variables panefleet's
programs may see (they are kept in the request, the audit log and a saved plan, so a plan applied
later can tell when they changed).

oh-my-codex's behaviour depends on its ``OMX_*`` variables, on ``CODEX_HOME``/``CODEX_SQLITE_HOME``
(where the worker CLI keeps its instructions and state), on ``HOME`` and ``SHELL`` (the startup
script's shell and rc file) and on the proxy variables a worker launch passes on. Nothing else —
credentials in particular — enters a request.
"""

from __future__ import annotations

from collections.abc import Mapping

PREFIXES = ("OMX_", "CODEX_HOME", "CODEX_SQLITE_HOME")
KEYS = frozenset({"HOME", "SHELL", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"})


def is_machine_fact(name: str) -> bool:
    """A recorded variable that describes the machine (where homes, shells and proxies are), not the user's
    choice of how oh-my-codex behaves (``OMX_*``): for a team on another machine, read there
    (``shell/cli/team_host.py``)."""
    return not name.startswith("OMX_")


def recorded_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` a request records, in name order."""
    return {k: v for k, v in sorted(environ.items()) if k.startswith(PREFIXES) or k in KEYS}

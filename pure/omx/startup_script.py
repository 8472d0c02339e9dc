"""Worker startup script (docs/scale-up.md, "Startup script"): ``runtime/worker-<N>-startup.sh``,
rendered as text.

Layout, line by line (no trailing newline, exactly as oh-my-codex writes it)::

    #!/bin/sh
    set -eu
    unset OMX_TMUX_HUD_OWNER OMX_TMUX_HUD_LEADER_PANE
    cd '<worker cwd>'
    export KEY='value'            # one per startup env entry, in order
    exec '<shell>' -c '<inner>'

``<inner>`` is ``[if [ -f <rc> ]; then . <rc>; fi⏎][export PATH='<node dir>':$PATH⏎]exec '<cli>' '<arg>'…``.
Every word is single-quoted (``'`` becomes ``'\\''``), and the inner command is quoted once more
as the ``-c`` operand, so no team name, task text, argument or path can change what executes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Final

from returns.result import Failure, Result, Success

from pure.omx.launch import HUD_OWNERSHIP_ENV, LaunchPlan, js_trim, posix_join
from pure.omx.state import runtime_file

_ENV_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ZSH_CANDIDATES: Final = ("/bin/zsh", "/usr/bin/zsh", "/usr/local/bin/zsh", "/opt/local/bin/zsh", "/opt/homebrew/bin/zsh")
BASH_CANDIDATES: Final = ("/bin/bash", "/usr/bin/bash")


def shell_quote(value: str) -> str:
    """POSIX single quoting: ``'…'`` with each ``'`` spelled ``'\\''``."""
    return "'" + value.replace("'", "'\\''") + "'"


def choose_worker_shell(
    shell_env: str | None, existing_paths: Collection[str], *, msys: bool = False
) -> tuple[str, str | None]:
    """(shell, rc file) as oh-my-codex picks it: $SHELL if it is an existing zsh/bash, else the first
    existing zsh then bash candidate, else ``/bin/sh``. ``existing_paths`` is what the shell found on disk."""
    if msys:
        return "/bin/sh", None
    if shell_env and js_trim(shell_env) and shell_env in existing_paths:
        if shell_env.lower().endswith("/zsh"):
            return shell_env, "~/.zshrc"
        if shell_env.lower().endswith("/bash"):
            return shell_env, "~/.bashrc"
    for candidate in ZSH_CANDIDATES:
        if candidate in existing_paths:
            return candidate, "~/.zshrc"
    for candidate in BASH_CANDIDATES:
        if candidate in existing_paths:
            return candidate, "~/.bashrc"
    return "/bin/sh", None


def should_source_shell_rc(env: Mapping[str, str]) -> bool:
    """``OMX_TMUX_SOURCE_SHELL_RC`` trimmed equals ``1`` (process env overlaid with the worker's extra env)."""
    return js_trim(env.get("OMX_TMUX_SOURCE_SHELL_RC", "")) == "1"


def leader_node_dir(node_path: str) -> str:
    """The directory put first on PATH: ``node_path`` minus its last component, or '' for a bare name."""
    if "/" not in node_path and "\\" not in node_path:
        return ""
    return re.sub(r"[\\/][^\\/]+\Z", "", node_path)


def inner_command(plan: LaunchPlan, *, rc_file: str | None = None, source_rc: bool = False) -> str:
    """The ``-c`` operand: optional rc sourcing, PATH bootstrap, then ``exec`` of the CLI."""
    rc = f"if [ -f {rc_file} ]; then . {rc_file}; fi\n" if source_rc and rc_file else ""
    node_dir = leader_node_dir(plan.leader_node_path)
    path = f"export PATH={shell_quote(node_dir)}:$PATH\n" if node_dir else ""
    words = [shell_quote(plan.command), *(shell_quote(arg) for arg in plan.argv)]
    return f"{rc}{path}exec {' '.join(words)}"


def render_startup_script(
    plan: LaunchPlan,
    *,
    worker_cwd: str,
    shell: str,
    rc_file: str | None = None,
    source_rc: bool = False,
) -> Result[str, str]:
    """The startup script text, or ``invalid worker startup env key: <key>``."""
    exports: list[str] = []
    for key, value in plan.startup_env:
        if _ENV_KEY.fullmatch(key) is None:
            return Failure(f"invalid worker startup env key: {key}")
        exports.append(f"export {key}={shell_quote(value)}")
    lines = [
        "#!/bin/sh",
        "set -eu",
        "unset " + " ".join(HUD_OWNERSHIP_ENV),
        f"cd {shell_quote(worker_cwd)}",
        "\n".join(exports),
        f"exec {shell_quote(shell)} -c {shell_quote(inner_command(plan, rc_file=rc_file, source_rc=source_rc))}",
    ]
    return Success("\n".join(line for line in lines if line != ""))


def startup_command(script_path: str) -> str:
    """What is typed into the new pane: ``exec /bin/sh '<script>'``."""
    return f"exec /bin/sh {shell_quote(script_path)}"


def self_pinned_startup_command(script_path: str, worker_dir: str) -> str:
    """oh-my-codex's mode's split command (``OMX_TEAM_SKIP_READY_WAIT=1``): ``startup_command``, but the
    pane's first process pins itself first, as a gated pane does (``gated_startup_command``), then
    becomes the script's shell (``exec``: the pane's pid is unchanged). So a run killed between its
    split and its own records leaves a record of that pane in this mode too (a documented deviation:
    oh-my-codex's pane is left unrecorded, docs/scale-up.md, "Stray panes")."""
    return f"exec /bin/sh -c {shell_quote(_PINNED_SCRIPT)} {shell_quote(script_path)} {shell_quote(worker_dir)}"


def started_worker(command: str, runtime_dir: str | None = None) -> str | None:
    """The worker whose startup script a pane's start command runs: the script's path quoted as
    ``startup_command`` and ``gated_startup_command`` quote it (tmux may show the whole command quoted
    again), in ``runtime_dir`` when given, else in any folder named ``runtime``."""
    prefix = shell_quote(runtime_dir + "/")[:-1] if runtime_dir is not None else "/runtime/"
    for match in re.finditer(re.escape(prefix) + r"([^'/]+)'", command):
        found = runtime_file(match.group(1))
        if found is not None and found[1] == "script":
            return found[0]
    return None


def gated_startup_command(script_path: str, worker_dir: str) -> str:
    """The watched start-up's (and a respawn's) split command (docs/scale-up.md): ``/bin/sh`` waits for
    one line before it runs the script, so that panefleet can set ``remain-on-exit`` on the new pane
    first and a CLI that dies at once still leaves its last lines. The pinned pid is that shell's: it
    runs the agent as its child and takes it down with the pane (``_GATE``), so an agent that ignores
    SIGHUP does not outlive its killed pane.

    Before it waits, the pane's first process pins itself: it writes its pid to ``self_pin_path``
    in the worker's folder, once (``set -C``: a process that ``respawn-pane`` starts later with the
    same command cannot overwrite it). So a run killed between its split and its own records still
    leaves a record of the process it started, and the next sweep can prove the pane
    (pure/omx/strays.py)."""
    return f"exec /bin/sh -c {shell_quote(_GATE)} {shell_quote(script_path)} {shell_quote(worker_dir)}"


def self_pinned_shell_command(pin_dir: str) -> str:
    """A pane of a login shell (what tmux runs when no command is given) whose first process pins
    itself in ``pin_dir`` as a gated pane does: a fleet's leader pane (pure/fleet/leader.py)."""
    return f"exec /bin/sh -c {shell_quote(_LOGIN_SHELL)} sh {shell_quote(pin_dir)}"


# The pane's first process writes its own pid to "$1/pane-N.pid" (N: its pane number), only if no
# file is there, and says nothing when it cannot; then it waits at the gate, or becomes the shell.
_SELF_PIN = '{ set -C; echo $$ >"$1/pane-${TMUX_PANE#%}.pid"; } 2>/dev/null; '
# Released, it runs the startup script as its child, on the pane's terminal (fd 3: an asynchronous
# command's input would be /dev/null), and stays its parent: when the pane is killed (tmux sends
# SIGHUP, which an agent may ignore — the Gemini CLI does) or it is sent SIGTERM, it sends SIGTERM to
# its whole process group, the agent's, and SIGKILL 2 s later. Its exit status is the agent's.
_GATE = _SELF_PIN + ('read -r _ || exit; exec 3<&0; '
                     'trap \'trap "" HUP TERM; kill -TERM 0; sleep 2; kill -KILL 0\' HUP TERM; '
                     '/bin/sh "$0" <&3 3<&- & wait $!; exit $?')
_LOGIN_SHELL = _SELF_PIN + 'exec "${SHELL:-/bin/sh}" -l'
_PINNED_SCRIPT = _SELF_PIN + 'exec /bin/sh "$0"'


def self_pin_path(worker_dir: str, pane_id: str) -> str:
    """Where the gated pane ``pane_id`` (``%N``) wrote its own pid: ``<worker dir>/pane-N.pid``."""
    return posix_join(worker_dir, f"pane-{pane_id.removeprefix('%')}.pid")

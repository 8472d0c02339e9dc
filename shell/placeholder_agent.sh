#!/bin/sh
# panefleet placeholder agent: a harmless stand-in for a coding-agent CLI (demo and real-tmux tests).
# It prints the argv it was launched with and then who it is (the line pure/agents/screen.py reads as
# "ready"), then shows an input line ("> ", as a CLI's prompt: what is typed shows there, wrapped
# over rows in a narrow pane) and echoes every line submitted (so a dispatched trigger is visible and
# confirmed) and never exits on its own. It reads and writes nothing else.
printf 'argv:'
for arg in "$@"; do printf ' [%s]' "$arg"; done
printf '\n'
printf 'panefleet placeholder agent %s ready\n' "${OMX_TEAM_WORKER:-unknown-worker}"
printf '> '
while IFS= read -r line; do
  printf 'received: %s\n> ' "$line"
done
exec sleep 2147483647

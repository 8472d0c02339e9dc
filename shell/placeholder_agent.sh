#!/bin/sh
# panefleet placeholder agent: a harmless stand-in for a coding-agent CLI (demo and real-tmux tests).
# It prints the argv it was launched with and then who it is (the line pure/agents/screen.py reads as
# "ready"), then echoes every line typed into its pane (so a dispatched trigger is visible and
# confirmed) and never exits on its own. It reads and writes nothing else.
printf 'argv:'
for arg in "$@"; do printf ' [%s]' "$arg"; done
printf '\n'
printf 'panefleet placeholder agent %s ready\n' "${OMX_TEAM_WORKER:-unknown-worker}"
while IFS= read -r line; do
  printf 'received: %s\n' "$line"
done
exec sleep 2147483647

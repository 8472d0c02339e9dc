"""Fleets as desired state (docs/fleet.md): the fleet file's parser (``spec.py``), the planner that
converges a team to it (``converge.py``), and the programs that make, restore and stop a team's panes
(``leader.py``, ``stop.py``). Nothing is imported here, so that the command line can name the file
without loading the planner."""

FLEET_FILE = "panefleet.toml"  # the fleet file's name, looked for from the current folder upward

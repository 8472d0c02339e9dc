"""Where panefleet's placeholder agent is (``shell/placeholder_agent.sh``, beside this file): the stand-in
worker CLI of the demo and the real-tmux tests, launched as ``cli_paths["placeholder"]``."""

from pathlib import Path

PLACEHOLDER_AGENT = Path(__file__).resolve().with_name("placeholder_agent.sh")

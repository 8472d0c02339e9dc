"""What the agent CLIs in worker panes show: the screen model (``screen.py``) and the start-up
supervision built on it (``startup.py``): readiness, prompt answers and verified task delivery."""

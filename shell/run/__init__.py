"""Executing plans: the step executor, the dry-run executor, the loop and its audit log, files, deadlines, the tmux control-mode client."""

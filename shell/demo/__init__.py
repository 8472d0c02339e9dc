"""The embedded demos: a private tmux server, a placeholder worker CLI, no agent needed."""

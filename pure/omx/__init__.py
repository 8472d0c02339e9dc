"""oh-my-codex 0.20.3 team scaling, re-implemented as pure programs over the wire model."""

"""Stores panefleet keeps for the Herdr fleet (SQLite) and the herdr run records' operations."""

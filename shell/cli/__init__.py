"""The command line: argument conventions, command handlers, plan views and renderers."""

"""An example audiobench plugin package."""

"""Compatibility profiles (docs/profiles.md): other specs' contracts mapped onto the services."""

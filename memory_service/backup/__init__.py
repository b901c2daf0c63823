"""Backup and restore of a data directory, offline or online."""

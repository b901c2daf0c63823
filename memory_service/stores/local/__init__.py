"""Embedded SQLite stores: cache, audit log, write journal, sync queue, votes, and their salvage."""

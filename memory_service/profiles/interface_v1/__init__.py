"""Seed 002 (memory-interface-v1): read, write and update."""

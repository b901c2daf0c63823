"""Seed 003 (cortex-os): the five memory_* tools of that spec."""

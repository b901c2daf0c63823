"""Seed 004 (cortex-find-store): memory.find and memory.store."""

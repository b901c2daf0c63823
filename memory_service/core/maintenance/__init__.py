"""Upkeep of the stores: normalisation, repair, expiry, embedding refresh and statistics."""

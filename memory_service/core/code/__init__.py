"""The code index: indexing, code search, duplicates, citations and staleness."""

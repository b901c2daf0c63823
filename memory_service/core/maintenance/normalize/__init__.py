"""normalize_memory: deduplication, repairs and cleanup, as a background job."""

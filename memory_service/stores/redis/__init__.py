"""Redis adapters: the cache and the sync queue of the server profile."""

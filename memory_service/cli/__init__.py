"""memory-cli: the operator's command line."""

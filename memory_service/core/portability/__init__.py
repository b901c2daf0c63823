"""export_memory and import_memory: the JSONL export format, read, validated and written."""

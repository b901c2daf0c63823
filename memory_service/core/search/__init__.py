"""memory_search and memory_explain: hybrid retrieval, ranking signals and cues."""

"""Vector adapters: qdrant-edge (embedded) and the Qdrant server client, with point ids and salvage."""

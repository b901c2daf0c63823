"""Graph adapters: Ladybug (embedded) and Neo4j (server), their shared row helpers, the Cypher guard."""

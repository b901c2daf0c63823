"""Real servers the tests start for themselves (Redis, Neo4j...), as pytest plugins."""

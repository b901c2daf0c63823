"""The one write path: journal, rules, idempotency, links and the graph outbox."""

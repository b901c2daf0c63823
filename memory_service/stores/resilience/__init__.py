"""Wrappers that keep the service answering when a store fails: breaker, failover, stand-in."""

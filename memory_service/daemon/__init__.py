"""The per-data-directory daemon and the stdio forwarders in front of it (docs/daemon.md)."""

"""Secrets and personal data: detection, masking, and the sanitise step of every write."""

"""Tooling: packaging, the embedded AWS and its pollers, operator commands. Never imported by handlers."""

"""Compaction planning: token estimates, cut points, serialization (pure; no LLM calls)."""

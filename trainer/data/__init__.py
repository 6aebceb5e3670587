"""Tailor-PACS and user datasets: sources, rendering, splits, tasks, previews."""

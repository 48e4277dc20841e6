"""The tool search behind `quiver.search`: the index (`_index`), text analysis, vocabulary, query analysis,
near-duplicate blocking, and which tools each place searches (`_scope`, `_lock_vectors`)."""

"""The knowledge base and its tooling: entries, the index, lint, verification, the long tail's build."""

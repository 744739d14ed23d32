"""The second stage: the model ranked against the knowledge base, and the long tail's raise sites."""

"""The third stage: causes and fixes ranked by the paste's evidence, rewrites of the user's line."""

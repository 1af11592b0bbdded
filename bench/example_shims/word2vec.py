"""Stand-in for the word2vec package (only imported by the examples that run here)."""

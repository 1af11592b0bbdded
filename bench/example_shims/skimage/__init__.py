"""Stand-in for the parts of scikit-image example/neural-style calls (on PIL and numpy)."""

"""Stand-in for the parts of scikit-learn that MXNet's example programs call."""

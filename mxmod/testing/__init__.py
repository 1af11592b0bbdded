"""The parts of ``mx.test_utils``, one module per concern; ``mxmod.test_utils`` re-exports them.

tolerance: default tolerances per dtype; compare: array comparisons with located mismatches;
inputs: random arrays and shapes; gradients: numeric and symbolic checks of bound symbols;
stats: statistical checks of random generators; harness: contexts, environment and test helpers."""

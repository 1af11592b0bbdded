"""The removed linear_assignment: an (n, 2) array of matched (row, column) pairs."""
import numpy as np
from scipy.optimize import linear_sum_assignment


def linear_assignment(cost):
    rows, cols = linear_sum_assignment(np.asarray(cost))
    return np.stack([rows, cols], axis=1)

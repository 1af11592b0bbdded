"""``mx.metric``: online evaluation metrics, their registry and ``create``."""
from .base import (EvalMetric, CompositeEvalMetric, CustomMetric, check_label_shapes,  # noqa: F401
                   create, register, alias, np)
from .classification import Accuracy, TopKAccuracy, F1, MCC, PCC  # noqa: F401
from .regression import MAE, MSE, RMSE, PearsonCorrelation  # noqa: F401
from .probability import (CrossEntropy, NegativeLogLikelihood, Perplexity, Loss,  # noqa: F401
                          Torch, Caffe)

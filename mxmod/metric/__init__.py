"""``mx.metric``: online evaluation metrics, their registry and ``create``."""
from .base import (EvalMetric, CompositeEvalMetric, CustomMetric, check_label_shapes,
                   create, register, alias, np)
from .classification import Accuracy, TopKAccuracy, F1, MCC, PCC
from .regression import MAE, MSE, RMSE, PearsonCorrelation
from .probability import (CrossEntropy, NegativeLogLikelihood, Perplexity, Loss,
                          Torch, Caffe)

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'CustomMetric', 'check_label_shapes', 'create',
           'register', 'alias', 'np', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC', 'PCC', 'MAE',
           'MSE', 'RMSE', 'PearsonCorrelation', 'CrossEntropy', 'NegativeLogLikelihood',
           'Perplexity', 'Loss', 'Torch', 'Caffe']

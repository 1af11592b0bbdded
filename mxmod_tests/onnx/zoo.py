"""The model-zoo networks of MXNet's example/image-classification/symbols used by the ONNX tests:
fixture name -> (script, get_symbol keyword arguments, input shape, slow).

Their symbol JSON (written by MXNet 1.9.1 running those scripts, see make_fixtures.py) is kept
gzipped under fixtures/zoo/. Small variants (CIFAR-sized inputs, narrow multipliers) run in CI;
the full-size networks are marked slow."""

ZOO = {
    'mlp': ('mlp', {'num_classes': 10}, (2, 1, 28, 28), False),
    'lenet': ('lenet', {'num_classes': 10}, (2, 1, 28, 28), False),
    # AlexNet and VGG keep their 4096-wide dense layers at any input size (slow even when small)
    'alexnet_small': ('alexnet', {'num_classes': 10}, (1, 3, 67, 67), True),
    'vgg11_small': ('vgg', {'num_classes': 10, 'num_layers': 11}, (1, 3, 32, 32), True),
    'vgg11_bn_small': ('vgg', {'num_classes': 10, 'num_layers': 11, 'batch_norm': True},
                       (1, 3, 32, 32), True),
    'googlenet_small': ('googlenet', {'num_classes': 10}, (1, 3, 64, 64), False),
    'inception_bn_small': ('inception-bn', {'num_classes': 10, 'image_shape': '3,28,28'},
                           (1, 3, 28, 28), False),
    'resnet20_v2_small': ('resnet', {'num_classes': 10, 'num_layers': 20,
                                     'image_shape': '3,28,28'}, (2, 3, 28, 28), False),
    'resnet20_v1_small': ('resnet-v1', {'num_classes': 10, 'num_layers': 20,
                                        'image_shape': '3,28,28'}, (2, 3, 28, 28), False),
    'resnext20_small': ('resnext', {'num_classes': 10, 'num_layers': 20, 'num_group': 4,
                                    'image_shape': '3,28,28'}, (1, 3, 28, 28), False),
    'mobilenet_small': ('mobilenet', {'num_classes': 10, 'alpha': 0.25, 'resolution': 64},
                        (1, 3, 64, 64), False),
    'mobilenetv2_small': ('mobilenetv2', {'num_classes': 10, 'multiplier': 0.25},
                          (1, 3, 64, 64), False),
    'alexnet': ('alexnet', {'num_classes': 1000}, (1, 3, 224, 224), True),
    'vgg16': ('vgg', {'num_classes': 1000, 'num_layers': 16}, (1, 3, 224, 224), True),
    'vgg16_bn': ('vgg', {'num_classes': 1000, 'num_layers': 16, 'batch_norm': True},
                 (1, 3, 224, 224), True),
    'googlenet': ('googlenet', {'num_classes': 1000}, (1, 3, 224, 224), True),
    'inception_bn': ('inception-bn', {'num_classes': 1000, 'image_shape': '3,224,224'},
                     (1, 3, 224, 224), True),
    'inception_v3': ('inception-v3', {'num_classes': 1000}, (1, 3, 299, 299), True),
    'inception_v4': ('inception-v4', {'num_classes': 1000}, (1, 3, 299, 299), True),
    'inception_resnet_v2': ('inception-resnet-v2', {'num_classes': 1000}, (1, 3, 299, 299),
                            True),
    'resnet50_v2': ('resnet', {'num_classes': 1000, 'num_layers': 50,
                               'image_shape': '3,224,224'}, (1, 3, 224, 224), True),
    'resnet18_v1': ('resnet-v1', {'num_classes': 1000, 'num_layers': 18,
                                  'image_shape': '3,224,224'}, (1, 3, 224, 224), True),
    'resnet50_v1': ('resnetv1', {'num_classes': 1000, 'num_layers': 50,
                                 'image_shape': '3,224,224'}, (1, 3, 224, 224), True),
    'resnext50': ('resnext', {'num_classes': 1000, 'num_layers': 50,
                              'image_shape': '3,224,224'}, (1, 3, 224, 224), True),
    'mobilenet': ('mobilenet', {'num_classes': 1000}, (1, 3, 224, 224), True),
    'mobilenetv2': ('mobilenetv2', {'num_classes': 1000}, (1, 3, 224, 224), True),
}

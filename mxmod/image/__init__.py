"""``mx.image`` (also ``mx.img``): image decoding, resizing, cropping and augmentation on NDArrays,
and ImageIter / ImageDetIter over RecordIO files or image lists."""

"""Command-line tools: ``python -m mxmod.tools.im2rec`` (image lists and RecordIO packing),
``python -m mxmod.tools.precompile`` (compile the CPU kernels ahead)."""

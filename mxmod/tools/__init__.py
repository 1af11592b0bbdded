"""Command-line tools: ``python -m mxmod.tools.im2rec`` (image lists and RecordIO packing)."""

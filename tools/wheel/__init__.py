"""gpucheck: is this machine's GPU stack set up right, and how fast is it really?

The package carries the gpucheck binary (on PATH as `gpucheck`, or `python -m gpucheck`); Python
is not needed to run it.
"""
__version__ = "@VERSION@"

"""tinycompile: ahead-of-time compiler from INT8 neural networks to bare-metal Cortex-M C."""

__version__ = "0.1.0"

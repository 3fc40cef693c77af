"""Integer maths shared by the operators: TFLite's requantization (``qmath``) and gemmlowp's
fixed-point functions (``fixedpoint``), emulated exactly in Python at compile time.

A maths library, not a pipeline stage: it imports nothing from the rest of tinycompile.
"""

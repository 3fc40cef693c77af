"""Memory planner: op schedule, per-op memory choices, tensor lifetimes, arena offsets, peak.

The planner owns every memory decision. From the prepared ops (``tinycompile.ops``) it chooses
a schedule (``schedule``), which convolutions run in place and which optional scratch buffers to
refuse (``policy``), turns the schedule into buffer requests (``lifetimes``) and places them
(``allocator``); then it lowers the ops once under its choices. The peak of live bytes is a
lower bound on any placement; the arena is what the placement needs; both are reported. Flash:
the const arrays of the lowering, per layer and in total.
"""

from __future__ import annotations

from .plan import LayerPlan, Plan, plan

__all__ = ["LayerPlan", "Plan", "plan"]

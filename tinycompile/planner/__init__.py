"""Memory planner: op schedule, per-op memory choices, tensor lifetimes, arena offsets, peak.

The planner owns every memory decision and prepares or lowers nothing. From the prepared ops
(``tinycompile.ops``: what each op could do) it chooses a schedule (``schedule``), which
convolutions run in place and which optional scratch buffers to refuse (``policy``), turns the
schedule into buffer requests (``lifetimes``) and places them (``allocator``, ``layout``);
where the arena must shrink further it rewrites the first layers into a STREAM op run by rows
(``streams``), handing that op back to be prepared. The peak of live bytes is a lower bound on
any placement; the arena is what the placement needs; both are reported.
"""

from __future__ import annotations

from .layout import Layout, naive_arena
from .plan import Placement, plan

__all__ = ["Layout", "Placement", "naive_arena", "plan"]

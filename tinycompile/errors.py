"""Error types. Every user-facing failure is a CompileError carrying one clear line."""

from __future__ import annotations


class CompileError(Exception):
    """A model, board or option the compiler refuses, with where and why.

    ``str(err)`` is the one line printed to the user: ``model: op #i TYPE: reason``.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        op_index: int | None = None,
        op_kind: str | None = None,
    ) -> None:
        self.reason = reason
        self.source = source
        self.op_index = op_index
        self.op_kind = op_kind
        super().__init__(self.line())

    def line(self) -> str:
        parts = []
        if self.source:
            parts.append(self.source)
        if self.op_index is not None:
            parts.append(f"op #{self.op_index}" + (f" {self.op_kind}" if self.op_kind else ""))
        parts.append(self.reason)
        return ": ".join(parts)

    def at(self, *, source: str | None = None) -> CompileError:
        """Return the same error with the model path filled in if it was missing."""
        if self.source is None and source is not None:
            return CompileError(
                self.reason, source=source, op_index=self.op_index, op_kind=self.op_kind
            )
        return self


class DoesNotFit(CompileError):
    """The planned model exceeds a board's SRAM or flash budget."""


class ToolchainError(CompileError):
    """A compiler, emulator or other external tool is missing or failed."""


class RunError(CompileError):
    """Firmware execution failed: timeout, hard fault or malformed output."""


class DeviceError(CompileError):
    """A port, bootloader or board that did not do what was asked: no answer, a NACK, another
    chip than the board names, a failed verify. Exit code 3 from the command line."""

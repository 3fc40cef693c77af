"""Graph passes: activation fusion bookkeeping, aliasing, compile-time requantization."""

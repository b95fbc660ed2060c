#!/usr/bin/env bash
# No kmod function over 100 lines and no file over 1,000, but for those
# tests/kmod/lengths.allowed lists (tests/kmod/lengths.py; issue 47).
exec python3 "$(dirname "$0")/lengths.py" "$@"

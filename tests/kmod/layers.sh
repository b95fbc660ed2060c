#!/usr/bin/env bash
# kmod's calls run down kmod/main.c's file list, but for the upward calls
# tests/kmod/layers.allowed lists (tests/kmod/layers.py: nm of the built
# objects).
exec python3 "$(dirname "$0")/layers.py" "$@"

#!/usr/bin/env bash
# kmod/poolmem.h's sections name the files that define what is under them
# (tests/kmod/header-sections.py; issue 47).
exec python3 "$(dirname "$0")/header-sections.py" "$@"

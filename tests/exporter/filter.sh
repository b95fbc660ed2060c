#!/bin/sh
# The deterministic part of poolmem-exporter output: drop the lines that
# change from run to run (collector durations, the compiler in build_info).
grep -v -e '^poolmem_scrape_collector_duration_seconds' -e '^poolmem_exporter_build_info'

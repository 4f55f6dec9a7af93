#!/bin/sh
# make bench: every workload with its throughput, the same run's baseline and the ratio.
# Usage: scripts/bench.sh [BUILD_DIR]   (default: build)
# Benchmarks report; they never fail on speed.
set -eu
BUILD=${1:-build}
TP="$BUILD/tidepool"
BENCH="$BUILD/tidepool-bench"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM

echo "tidepool benchmarks on $(nproc) cores ($(uname -m)); ratio > 1 means tidepool is faster"
echo

# --- C workloads: solvers and renderer against tests/reference/ ports --------------------
"$BENCH"

# --- command-level workloads ------------------------------------------------------------
# (each section prints rows in the same table format)

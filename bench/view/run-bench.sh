#!/bin/bash
# run-bench.sh - how fast `agprof view` opens and redraws a large recording.
#
# usage: bench/view/run-bench.sh [AGPROF] [RECORDING] [EVENTS]
#
# Makes RECORDING (default /tmp/agprof-view-bench/big10m.agprof, ten million
# events over ten minutes) with gen_recording.py when it does not exist, then
# runs agprof view in tmux at 200x50 with AGPROF_VIEW_STATS, waits for the
# scan and the analysis, types a key script that zooms through every level
# and pans at each, and prints:
#   first_frame_ms     process start to the first frame on screen
#   tracks_ms          until the first track is drawn (as seen by tmux)
#   scan_done_s        until the density of every lane is complete
#   analysis_done_s    until the findings (the analysis of agprof report) are in
#   frame_max_ms       the slowest redraw, frame_mean_ms, frames
#   max_rss_mib        peak memory of the whole process (timeline + analysis)
# Targets (the issue): first frame < 1000 ms, every redraw < 16 ms, < 300 MiB.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
agprof=${1:-$root/build/cmd/agprof/agprof}
rec=${2:-/tmp/agprof-view-bench/big10m.agprof}
events=${3:-10000000}
work=$(mktemp -d)
sock=agprof-view-bench-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$work"' EXIT

if [ ! -s "$rec" ]; then
	mkdir -p "$(dirname "$rec")"
	echo "making $rec ($events events)..." >&2
	python3 "$root/bench/view/gen_recording.py" "$root/common/schema.sql" "$rec" "$events" 600
fi
# a warm page cache, as for a recording just written
cat "$rec" >/dev/null

now_ms() { date +%s%3N; }
title() { tmux -L "$sock" capture-pane -p -t v | head -1; }

t0=$(now_ms)
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 50 -s v \
	"AGPROF_VIEW_STATS='$work/stats' AGPROF_RULES_DIR='$root/rules' LANG=C.UTF-8 /usr/bin/time -v '$agprof' view '$rec' 2>'$work/time'; sleep 600"
tracks_ms=
scan_ms=
analysis_ms=
while :; do
	screen=$(tmux -L "$sock" capture-pane -p -t v)
	t=$(($(now_ms) - t0))
	[ -z "$tracks_ms" ] && printf '%s\n' "$screen" | grep -q "^process " && tracks_ms=$t
	case $screen in *"  reading "*) ;; *"] window "*) [ -z "$scan_ms" ] && scan_ms=$t ;; esac
	case $screen in *"  analyzing"*) ;; *"] window "*) [ -z "$analysis_ms" ] && analysis_ms=$t ;; esac
	[ -n "$scan_ms" ] && [ -n "$analysis_ms" ] && break
	[ $t -gt 300000 ] && { echo "gave up after 300 s" >&2; break; }
	sleep 0.02
done

keys() { tmux -L "$sock" send-keys -t v "$@"; sleep 0.05; }
# every zoom level from the whole run to nanoseconds, panning at each
for level in $(seq 1 36); do
	keys +
	keys l l h
	keys j k
done
keys Home End
for level in $(seq 1 36); do keys -; keys L; done
keys n n N . . ,
keys 3 3 a
keys q
for _ in $(seq 1 100); do [ -s "$work/stats" ] && break; sleep 0.1; done
sleep 0.3

cat "$work/stats"
echo "tracks_ms ${tracks_ms:-?} (as sampled by tmux)"
echo "scan_done_s $(awk -v t="${scan_ms:-0}" 'BEGIN { printf "%.1f", t / 1000 }')"
echo "analysis_done_s $(awk -v t="${analysis_ms:-0}" 'BEGIN { printf "%.1f", t / 1000 }')"
awk '/Maximum resident/ { printf "max_rss_mib %.0f\n", $NF / 1024 }' "$work/time"

#!/bin/bash
# view-tmux.sh - drive `agprof view` in a real terminal and check the screen.
#
# usage: view-tmux.sh CASE [PYTHON]
#
# tmux runs agprof view at a fixed size on its own server socket;
# send-keys types; capture-pane reads what a person would see.  The
# recordings are real: `agprof run` on samples/retrace_shape.py (three
# retraces by shape), samples/py_function_step.py (py_function findings,
# executor threads) and samples/graph_slow_op.py (CPU kernel lanes), made
# once per build directory.  Without a Python that
# has TensorFlow, a recording from bench/view/gen_recording.py stands in and
# the cases that need the real samples' names are skipped (exit 77).
#
# Environment (tests/meson.build): AGPROF, AGPROF_SOURCE_ROOT,
# AGPROF_BUILD_ROOT, AGPROF_RULES_DIR.
set -u

case_name=${1:?usage: view-tmux.sh CASE [PYTHON]}
python=${2:-}
: "${AGPROF:?}" "${AGPROF_SOURCE_ROOT:?}" "${AGPROF_BUILD_ROOT:?}"
export AGPROF_RULES_DIR=${AGPROF_RULES_DIR:-$AGPROF_SOURCE_ROOT/rules}

store=$AGPROF_BUILD_ROOT/tests/tui/recordings
mkdir -p "$store"
sock=agprof-view-test-$$
work=$(mktemp -d)
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$work"' EXIT

fail() {
	echo "FAIL ($case_name): $*" >&2
	if [ -n "${screen:-}" ]; then
		echo "---- screen ----" >&2
		printf '%s\n' "$screen" >&2
		echo "----------------" >&2
	fi
	exit 1
}

# A recording of sample NAME made by agprof run, shared by the cases under a lock.
real_recording() {
	local name=$1 out=$store/$1.agprof
	(
		flock 9
		if [ ! -s "$out" ] || [ "$AGPROF" -nt "$out" ]; then
			rm -f "$out"
			(cd "$AGPROF_SOURCE_ROOT/samples" &&
				"$AGPROF" run -o "$out" -- "$python" "$name.py" >"$store/$name.log" 2>&1) || rm -f "$out"
		fi
	) 9>"$store/.lock"
	[ -s "$out" ] && echo "$out"
}

# samples/eager_heavy.py recorded past a budget of 2000 events (eager_op_buckets, schema 5).
budget_recording() {
	local out=$store/eager_budget.agprof
	(
		flock 9
		if [ ! -s "$out" ] || [ "$AGPROF" -nt "$out" ]; then
			rm -f "$out"
			(cd "$AGPROF_SOURCE_ROOT/samples" && "$AGPROF" run -o "$out" --max-events 2000 -- \
				"$python" eager_heavy.py --ops 160000 >"$store/eager_budget.log" 2>&1) || rm -f "$out"
		fi
	) 9>"$store/.lock"
	[ -s "$out" ] || fail "agprof run could not record samples/eager_heavy.py (see $store/eager_budget.log)"
	echo "$out"
}

# Whether PYTHON finds TensorFlow: found, not imported (an import takes 3-5 s of CPU, once
# per case and build; a TensorFlow that fails to import fails the recording, said in its log).
have_tf() {
	[ -n "$python" ] && "$python" -c 'import importlib.util, sys; sys.exit(not importlib.util.find_spec("tensorflow"))' \
		>/dev/null 2>&1
}

recording() {
	if have_tf; then
		real_recording "$1" || fail "agprof run could not record samples/$1.py (see $store/$1.log)"
	else
		local out=$store/synthetic.agprof
		(
			flock 9
			[ -s "$out" ] || python3 "$AGPROF_SOURCE_ROOT/bench/view/gen_recording.py" \
				"$AGPROF_SOURCE_ROOT/common/schema.sql" "$out" 3200 2 >/dev/null
		) 9>"$store/.lock"
		echo "$out"
	fi
}

need_tf() {
	have_tf || { echo "SKIP: needs a Python with TensorFlow for the real samples"; exit 77; }
}

# start W H RECORDING [ENV=VALUE...]: agprof view in a fresh tmux window.
start() {
	local w=$1 h=$2 rec=$3
	shift 3
	local envs="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=tmux-256color $*"
	tmux -L "$sock" -f /dev/null new-session -d -x "$w" -y "$h" -s v \
		"env $envs '$AGPROF' view '$rec' 2>'$work/stderr'; echo EXIT=\$? >'$work/exit'; sleep 600"
	tmux -L "$sock" set-option -g status off >/dev/null
	# the server may start at 80x24 before the status line is gone: size again
	tmux -L "$sock" resize-window -t v -x "$w" -y "$h" 2>/dev/null || true
	# the first frame: the timeline's title, or the too-small notice
	local i=0
	while [ $i -lt 400 ]; do
		capture
		# the timeline, once the scan and the analysis are done; or the too-small notice
		case $screen in
		*"terminal too small"*) return 0 ;;
		*"  reading "* | *"  analyzing"*) ;;
		*"] window "*) return 0 ;;
		esac
		sleep 0.05
		i=$((i + 1))
	done
	fail "agprof view did not draw within 20 s: $(cat "$work/stderr" 2>/dev/null)"
}

capture() {
	screen=$(tmux -L "$sock" capture-pane -p -t v "$@")
}

# wait_for TEXT [SECONDS]: until the screen shows TEXT.
wait_for() {
	local text=$1 limit=${2:-5} i=0
	while [ $i -lt $((limit * 20)) ]; do
		capture
		case $screen in *"$text"*) return 0 ;; esac
		sleep 0.05
		i=$((i + 1))
	done
	fail "the screen never showed '$text'"
}

# expect TEXT: the screen shows it now (after the last key has been handled).
expect() {
	wait_for "$1" 3
}

expect_not() {
	sleep 0.3
	capture
	case $screen in *"$1"*) fail "the screen shows '$1'" ;; esac
	return 0
}

keys() {
	tmux -L "$sock" send-keys -t v "$@"
	sleep 0.2
}

# The line of the screen (0-based) that contains TEXT.
line_of() {
	printf '%s\n' "$screen" | grep -n -F -- "$1" | head -1 | cut -d: -f1
}

# Nanoseconds of a title field "window 1.07 s" / "at +2.81 s".
title_ns() {
	capture
	printf '%s\n' "$screen" | head -1 | sed -n "s/.*$1 *\([0-9.]*\) \([a-z]*\).*/\1 \2/p" |
		awk '{ m = $2 == "ns" ? 1 : $2 == "us" ? 1e3 : $2 == "ms" ? 1e6 : $2 == "s" ? 1e9 : 60e9; printf "%.0f\n", $1 * m }'
}
window_ns() { title_ns "window"; }
at_ns() { title_ns "at +"; }

# ratio_is A B R: A / B is R within 2% (the title rounds to 3 digits).
ratio_is() {
	awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { x = a / b / r; exit !(x > 0.98 && x < 1.02) }' ||
		fail "window $1 ns is not $3 x $2 ns"
}

# mouse BUTTON X Y: an xterm (X10) mouse report as the terminal would send it;
# BUTTON 0 is a left press (a release follows), 64 the wheel up, 65 down.
mouse() {
	local b=$1 x=$2 y=$3 c
	for c in $b $([ "$b" = 0 ] && echo 3); do
		tmux -L "$sock" send-keys -t v -l "$(printf '%b' "$(printf '\\033[M\\%03o\\%03o\\%03o' \
			$((32 + c)) $((33 + x)) $((33 + y)))")"
	done
	sleep 0.2
}

wait_exit() {
	local i=0
	while [ ! -s "$work/exit" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -s "$work/exit" ] || fail "agprof view did not exit"
	cat "$work/exit"
}

case $case_name in
tracks)
	# one track per thread, named by role, lanes per kind, grouped by process
	need_tf
	start 80 24 "$(recording py_function_step)"
	expect "process "
	expect "main "
	expect "trace"
	expect "call"
	expect "eager"
	expect "exec "
	expect "pyfn"
	expect "time "
	capture
	[ "$(printf '%s\n' "$screen" | grep -c "│\|▏")" -gt 3 ] || fail "no track separator column"
	# the time axis of a run of seconds has labels in seconds from 0s (0.0s
	# when the run is short enough for half-second steps)
	axis=$(printf '%s\n' "$screen" | sed -n 2p)
	case $axis in "time "*" 0s "*|"time "*" 0.0s "*) ;; *) fail "no '0s' label on the axis: '$axis'" ;; esac
	[ "$(printf '%s\n' "$axis" | grep -o '[0-9]s' | wc -l)" -ge 3 ] || fail "fewer than 3 labels on the axis"
	# the status line is the legend of kinds (once no message covers it)
	keys a
	expect "1trace 2call 3eager 4pyfn 5kern 6copy"
	;;
retrace)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	# three retraces are marked on the axis (some may share a column)
	capture
	printf '%s\n' "$screen" | sed -n 3p | grep -q "▼" || fail "no retrace mark on the axis row"
	keys n
	expect "retrace 1/3: predict, trace #2"
	expect "kind: tracing (retrace)"
	expect "retrace cause: shape: x: [32,10] -> [4,10]"
	# the retracing finding starts at the first retrace: n stops there next
	keys n
	expect "finding 1/1 [warning] retracing"
	keys n
	expect "retrace 2/3: predict, trace #3"
	expect "[4,10] -> [24,10]"
	keys N
	expect "finding 1/1"
	keys N
	expect "retrace 1/3"
	;;
details)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	keys n
	expect "retrace 1/3"
	keys Enter
	expect "details of the selected slice"
	expect "signature"
	expect "shape=(4, 10)"
	# the call that retraces, wherever the sample marks it
	expect "retrace_shape.py:$(grep -n '# agprof: shape' "$AGPROF_SOURCE_ROOT/samples/retrace_shape.py" | cut -d: -f1)"
	expect "inputs"
	expect "x: float32[4,10]"
	keys q
	expect "[timeline]"
	expect "details ─"
	;;
help)
	start 80 24 "$(recording retrace_shape)"
	keys '?'
	expect "[help]"
	expect "Timeline"
	expect "Pan left"
	expect "Left h"
	expect "Zoom in"
	expect "Next retrace or finding"
	# the rest of the table is below: scroll to it
	keys PageDown PageDown PageDown
	expect "Quit from any view"
	expect "click"
	keys q
	expect "[timeline]"
	keys q
	[ "$(wait_exit)" = "EXIT=0" ] || fail "q did not quit with status 0"
	;;
search)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	keys / "predict" Enter
	expect "search 'predict': 15 matches"
	capture
	[ "$(printf '%s\n' "$screen" | grep -c "predict")" -ge 10 ] || fail "the results do not list the slices"
	expect "tracing"
	expect "call"
	keys Down Enter
	expect "match 2/15 for 'predict'"
	expect "[timeline]"
	expect "name: predict"
	# a name that matches nothing
	keys / C-u "no_such_name" Enter
	expect "0 matches"
	;;
zoom)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	w0=$(window_ns)
	[ "$(at_ns)" = 0 ] || fail "the view does not start at the beginning"
	keys +
	ratio_is "$(window_ns)" "$w0" 0.5
	keys w
	ratio_is "$(window_ns)" "$w0" 0.25
	keys -
	ratio_is "$(window_ns)" "$w0" 0.5
	keys s
	ratio_is "$(window_ns)" "$w0" 1
	keys + + + l
	[ "$(at_ns)" -gt 0 ] || fail "l did not pan right"
	keys h h h h h h h h h h
	[ "$(at_ns)" = 0 ] || fail "h did not pan back to the start"
	keys End
	w=$(window_ns)
	ratio_is "$(( $(at_ns) + w ))" "$w0" 1
	keys Home
	[ "$(at_ns)" = 0 ] || fail "Home did not go to the start"
	keys n z
	[ "$(window_ns)" -lt 100000000 ] || fail "z did not zoom to the selected trace"
	expect "predict"
	keys Z
	ratio_is "$(window_ns)" "$w0" 1
	;;
findings)
	need_tf
	start 80 24 "$(recording py_function_step)"
	keys f
	expect "[findings]"
	expect "py-function"
	expect "recommendation:"
	keys Enter
	expect "[timeline]"
	# 2 findings, or 3 when the loop waited on its sequential pipeline long
	# enough for input-bound (28% of the loop on a loaded machine)
	expect "finding 1/"
	keys u
	expect "[functions]"
	expect "train_step"
	expect "wrapped_fn"
	keys q
	expect "[timeline]"
	;;
functions)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	keys u
	expect "predict"
	capture
	line=$(printf '%s\n' "$screen" | grep "^ predict")
	set -- $line
	[ "$2" = 4 ] && [ "$3" = 3 ] && [ "$4" = shape ] || fail "predict row is '$line', wanted 4 traces, 3 retraces, shape"
	keys Enter
	expect "[timeline]"
	expect "predict: 4 traces, 11 calls"
	expect "kind: tracing (retrace)"
	;;
kernels)
	# CPU kernel lanes per executor thread, under the main thread's graph
	# calls; a kernel's details come from the recording's kernels and
	# graph_nodes rows.  Oracle: the sample's own CALLS, one tf.sort each,
	# of which the sampled ones are recorded one by one (run
	# --kernels=sampled: calls 1-5, then every 64th, collector.h).
	need_tf
	sample=$AGPROF_SOURCE_ROOT/samples/graph_slow_op.py
	all_calls=$(sed -n 's/^CALLS = \([0-9]*\).*/\1/p' "$sample")
	calls=$(( (all_calls < 5 ? all_calls : 5) + (all_calls - 1) / 64 ))
	line=$(grep -n '# agprof: slow-op' "$sample" | cut -d: -f1)
	start 100 30 "$(recording graph_slow_op)"
	expect "cpuk"
	capture
	exec_row=$(printf '%s\n' "$screen" | grep -n '^exec [0-9]* *cpuk' | head -1 | cut -d: -f1)
	[ -n "$exec_row" ] || fail "no kernel lane on an executor thread"
	[ "$exec_row" -gt "$(line_of "           call ")" ] || fail "the kernel lanes are not under the calls"
	keys / TopKV2 Enter
	expect "search 'TopKV2': $calls matches"
	expect "cpu kernel"
	keys Enter
	expect "kind: cpu kernel"
	expect "name: sort/TopKV2"
	expect "op type: TopKV2"
	expect "graph_slow_op.py:$line"
	expect "function: rank_scores"
	expect "call: #"
	# zoomed to the kernel, its lane draws it by name
	keys z
	wait_for "time "
	capture
	printf '%s\n' "$screen" | grep -q '^exec [0-9]* *cpuk *▏.*sort/TopKV2' || fail "the zoomed lane does not show the kernel"
	[ "$(window_ns)" -lt 1000000000 ] || fail "z did not zoom to the kernel"
	keys 7
	expect "cpu kernel hidden"
	capture
	[ -z "$(printf '%s\n' "$screen" | grep '^exec .*cpuk')" ] || fail "7 did not hide the kernel lanes"
	keys a
	expect "6copy 7cpuk"
	;;
budget)
	# past the budget the ops are aggregates: the eager lane still shows the
	# whole loop as density (2000 rows alone would fill about one column);
	# 160,000 ops, about a third of the run: 40,000 were a tenth (TensorFlow's
	# import and exit are the rest), 4 to 6 columns of the lane's 60
	need_tf
	start 80 24 "$(budget_recording)"
	expect "eager"
	capture
	row=$(printf '%s\n' "$screen" | grep '^ *eager\|^main [0-9]* *eager' | head -1)
	[ -n "$row" ] || fail "no eager lane"
	shaded=$(printf '%s\n' "$row" | grep -o '░\|▒\|▓\|█' | wc -l)
	[ "$shaded" -ge 5 ] || fail "the eager lane shows $shaded shaded columns, not the whole loop: '$row'"
	;;
filter)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	expect "eager"
	keys 3
	expect "eager hidden"
	capture
	[ -z "$(printf '%s\n' "$screen" | sed -n '4,16p' | grep "eager")" ] || fail "the eager lane is still shown"
	# the graph calls' CPU kernels (7) are the sample's fourth kind
	keys 1 2 7
	expect "every kind is hidden"
	keys a
	expect "eager"
	;;
mouse)
	need_tf
	start 80 24 "$(recording retrace_shape)"
	w0=$(window_ns)
	# the wheel zooms around the pointer
	mouse 64 50 5
	ratio_is "$(window_ns)" "$w0" 0.5
	mouse 65 50 5
	ratio_is "$(window_ns)" "$w0" 1
	# a click on a graph function call selects it
	keys n
	expect "retrace 1/3"
	capture
	row=$(($(line_of "           call ") - 1))
	col=$(printf '%s\n' "$screen" | sed -n "$((row + 1))p" | awk '{ print index($0, "pred") }')
	[ "$col" -gt 18 ] || fail "no call slice to click on"
	mouse 0 "$col" "$row"
	expect "kind: call  name: predict"
	;;
resize)
	start 80 24 "$(recording retrace_shape)"
	expect "[timeline]"
	tmux -L "$sock" resize-window -t v -x 120 -y 40
	sleep 0.5
	capture
	[ "$(printf '%s\n' "$screen" | head -1 | wc -L)" -gt 80 ] || fail "the title did not grow with the terminal"
	tmux -L "$sock" resize-window -t v -x 40 -y 10
	expect "terminal too small (40x10)"
	expect "at least 60x15:"
	tmux -L "$sock" resize-window -t v -x 80 -y 24
	expect "[timeline]"
	expect "details ─"
	;;
small)
	start 50 12 "$(recording retrace_shape)" || true
	wait_for "terminal too small (50x12)" 10
	keys q
	[ "$(wait_exit)" = "EXIT=0" ] || fail "q did not quit a too-small terminal"
	;;
ascii)
	need_tf
	start 80 24 "$(recording retrace_shape)" AGPROF_ASCII=1
	capture
	printf '%s\n' "$screen" | sed -n 3p | grep -q "R" || fail "no ASCII retrace mark"
	printf '%s' "$screen" | LC_ALL=C grep -q '[^ -~]' && fail "non-ASCII bytes on an ASCII terminal"
	keys n
	expect "retrace 1/3"
	;;
plain-locale)
	# a non-UTF-8 locale draws ASCII too
	start 80 24 "$(recording retrace_shape)" LANG=C LC_ALL=C
	capture
	printf '%s' "$screen" | LC_ALL=C grep -q '[^ -~]' && fail "non-ASCII bytes in the C locale"
	expect "[timeline]"
	;;
colors)
	start 80 24 "$(recording retrace_shape)"
	capture -e
	case $screen in *"38;5;"* | *"48;5;"*) ;; *) fail "no 256-colour attributes" ;; esac
	;;
colors8)
	start 80 24 "$(recording retrace_shape)" TERM=screen
	capture -e
	case $screen in *"38;5;"* | *"48;5;"*) fail "256 colours on an 8-colour terminal" ;; esac
	printf '%s' "$screen" | grep -q $'\e\[[0-9;]*4[0-7][;m]' || fail "no 8-colour background"
	;;
no-color)
	start 80 24 "$(recording retrace_shape)" NO_COLOR=1
	capture -e
	printf '%s' "$screen" | grep -q $'\e\[[0-9;]*[34][0-7][;m]\|38;5;\|48;5;' && fail "colours despite NO_COLOR"
	# monochrome still tells slices apart: reverse video
	printf '%s' "$screen" | grep -q $'\e\[[0-9;]*7m' || fail "no reverse video in monochrome"
	;;
mono)
	start 80 24 "$(recording retrace_shape)" TERM=vt100
	capture -e
	printf '%s' "$screen" | grep -q $'\e\[[0-9;]*[34][0-7][;m]\|38;5;' && fail "colours on a monochrome terminal"
	expect "[timeline]"
	;;
not-a-terminal)
	rec=$(recording retrace_shape)
	"$AGPROF" view "$rec" </dev/null >"$work/out" 2>"$work/err"
	rc=$?
	[ $rc = 2 ] || fail "exit status $rc, wanted 2"
	grep -q "needs a terminal" "$work/err" || fail "no clear error: $(cat "$work/err")"
	grep -q "agprof report" "$work/err" || fail "the error does not suggest agprof report"
	;;
bad-recording)
	printf 'not a recording\n' >"$work/bad.agprof"
	: >"$work/empty.agprof"
	for f in "$work/bad.agprof" "$work/empty.agprof" "$work/missing.agprof"; do
		"$AGPROF" report "$f" >/dev/null 2>"$work/report.err"
		want=$?
		tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 24 -s "b$RANDOM" \
			"'$AGPROF' view '$f' 2>'$work/view.err'; echo \$? >'$work/view.rc'"
		i=0
		while [ ! -s "$work/view.rc" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		[ "$(cat "$work/view.rc")" = 2 ] || fail "view of $(basename "$f") exited $(cat "$work/view.rc"), wanted 2"
		[ "$want" = 2 ] || fail "report of $(basename "$f") exited $want"
		cmp -s "$work/report.err" "$work/view.err" ||
			fail "view and report disagree: '$(cat "$work/view.err")' vs '$(cat "$work/report.err")'"
		rm -f "$work/view.rc"
	done
	;;
no-tensorflow)
	# a recording without TensorFlow activity opens, says why, and quits with 0
	"$AGPROF" run -q -o "$work/py.agprof" -- "${python:-python3}" -c 'print(1)' >/dev/null 2>&1 ||
		fail "agprof run of python -c failed"
	start 100 24 "$work/py.agprof"
	expect "TensorFlow was never loaded"
	keys f
	expect "[findings]"
	expect "TensorFlow was never loaded"
	keys q
	keys q
	[ "$(wait_exit)" = "EXIT=0" ] || fail "q did not quit with status 0 ($(cat "$work/stderr"))"
	;;
quit)
	start 80 24 "$(recording retrace_shape)"
	keys f
	expect "[findings]"
	keys q
	expect "[timeline]"
	keys q
	[ "$(wait_exit)" = "EXIT=0" ] || fail "q did not quit with status 0"
	;;
*)
	echo "unknown case '$case_name'" >&2
	exit 2
	;;
esac
echo "ok $case_name"

#!/bin/sh
# overhead-split.sh - where agprof's GPU overhead goes (bench/gpu/device-check.sh
# runs it; needs a GPU).  On small_kernels, best of 3 wall times of:
#   plain                 the program alone
#   agprof-nogpu          under agprof with GPU tracing off (AGPROF_GPU=0)
#   cupti:KINDS           CUPTI alone (cupti_floor.so), records thrown away,
#                         with growing sets of activity kinds
#   agprof                under agprof with its defaults
# each at 0 kernels (start-up and exit) and at N kernels; the cost per kernel
# is (t(N) - t(0)) / N, compared with plain's.  Then torch_small_ops.py plain
# and under agprof when PyTorch with CUDA is there.
#
#   overhead-split.sh AGPROF SMALL_KERNELS OUTDIR [N]
#
# Prints one line per configuration; the last line is "ratio R": agprof
# against plain at N kernels, whole run.
set -u
AGPROF=$1; SK=$2; OUTDIR=$3; N=${4:-200000}
PY=${PYTHON:-python3}
LIMIT=${RUN_LIMIT:-150}
CUDA=${CUDA_HOME:-/usr/local/cuda}
FLOOR=$OUTDIR/cupti_floor.so
ALL=kernel,runtime,driver,memcpy,memset,sync,overhead,external

best() { # best wall seconds of 3 runs of "$@"
	b=
	for i in 1 2 3; do
		t0=$(date +%s.%N)
		timeout "$LIMIT" "$@" > /dev/null 2>&1
		t1=$(date +%s.%N)
		b=$(echo "$t0 $t1 ${b:-}" | awk '{d = $2 - $1; if ($3 == "" || d < $3) print d; else print $3}')
	done
	echo "$b"
}

cc -O2 -shared -fPIC -o "$FLOOR" "$(dirname "$0")/cupti_floor.c" -I"$CUDA/include" \
	-L"$CUDA/lib64" -lcupti -Wl,-rpath,"$CUDA/lib64" 2> "$OUTDIR/cupti_floor.log" ||
	echo "info: cupti_floor.so did not build (cupti_floor.log)"

# config NAME COMMAND...: times at 0 and N kernels, the per-kernel cost.
plain0=; plainN=
config() {
	name=$1; shift
	t0=$(best "$@" "$SK" 0 0)
	tn=$(best "$@" "$SK" "$N" 0)
	if [ -z "$plain0" ]; then plain0=$t0; plainN=$tn; fi
	echo "$name $t0 $tn $plain0 $plainN $N" | awk '{
		per = ($3 - $2) / $6 * 1e6; base = ($5 - $4) / $6 * 1e6
		printf "split: %-28s 0 kernels %.3f s, %d kernels %.3f s, %.2f us/kernel (+%.2f over plain), ratio %.3f\n",
			$1, $2, $6, $3, per, per - base, $3 / $5 }'
	[ "$name" = agprof ] && agprofN=$tn
}
agprofN=
rec=$OUTDIR/split.agprof
config plain env
config agprof-nogpu env AGPROF_GPU=0 "$AGPROF" run -q -f -o "$rec" --
if [ -f "$FLOOR" ]; then
	for kinds in kernel kernel,runtime kernel,runtime,driver; do
		config "cupti:$kinds" env CUDA_INJECTION64_PATH="$FLOOR" CUPTI_FLOOR_KINDS="$kinds"
	done
	config "cupti:all-of-agprof's" env CUDA_INJECTION64_PATH="$FLOOR" CUPTI_FLOOR_KINDS="$ALL"
	config "cupti:all+mono-clock" env CUDA_INJECTION64_PATH="$FLOOR" CUPTI_FLOOR_KINDS="$ALL" CUPTI_FLOOR_MONO=1
fi
config agprof-nodriver env AGPROF_GPU_DRIVER_API=0 "$AGPROF" run -q -f -o "$rec" --
config agprof-cupti-clock env AGPROF_GPU_CLOCK=cupti "$AGPROF" run -q -f -o "$rec" --
config agprof env "$AGPROF" run -q -f -o "$rec" --
rm -f "$rec"

if $PY -c "import torch, sys; sys.exit(not torch.cuda.is_available())" > /dev/null 2>&1; then
	steps=50000
	tp=$(best $PY samples/cuda/torch_small_ops.py $steps)
	ta=$(best "$AGPROF" run -q -f -o "$rec" -- $PY samples/cuda/torch_small_ops.py $steps)
	echo "$tp $ta $steps" | awk '{printf "split: torch_small_ops %d steps: plain %.3f s, agprof %.3f s, ratio %.3f\n", $3, $1, $2, $2 / $1}'
	rm -f "$rec"
fi
echo "$plainN $agprofN" | awk '{printf "ratio %.3f\n", $2 / $1}'

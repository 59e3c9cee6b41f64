#!/bin/sh
# device-check.sh - the end-to-end GPU check of agprof, in one run on a
# machine with an NVIDIA GPU (a few minutes).  From the repository root:
#
#   bench/gpu/device-check.sh [OUTDIR]        (default: $OUT, else /tmp/agprof-gpu-check)
#
# 1. agprof: uses $AGPROF_BUILD (default build-gpu) when its agprof runs
#    here, else builds it with meson into that directory.
# 2. samples/cuda/small_kernels: built with nvcc when there is one, else the
#    binary already in samples/cuda (built elsewhere, carried along).
# 3. Records small_kernels (known counts) and checks the recording with
#    check_recording.py: kernel count equal to the launch count, every
#    kernel and copy tied to its launching call, timestamps on the host clock.
# 4. Overhead: small_kernels with many launches, plain and under agprof,
#    best of 3 each; the target is a wall-time ratio of at most 1.03.
#    overhead-split.sh also times CUPTI alone (cupti_floor.c) to show
#    which part of it is CUPTI's and which agprof's.
# 5. Records torch_small_ops.py and jax_small_ops.py when PyTorch / JAX
#    with CUDA are installed, and checks them the same way; records
#    torch_patterns.py's three patterns (a wait each step, host sleeps
#    between launches, a saturating matmul loop).
# 6. agprof report --gpu and agprof check on the recordings, and which GPU
#    rules fired against which should (rules.txt).
# Everything lands in OUTDIR; summary.txt has one PASS/FAIL/SKIP line per
# step.  Exit status: 0 when nothing failed.
set -u
OUTDIR=${1:-${OUT:-/tmp/agprof-gpu-check}}
BUILD=${AGPROF_BUILD:-build-gpu}
PY=${PYTHON:-python3}
KERNELS=${KERNELS:-20000}
COPIES=${COPIES:-100}
BENCH_KERNELS=${BENCH_KERNELS:-200000}
LIMIT=${RUN_LIMIT:-150}      # seconds for any one run: a hang must not eat the device time
mkdir -p "$OUTDIR"
SUMMARY=$OUTDIR/summary.txt
: > "$SUMMARY"
failed=0
say() { echo "$*" | tee -a "$SUMMARY"; }
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; failed=1; }
skip() { say "SKIP $*"; }

# 0. The machine.
say "== machine: $(uname -sr), $(date -u +%FT%TZ)"
if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
		> "$OUTDIR/nvidia-smi.txt" 2>&1
	say "gpu: $(head -1 "$OUTDIR/nvidia-smi.txt")"
else
	fail "nvidia-smi not found: is this a GPU machine?"
fi

# 1. agprof.
AGPROF=$BUILD/cmd/agprof/agprof
if ! "$AGPROF" --help >/dev/null 2>&1; then
	if command -v meson >/dev/null 2>&1 && command -v ninja >/dev/null 2>&1; then
		say "building agprof into $BUILD"
		{ meson setup "$BUILD" -Dtests=false --wipe || meson setup "$BUILD" -Dtests=false; } \
			> "$OUTDIR/build.log" 2>&1
		ninja -C "$BUILD" >> "$OUTDIR/build.log" 2>&1 || { fail "agprof build (see build.log)"; exit 1; }
	else
		fail "no runnable $AGPROF and no meson/ninja to build it (carry the build directory)"
		exit 1
	fi
fi
# A collector with its CUPTI part exports the CUDA driver's injection entry.
if nm -D "$BUILD/collector/libagprof-collector.so" 2>/dev/null | grep -q " T InitializeInjection"; then
	pass "agprof built with CUPTI"
else
	fail "agprof built without CUPTI (no InitializeInjection in the collector): set -Dcupti_prefix="
fi

# 2. CUPTI: the collector searches itself (docs/gpu.md); tell it about a
# pip wheel's copy when no toolkit is installed.
if [ -z "${AGPROF_CUPTI_LIB:-}" ] && [ ! -e /usr/local/cuda/lib64/libcupti.so ] && [ ! -e /usr/local/cuda/extras/CUPTI/lib64/libcupti.so ]; then
	wheel=$($PY - <<'PYEOF' 2>/dev/null
import glob, os, site, sys
dirs = [p for p in sys.path if p.endswith("-packages")]
try:
    dirs += site.getsitepackages()
except Exception:
    pass
for d in dirs:
    hits = sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcupti.so*")))
    if hits:
        print(hits[-1])
        break
PYEOF
)
	if [ -n "$wheel" ]; then
		export AGPROF_CUPTI_LIB=$wheel
		say "info: CUPTI from the wheel: $wheel"
	fi
fi

# 3. small_kernels, recorded and checked.
SK=samples/cuda/small_kernels
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
	make -C samples/cuda small_kernels > "$OUTDIR/nvcc.log" 2>&1 || say "info: nvcc build failed (nvcc.log)"
fi
record_small_kernels() { # name [VAR=VALUE...]: record small_kernels with that environment, check it
	name=$1; shift
	rec=$OUTDIR/$name.agprof
	rm -f "$rec"
	timeout "$LIMIT" env "$@" "$AGPROF" run -q -o "$rec" -- "$SK" "$KERNELS" "$COPIES" > "$OUTDIR/$name.txt" 2>&1
	rc=$?
	cat "$OUTDIR/$name.txt" >> "$SUMMARY"
	[ $rc -eq 0 ] && pass "$name under agprof exited 0" || fail "$name under agprof: exit $rc"
	if $PY bench/gpu/check_recording.py "$rec" --kernels "$KERNELS" --htod "$COPIES" \
		--dtoh $((COPIES + 1)) --memsets 1 \
		--name 'add_one(float*, int)' --name 'void scale<float>(float*, float, int)' \
		> "$OUTDIR/$name-check.txt" 2>&1; then
		pass "$name recording: $KERNELS kernels, all correlated ($name-check.txt)"
	else
		fail "$name recording ($name-check.txt)"
	fi
	grep -E "^(PASS|FAIL|info)" "$OUTDIR/$name-check.txt" | sed 's/^/    /' >> "$SUMMARY"
}
if [ -x "$SK" ] && "$SK" 10 2 > "$OUTDIR/small_kernels-plain.txt" 2>&1; then
	record_small_kernels small_kernels
	# CUPTI on its own clock, mapped to ours by the collector's calibration.
	record_small_kernels small_kernels-cupti-clock AGPROF_GPU_CLOCK=cupti

	# 4. Overhead, best of 3, split into CUPTI's part and agprof's (overhead-split.sh).
	sh bench/gpu/overhead-split.sh "$AGPROF" "$SK" "$OUTDIR" "$BENCH_KERNELS" > "$OUTDIR/overhead.txt" 2>&1
	grep -E "^(split|info)" "$OUTDIR/overhead.txt" | tee -a "$SUMMARY"
	ratio=$(sed -n 's/^ratio //p' "$OUTDIR/overhead.txt")
	say "overhead: $BENCH_KERNELS kernels, agprof against plain: ratio ${ratio:-?}"
	echo "${ratio:-99}" | awk '{exit !($1 <= 1.03)}' && pass "overhead ratio $ratio <= 1.03" ||
		fail "overhead ratio ${ratio:-?} > 1.03"
else
	fail "small_kernels does not run here (small_kernels-plain.txt): $(tail -1 "$OUTDIR/small_kernels-plain.txt" 2>/dev/null)"
fi

# 5. Framework workloads.
run_py() { # name "script [args]" steps min_kernels
	name=$1; script=$2; steps=$3; min=$4
	rec=$OUTDIR/$name.agprof
	rm -f "$rec"
	# shellcheck disable=SC2086 # script carries its arguments
	timeout "$LIMIT" "$AGPROF" run -q -o "$rec" -- $PY $script "$steps" > "$OUTDIR/$name.txt" 2>&1
	rc=$?
	tail -1 "$OUTDIR/$name.txt" >> "$SUMMARY"
	[ $rc -eq 0 ] || { fail "$name under agprof: exit $rc ($name.txt)"; return; }
	if $PY bench/gpu/check_recording.py "$rec" --kernels-at-least "$min" > "$OUTDIR/$name-check.txt" 2>&1; then
		pass "$name recording: at least $min kernels, all correlated ($name-check.txt)"
	else
		fail "$name recording ($name-check.txt)"
	fi
	grep -E "^(PASS|FAIL|info)" "$OUTDIR/$name-check.txt" | sed 's/^/    /' >> "$SUMMARY"
}
if $PY -c "import torch, sys; sys.exit(not torch.cuda.is_available())" > /dev/null 2>&1; then
	run_py torch samples/cuda/torch_small_ops.py 5000 10000
	run_py torch-sync "samples/cuda/torch_patterns.py sync" 2000 4000
	run_py torch-sleep "samples/cuda/torch_patterns.py sleep" 2000 2000
	run_py torch-matmul "samples/cuda/torch_patterns.py matmul" 400 400
else
	skip "PyTorch with CUDA not available"
fi
if $PY -c "import jax, sys; sys.exit(not any(d.platform == 'gpu' for d in jax.devices()))" > /dev/null 2>&1; then
	run_py jax samples/cuda/jax_small_ops.py 2000 2000
else
	skip "JAX with a GPU not available"
fi

# 6. What agprof says about them: which GPU rules fire, against which should.
gpu_rules() { # recording -> the GPU rule ids among its findings, space-separated
	"$AGPROF" report --format json "$1" 2> /dev/null | $PY -c '
import json, sys
ids = sorted({f["rule"] for f in json.load(sys.stdin)["findings"]
              if f["rule"] in ("gpu-idle", "launch-bound", "host-device-sync")})
print(" ".join(ids))' 2> /dev/null
}
expect_rules() { # name "should fire" "should not fire"
	rec=$OUTDIR/$1.agprof
	[ -f "$rec" ] || return
	fired=$(gpu_rules "$rec")
	echo "$1: fired [$fired], expected [$2], not expected [$3]" >> "$OUTDIR/rules.txt"
	for r in $2; do
		case " $fired " in *" $r "*) pass "$1: $r fired";; *) fail "$1: $r did not fire (fired: ${fired:-none})";; esac
	done
	for r in $3; do
		case " $fired " in *" $r "*) fail "$1: $r fired where it should not";; *) pass "$1: $r quiet";; esac
	done
}
for rec in "$OUTDIR"/*.agprof; do
	[ -f "$rec" ] || continue
	base=$(basename "$rec" .agprof)
	[ "$base" = bench ] && continue
	"$AGPROF" report --gpu "$rec" > "$OUTDIR/$base-report.txt" 2>&1 ||
		say "info: agprof report --gpu $base: exit $? ($base-report.txt)"
	"$AGPROF" check "$rec" > "$OUTDIR/$base-check-rules.txt" 2>&1
	say "info: $base: GPU rules fired: [$(gpu_rules "$rec")]"
done
: > "$OUTDIR/rules.txt"
expect_rules small_kernels "launch-bound" ""
expect_rules torch "launch-bound gpu-idle" ""
expect_rules torch-sync "host-device-sync" ""
expect_rules torch-sleep "gpu-idle" ""
expect_rules torch-matmul "" "gpu-idle launch-bound host-device-sync"
rm -f "$OUTDIR/bench.agprof"

say "== $( [ $failed -eq 0 ] && echo 'all passed' || echo 'some checks FAILED')"
exit $failed

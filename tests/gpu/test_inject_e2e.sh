#!/bin/sh
# test_inject_e2e.sh - `agprof run` on a "CUDA program" with a stand-in CUDA
# driver and CUPTI (fake_cuda.c, fake_cupti.c): the launcher's
# CUDA_INJECTION64_PATH, the driver calling InitializeInjection(), records
# through the collector's buffers into the recording, checked by
# bench/gpu/check_recording.py exactly as on a GPU machine.
# Environment (from meson): AGPROF, FAKE_CUDA_DIR, FAKE_CUPTI, FAKE_CUDA_APP,
# AGPROF_SOURCE_ROOT, AGPROF_SANITIZE.
set -eu
# A sanitized collector cannot be preloaded into an unsanitized program.
# The collector is never instrumented (collector/meson.build); in a sanitizer
# build the stand-in application is, so let the preloaded collector come first.
case ${AGPROF_SANITIZE:-none} in
none|'') ;;
*) export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=5000
LD_LIBRARY_PATH=$FAKE_CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} AGPROF_CUPTI_LIB=$FAKE_CUPTI \
	"$AGPROF" run -q -o "$tmp/rec.agprof" -- "$FAKE_CUDA_APP" $n > "$tmp/out.txt" 2>&1 || {
	cat "$tmp/out.txt"
	echo "agprof run failed"
	exit 1
}
grep -q "fake_cuda_app: kernels=$n" "$tmp/out.txt"
python3 "$AGPROF_SOURCE_ROOT/bench/gpu/check_recording.py" "$tmp/rec.agprof" --kernels $n \
	--name 'kernel()' --name 'other(float*, int)'

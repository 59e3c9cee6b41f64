#!/bin/sh
# fuzz.sh - build one harness of tests/fuzz/ with libFuzzer and run it.
#
#   tests/fuzz/fuzz.sh NAME [SECONDS] [libFuzzer options...]
#
# NAME: functiondef, rules, ring or recording.  Needs clang (Debian: apt-get
# install clang) and a configured meson build in ./build (for config.h).
# Builds build-fuzz/fuzz-NAME with -fsanitize=fuzzer,address,undefined,
# fuzzes for SECONDS (default 600) from tests/fuzz/corpus/NAME into the
# scratch corpus build-fuzz/corpus-NAME; a crasher is written as
# build-fuzz/crash-NAME-*.  Copy a crasher into tests/fuzz/corpus/NAME/ once
# it is fixed: `meson test --suite fuzz` replays it from then on.
set -eu
name=${1:?usage: tests/fuzz/fuzz.sh NAME [SECONDS] [libFuzzer options...]}
secs=${2:-600}
[ $# -ge 2 ] && shift 2 || shift $#
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build-fuzz
cc=${CC_FUZZ:-clang}
mkdir -p "$out/corpus-$name" "$out/obj"
[ -f "$root/build/config.h" ] || { echo "fuzz.sh: run meson setup build first (config.h)" >&2; exit 2; }
python3 "$root/common/embed.py" "$root/common/schema.sql" "$out/obj/schema_sql.c" agprof_schema_sql
# the job queries analyzer/model embeds (analyzer/model/meson.build)
sqlsrcs=
for q in "$root"/analyzer/model/sql/*.sql; do
	b=$(basename "$q" .sql)
	python3 "$root/common/embed.py" "$q" "$out/obj/sql_$b.c" "agprof_sql_$b"
	sqlsrcs="$sqlsrcs $out/obj/sql_$b.c"
done

# every file of libagprof-common (common/meson.build lists them all)
common=$(cd "$root/common" && ls *.c)
analyzer=$(cd "$root/analyzer" && ls */*.c)
srcs="$out/obj/schema_sql.c"
for f in $common; do srcs="$srcs $root/common/$f"; done
# recording-report, recording-chrome, recording-view: the recording harness
# with one stage of readers (FUZZ_STAGES in fuzz_recording.c), its corpus shared
src=$name stages=
case $name in
functiondef|ring) ;;
rules|recording) for f in $analyzer; do srcs="$srcs $root/analyzer/$f"; done; srcs="$srcs $sqlsrcs" ;;
recording-report|recording-chrome|recording-view)
	for f in $analyzer; do srcs="$srcs $root/analyzer/$f"; done
	srcs="$srcs $sqlsrcs" src=recording
	case $name in *report) stages=1 ;; *chrome) stages=2 ;; *view) stages=4 ;; esac
	stages=-DFUZZ_STAGES=$stages ;;
*) echo "fuzz.sh: no harness '$name' (functiondef, rules, ring, recording, recording-report, recording-chrome, recording-view)" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
$cc -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DFUZZ_SOURCE_ROOT="\"$root\"" $stages -I"$root/build" -I"$root" -I"$root/common" -I"$root/analyzer/model" -I"$root/analyzer/gpu" -I"$root/analyzer/rules" -I"$root/analyzer/advice" \
	-I"$root/analyzer/report" -I"$root/analyzer/timeline" -I"$root/analyzer/export" -I"$root/analyzer/html" \
	-o "$out/fuzz-$name" "$root/tests/fuzz/fuzz_$src.c" $srcs -lsqlite3 -lm -ldl -lpthread

# inputs no longer than the seeds need: the rules corpus holds 400 KB nesting tests
case $name in recording*) maxlen=65536 ;; *) maxlen=8192 ;; esac
# the readers print one error line per bad input: keep libFuzzer's own output
# only (a crasher's report: replay it with build/tests/fuzz/fuzz-NAME FILE)
case $name in recording*|rules) quiet=-close_fd_mask=2 ;; *) quiet= ;; esac

cd "$out"
# shellcheck disable=SC2086
exec "$out/fuzz-$name" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$out/crash-$name-" \
	-timeout=10 -rss_limit_mb=4096 -max_len="$maxlen" $quiet "$@" "$out/corpus-$name" "$root/tests/fuzz/corpus/$src"

#!/bin/sh
# fuzz.sh - build one harness of tests/fuzz/ with libFuzzer and run it.
#
#   tests/fuzz/fuzz.sh NAME [SECONDS] [libFuzzer options...]
#
# NAME: functiondef, rules, ring or recording[-current][-report|-chrome|-view].
# Needs clang (Debian: apt-get install clang) and a configured meson build in
# ./build (for config.h).
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
mkdir -p "$out/obj"
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
# with one stage of readers (FUZZ_STAGES in fuzz_recording.c), its corpus
# shared; recording-current[-STAGE]: the same on base-current.agprof (the
# current schema), seeded from corpus/recording-current
given=$name src=$name seeds=$name stages=
case $name in
functiondef|ring|rules) ;;
recording|recording-*)
	src=recording seeds=recording rest=${name#recording}
	case $rest in -current*)
		seeds=recording-current rest=${rest#-current}
		FUZZ_BASE=$root/tests/fuzz/base-current.agprof
		export FUZZ_BASE ;;
	esac
	case $rest in
	'') ;;
	-report) stages=-DFUZZ_STAGES=1 ;;
	-chrome) stages=-DFUZZ_STAGES=2 ;;
	-view) stages=-DFUZZ_STAGES=4 ;;
	*) name=bad ;;
	esac ;;
*) name=bad ;;
esac
[ "$name" != bad ] || { echo "fuzz.sh: no harness '$given' (functiondef, rules, ring, recording[-current][-report|-chrome|-view])" >&2; exit 2; }
mkdir -p "$out/corpus-$name"
case $src in rules|recording) for f in $analyzer; do srcs="$srcs $root/analyzer/$f"; done; srcs="$srcs $sqlsrcs" ;; esac
# SQLite's allocations outside ASan for the recording harnesses (sqlite_heap.c):
# that file is built without sanitizers or coverage
heap=
case $name in recording*)
	$cc -g -O2 -std=gnu11 -c -o "$out/obj/sqlite_heap.o" "$root/tests/fuzz/sqlite_heap.c"
	heap="-DFUZZ_SQLITE_HEAP $out/obj/sqlite_heap.o" ;;
esac
# shellcheck disable=SC2086
$cc -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DFUZZ_SOURCE_ROOT="\"$root\"" $stages $heap -I"$root/build" -I"$root" -I"$root/common" -I"$root/analyzer/model" -I"$root/analyzer/gpu" -I"$root/analyzer/rules" -I"$root/analyzer/advice" \
	-I"$root/analyzer/report" -I"$root/analyzer/timeline" -I"$root/analyzer/export" -I"$root/analyzer/html" \
	-o "$out/fuzz-$name" "$root/tests/fuzz/fuzz_$src.c" $srcs -lsqlite3 -lm -ldl -lpthread

# inputs no longer than the seeds need: the rules corpus holds 400 KB nesting tests
case $name in recording*) maxlen=131072 ;; *) maxlen=8192 ;; esac
# the readers print one error line per bad input: keep libFuzzer's own output
# only (a crasher's report: replay it with build/tests/fuzz/fuzz-NAME FILE)
case $name in recording*|rules) quiet=-close_fd_mask=2 ;; *) quiet= ;; esac

cd "$out"
# shellcheck disable=SC2086
exec "$out/fuzz-$name" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$out/crash-$name-" \
	-timeout=10 -rss_limit_mb=4096 -max_len="$maxlen" $quiet "$@" "$out/corpus-$name" "$root/tests/fuzz/corpus/$seeds"

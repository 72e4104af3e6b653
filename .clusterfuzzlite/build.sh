#!/bin/bash -eu
# SPDX-License-Identifier: GPL-2.0-only
# ClusterFuzzLite / OSS-Fuzz build of umemcg's policy fuzzer (test/fuzz/fuzz_policy.cc):
# builds the libFuzzer target with the engine's compiler and flags ($CC, $CXX, $CFLAGS and
# $CXXFLAGS, which meson takes from the environment),
# and puts into $OUT the target, the policy object it fuzzes (policy.bpf.o, next to the
# binary, where the target looks for it), a seed corpus and the target's options.
# POLICY (default kernfs_lockholder): the test/progs/ object to fuzz; a team fuzzing its own
# policy adds its .bpf.c there (or copies its .bpf.o to $OUT/policy.bpf.o).
POLICY=${POLICY:-kernfs_lockholder}
BUILD=$WORK/build-fuzz
# The engine's flags go to every source (sanitizers and coverage); libFuzzer itself is linked
# into the target by its meson rule (-fsanitize=fuzzer, the same as $LIB_FUZZING_ENGINE for
# the libfuzzer engine).
# The engine's C++ flags name its own libc++ (-stdlib=libc++); the distribution's abseil, libbpf
# and liburcu are built against libstdc++, so the target is too (libFuzzer carries its own).
CXXFLAGS=${CXXFLAGS//-stdlib=libc++/}
export CXXFLAGS
rm -rf "$BUILD"
meson setup "$BUILD" --buildtype=plain -Dfuzz=true -Djemalloc=disabled -Db_lundef=false
ninja -C "$BUILD" test/fuzz/umemcg-policy-fuzzer "test/progs/$POLICY.bpf.o"
cp "$BUILD/test/fuzz/umemcg-policy-fuzzer" "$OUT/"
cp "$BUILD/test/progs/$POLICY.bpf.o" "$OUT/policy.bpf.o"
# Seed corpus: a few byte strings (each is a whole case: every input decodes to one).
seeds=$(mktemp -d)
for i in 0 1 2 3 4 5 6 7; do
  printf '%064d' "$((i * 1234567))" > "$seeds/seed$i"
done
(cd "$seeds" && zip -q "$OUT/umemcg-policy-fuzzer_seed_corpus.zip" seed*)
rm -rf "$seeds"
cat > "$OUT/umemcg-policy-fuzzer.options" <<OPTS
[libfuzzer]
max_len = 256
timeout = 120
OPTS

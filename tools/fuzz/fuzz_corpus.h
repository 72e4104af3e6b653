// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_corpus.h: the corpus of `umemcg fuzz --corpus DIR`: the cases that added
// coverage of the policy's programs, kept as replayable scripts.
//
// A corpus file is a case's script (fuzz_case_script(): the header names the scheduler's seed,
// `umemcg sh --seed N FILE` replays it) with its three parts marked by comment lines
// (kSetupMarker, kBodyMarker, kTailMarker), so that a corpus case that fails is minimized as a
// generated one is. A campaign runs the corpus's cases first, then generates new ones; a new
// case that adds coverage is saved.
//
// Mirrors: nothing in the kernel; libFuzzer's corpus directories (one input per file, inputs
//   that add coverage are kept) are the model.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/fuzz/fuzz_case.h"

namespace umemcg::fuzz {

inline constexpr const char *kSetupMarker = "# @setup";
inline constexpr const char *kBodyMarker = "# @body";
inline constexpr const char *kTailMarker = "# @tail";

struct CorpusEntry {
  std::string file;  // the file's name in the directory
  FuzzCase c;
};

// The text of c's corpus file.
std::string fuzz_corpus_text(const FuzzCase &c);

/**
 * fuzz_corpus_save - write @c as @dir/@name (creating @dir if needed)
 * Returns false with *err set when the file cannot be written.
 */
bool fuzz_corpus_save(const std::string &dir, const std::string &name, const FuzzCase &c,
                      std::string *err);

/**
 * fuzz_corpus_load - the cases of every *.sh file of @dir, by file name
 * The cases are adapted to the campaign's target @t: the object's `bpf load` line names
 * t.object, the debt and stall limits are the target's, and the --assert dump lines follow
 * t.assert_var.
 * A missing directory is an empty corpus; a file that is not a corpus file is an error naming it.
 */
absl::StatusOr<std::vector<CorpusEntry>> fuzz_corpus_load(const std::string &dir,
                                                          const FuzzTarget &t);

}  // namespace umemcg::fuzz

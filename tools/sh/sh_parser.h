// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_parser.h: the cgroup shell's parser: source text to a syntax tree (sh_ast.h).
//
// The grammar is the POSIX shell's (XCU 2.10) for the subset of ../shared/spec/cgroup-shell.md:
// simple commands with assignments and redirections (< > >> <> <& >& with a descriptor number
// before them), ; and newline, && and ||, !, if/elif/else, while, until, for, { } and ( ),
// quoting with \ '...' "...", parameters $NAME ${NAME} $? $! $# $0..$9 with ${#NAME} and the
// ${NAME:-word} family (- = + ? with or without ':'), $(...) and `...`
// substitution, $((...)) arithmetic, # comments, case. Not in the subset, and a syntax error
// saying so: pipelines (|), background lists (&), here-documents (<<), function definitions.
// Syntax errors read as dash's: `Syntax error: "fi" unexpected`.
#pragma once

#include <string>

#include "tools/sh/sh_ast.h"

namespace umemcg::sh {

struct ParseResult {
  NodePtr program;        // a kList, set when ok
  bool ok = false;
  bool incomplete = false;  // the error is the end of the text: more lines may complete it
  int error_line = 0;
  std::string error;        // "Syntax error: ..."
};

/**
 * sh_parse - parse shell source text
 * @text: the source
 * @first_line: the line number of the text's first line
 * @streaming: the text is what arrived so far of a stream: a backslash-newline at its very end
 *             makes it incomplete (in a whole script it is removed)
 *
 * Returns the program, or the first syntax error with its line. Nesting deeper than 200 levels
 * is a syntax error (the parser and the interpreter recurse along it).
 */
ParseResult sh_parse(const std::string &text, int first_line, bool streaming);

}  // namespace umemcg::sh

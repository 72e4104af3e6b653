// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_ast.h: the cgroup shell's syntax tree (what tools/sh/sh_parser.cc builds and
// tools/sh/sh_exec.cc runs).
//
// A Word keeps its quoting: it is a list of parts (literal text, parameter, command
// substitution, arithmetic), each marked quoted or not, because field splitting and pathname
// expansion apply only to the unquoted results of expansion.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace umemcg::sh {

struct Node;

struct WordPart {
  enum class Kind { kLit, kParam, kCmdSub, kArith };
  Kind kind = Kind::kLit;
  bool quoted = false;
  std::string text;                  // kLit: the text; kParam: the name ("?", "!", "HOME", "1")
  std::shared_ptr<const Node> sub;   // kCmdSub: the command list
  std::vector<WordPart> arith;       // kArith: the expression, itself a word
  // kParam: "" for $NAME; "#" for ${#NAME}; or one of ":-" "-" ":=" "=" ":+" "+" ":?" "?"
  // with its word in arith.
  std::string op;
};

struct Word {
  std::vector<WordPart> parts;
};

struct Redir {
  // < > >> <> <& >&
  enum class Op { kIn, kOut, kAppend, kReadWrite, kDupIn, kDupOut };
  int fd = 0;
  Op op = Op::kIn;
  Word target;  // a file, or for the dup operators a descriptor number or "-"
};

struct Node {
  enum class Kind {
    kSimple,    // assigns, words, redirs
    kList,      // kids run in order
    kAndOr,     // kids joined by ops ("&&" true, "||" false), left to right
    kNot,       // ! kids[0]
    kIf,        // kids: cond, then, [cond, then]..., [else]
    kWhile,     // kids: cond, body
    kUntil,     // kids: cond, body
    kFor,       // var, items (or "$@" when !has_in), kids[0] the body
    kBrace,     // { kids[0]; }
    kSubshell,  // ( kids[0] )
    kCase,      // case words[0] in patterns[i]) kids[i];; ... esac
  };
  Kind kind = Kind::kSimple;
  int line = 0;
  std::vector<std::pair<std::string, Word>> assigns;
  std::vector<Word> words;
  std::vector<Redir> redirs;   // simple and compound commands
  std::vector<std::unique_ptr<Node>> kids;
  std::vector<bool> and_ops;   // kAndOr: and_ops[i] joins kids[i] and kids[i + 1]
  std::string var;             // kFor
  std::vector<Word> items;     // kFor
  bool has_in = false;         // kFor
  std::vector<std::vector<Word>> patterns;  // kCase: each item's patterns (p1 | p2)
};

using NodePtr = std::unique_ptr<Node>;

}  // namespace umemcg::sh

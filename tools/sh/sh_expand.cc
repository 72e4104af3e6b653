// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_expand.cc: word expansion (XCU 2.6): parameters, command substitution and
// arithmetic, left to right; then field splitting of the unquoted results on IFS; then pathname
// expansion (* ? [...]) against the machine's directories; then quote removal.
//
// Parameters take the operators ${#NAME} ${NAME:-word} ${NAME-word} ${NAME:=word} ${NAME=word}
// ${NAME:+word} ${NAME+word} ${NAME:?word} ${NAME?word}.
// Emulation: no pattern removal (${NAME%word} and the like are a syntax error), and "$@" is
//   one field like "$*".
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "tools/sh/sh_arith.h"
#include "tools/sh/sh_shell.h"

namespace umemcg::sh {

std::string Shell::param(const std::string &name) const {
  if (name == "?") return std::to_string(status_);
  if (name == "!") return last_pid_ ? std::to_string(last_pid_) : "";
  if (name == "$") return std::to_string(os_.getpid());
  if (name == "#") return std::to_string(positional_.size() - 1);
  if (name == "-") return errexit_ ? "e" : "";
  if (name == "@" || name == "*") {
    std::string r;
    for (size_t i = 1; i < positional_.size(); i++) r += (i > 1 ? " " : "") + positional_[i];
    return r;
  }
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
    size_t i = name.size() > 4 ? positional_.size() : std::stoul(name);
    return i < positional_.size() ? positional_[i] : "";
  }
  return var(name);
}

bool Shell::param_set(const std::string &name) const {
  if (name == "!") return last_pid_ != 0;
  if (name.size() == 1 && std::strchr("?$#-@*", name[0])) return true;
  if (std::isdigit(static_cast<unsigned char>(name[0])))
    return name.size() <= 4 && std::stoul(name) < positional_.size();
  return vars_.count(name) != 0;
}

// ${#NAME} and ${NAME<op>word} (XCU 2.6.2). The word's pieces are appended to *pieces (they
// keep their quoting) when it is used; otherwise *piece is the value. ${NAME:?word} fails the
// command.
bool Shell::param_op(const WordPart &p, int line, std::vector<Piece> *pieces, Piece *piece) {
  std::string value = param(p.text);
  if (p.op == "#") {
    piece->text = std::to_string(value.size());
    return true;
  }
  const bool colon = p.op[0] == ':';
  const char kind = p.op.back();
  const bool unset_or_null = !param_set(p.text) || (colon && value.empty());
  bool use_word = kind == '+' ? !unset_or_null : unset_or_null;
  if (!use_word) {
    piece->text = kind == '+' ? "" : value;
    return true;
  }
  std::vector<Piece> word;
  if (!expand_pieces(p.arith, line, &word)) return false;
  if (kind == '-' || kind == '+') {
    for (Piece &q : word) q.expanded = true;  // the result of an expansion: split when unquoted
    pieces->insert(pieces->end(), word.begin(), word.end());
    piece->text.clear();
    return true;
  }
  std::string text;
  for (const Piece &q : word) text += q.text;
  if (kind == '?') {
    error_line(line, p.text + ": " + (text.empty() ? "parameter not set" : text));
    return false;
  }
  // '=': assign, then expand to the new value.
  if (!std::isalpha(static_cast<unsigned char>(p.text[0])) && p.text[0] != '_') {
    error_line(line, p.text + ": cannot assign in this way");
    return false;
  }
  vars_[p.text] = text;
  piece->text = text;
  return true;
}

bool Shell::expand_pieces(const std::vector<WordPart> &parts, int line, std::vector<Piece> *pieces) {
  size_t total = 0;
  for (const WordPart &p : parts) {
    Piece piece{"", p.quoted, p.kind != WordPart::Kind::kLit};
    switch (p.kind) {
      case WordPart::Kind::kLit:
        piece.text = p.text;
        break;
      case WordPart::Kind::kParam:
        if (p.op.empty()) {
          piece.text = param(p.text);
        } else if (!param_op(p, line, pieces, &piece)) {
          return false;
        }
        break;
      case WordPart::Kind::kCmdSub: {
        std::ostringstream cap;
        int st = 0;
        subshell(*p.sub, &cap, &st);
        cmdsub_status_ = st;
        status_ = st;
        piece.text = cap.str();
        while (!piece.text.empty() && piece.text.back() == '\n') piece.text.pop_back();
        break;
      }
      case WordPart::Kind::kArith: {
        std::vector<Piece> inner;
        if (!expand_pieces(p.arith, line, &inner)) return false;
        std::string expr;
        for (const Piece &q : inner) expr += q.text;
        ArithVars vars{[this](const std::string &n) { return var(n); },
                       [this](const std::string &n, const std::string &v) { set_var(n, v); }};
        int64_t v = 0;
        std::string why;
        if (!sh_arith(expr, vars, &v, &why)) {
          error_line(line, "arithmetic expression: " + why + ": \"" + expr + "\"");
          return false;
        }
        piece.text = std::to_string(v);
        break;
      }
    }
    total += piece.text.size();
    if (total > kMaxWordBytes) {
      error_line(line, std::string("sh: expansion: ") + std::strerror(E2BIG));
      return false;
    }
    pieces->push_back(std::move(piece));
  }
  return true;
}

bool Shell::expand_string(const Word &w, int line, std::string *out) {
  std::vector<Piece> pieces;
  if (!expand_pieces(w.parts, line, &pieces)) return false;
  out->clear();
  for (const Piece &p : pieces) *out += p.text;
  return true;
}

namespace {

// The fnmatch pattern of expanded pieces: quoted pattern characters escaped.
std::string pattern_of(const std::vector<Shell::Piece> &pieces) {
  std::string pattern;
  for (const Shell::Piece &p : pieces)
    for (char ch : p.text) {
      if (p.quoted && (ch == '*' || ch == '?' || ch == '[' || ch == '\\')) pattern += '\\';
      else if (!p.quoted && ch == '\\') pattern += '\\';
      pattern += ch;
    }
  return pattern;
}

}  // namespace

bool Shell::expand_pattern(const Word &w, int line, std::string *out) {
  std::vector<Piece> pieces;
  if (!expand_pieces(w.parts, line, &pieces)) return false;
  *out = pattern_of(pieces);
  return true;
}

bool Shell::expand_fields(const Word &w, int line, std::vector<std::string> *fields) {
  std::vector<Piece> pieces;
  if (!expand_pieces(w.parts, line, &pieces)) return false;
  const std::string ifs = var("IFS");
  std::vector<std::vector<Piece>> split;
  std::vector<Piece> cur;
  bool have = false;
  for (Piece &p : pieces) {
    if (p.quoted || !p.expanded) {
      have |= p.quoted || !p.text.empty();
      cur.push_back(std::move(p));
      continue;
    }
    std::string run;
    for (char ch : p.text) {
      if (ifs.find(ch) != std::string::npos) {
        if (!run.empty()) cur.push_back(Piece{run, false, true}), run.clear();
        if (have) split.push_back(std::move(cur));
        cur.clear();
        have = false;
      } else {
        run += ch;
        have = true;
      }
    }
    if (!run.empty()) cur.push_back(Piece{run, false, true});
  }
  if (have) split.push_back(std::move(cur));
  for (const std::vector<Piece> &f : split) glob(f, fields);
  if (fields->size() > 100000) {
    error_line(line, std::string("sh: expansion: ") + std::strerror(E2BIG));
    return false;
  }
  return true;
}

namespace {

bool has_magic(const std::string &pattern) {
  for (size_t i = 0; i < pattern.size(); i++) {
    if (pattern[i] == '\\') i++;
    else if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[') return true;
  }
  return false;
}

std::string unescape(const std::string &pattern) {
  std::string r;
  for (size_t i = 0; i < pattern.size(); i++) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) i++;
    r += pattern[i];
  }
  return r;
}

}  // namespace

// Pathname expansion: each component with an unquoted * ? [ is matched against the names in
// its directory (fnmatch, a leading '.' only matched by a '.'), sorted; no match leaves the
// word as it was written (without its quotes).
void Shell::glob(const std::vector<Piece> &field, std::vector<std::string> *out) {
  std::string plain;
  for (const Piece &p : field) plain += p.text;
  const std::string pattern = pattern_of(field);
  if (!has_magic(pattern)) {
    out->push_back(plain);
    return;
  }
  std::vector<std::string> comps;
  size_t i = 0;
  while (i <= pattern.size()) {
    size_t j = pattern.find('/', i);
    if (j == std::string::npos) j = pattern.size();
    comps.push_back(pattern.substr(i, j - i));
    i = j + 1;
  }
  // Paths as the user will see them: relative stays relative.
  std::vector<std::string> cur = {pattern[0] == '/' ? "/" : ""};
  for (size_t k = 0; k < comps.size(); k++) {
    const std::string &comp = comps[k];
    if (comp.empty()) continue;
    std::vector<std::string> next;
    for (const std::string &prefix : cur) {
      auto join = [&](const std::string &name) {
        return prefix.empty() ? name : (prefix.back() == '/' ? prefix + name : prefix + "/" + name);
      };
      if (!has_magic(comp)) {
        next.push_back(join(unescape(comp)));
        continue;
      }
      std::vector<std::string> names;
      if (os_.readdir(resolve(prefix.empty() ? "." : prefix), &names) < 0) continue;
      std::sort(names.begin(), names.end());
      for (const std::string &name : names)
        if (fnmatch(comp.c_str(), name.c_str(), FNM_PERIOD) == 0) next.push_back(join(name));
    }
    cur = std::move(next);
    if (cur.size() > 100000) break;
  }
  std::vector<std::string> found;
  for (const std::string &p : cur) {
    bool is_dir;
    if (os_.stat(resolve(p), &is_dir) == 0) found.push_back(p);
  }
  if (found.empty()) out->push_back(plain);
  else out->insert(out->end(), found.begin(), found.end());
}

}  // namespace umemcg::sh

// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_parser.cc: recursive-descent parser of the cgroup shell's language (sh_parser.h).
//
// The parser reads characters, not a token stream: a shell's tokens depend on where they are
// (reserved words only in command position, `#` only at the start of a word, `)` ending a
// command substitution), so each rule reads what it needs from the current position.
#include "tools/sh/sh_parser.h"

#include <cctype>
#include <cstring>
#include <utility>

namespace umemcg::sh {
namespace {

constexpr int kMaxDepth = 200;

struct SyntaxError {
  int line;
  std::string msg;
  bool eof;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }
// Characters that end an unquoted word.
bool is_meta(char c) { return std::strchr(" \t\n;&|<>()", c) != nullptr; }

const char *const kReserved[] = {"if", "then", "else", "elif", "fi", "do", "done", "while",
                                 "until", "for", "in", "{", "}", "!", "case", "esac"};

class Parser {
 public:
  Parser(const std::string &s, int line, bool streaming) : s_(s), line_(line), streaming_(streaming) {}

  NodePtr program() {
    NodePtr list = compound_list({}, false);
    skip_blanks();
    if (pos_ < s_.size()) fail_at_token();
    return list;
  }

 private:
  const std::string &s_;
  size_t pos_ = 0;
  int line_;
  bool streaming_;
  int depth_ = 0;

  [[noreturn]] void fail(const std::string &msg) { throw SyntaxError{line_, "Syntax error: " + msg, false}; }
  [[noreturn]] void fail_eof(const std::string &expecting) {
    throw SyntaxError{line_, "Syntax error: end of file unexpected" +
                                 (expecting.empty() ? "" : " (expecting \"" + expecting + "\")"),
                      true};
  }

  bool eof() const { return pos_ >= s_.size(); }
  char cur() const { return eof() ? '\0' : s_[pos_]; }
  char at(size_t off) const { return pos_ + off < s_.size() ? s_[pos_ + off] : '\0'; }

  struct DepthGuard {
    Parser *p;
    explicit DepthGuard(Parser *pp) : p(pp) {
      if (++p->depth_ > kMaxDepth) p->fail("nested too deeply");
    }
    ~DepthGuard() { p->depth_--; }
  };

  // Blanks, backslash-newlines and a comment, not newlines.
  void skip_blanks() {
    for (;;) {
      if (is_blank(cur())) {
        pos_++;
      } else if (cur() == '\\' && at(1) == '\n') {
        continuation();
      } else if (cur() == '#') {
        while (!eof() && cur() != '\n') pos_++;
      } else {
        return;
      }
    }
  }

  // At a backslash-newline: removed; at the very end of a streamed text, more must come.
  void continuation() {
    pos_ += 2;
    line_++;
    if (eof() && streaming_) fail_eof("");
  }

  void skip_newlines() {
    for (;;) {
      skip_blanks();
      if (cur() != '\n') return;
      pos_++;
      line_++;
    }
  }

  // The reserved word at the position (command position only), or "".
  std::string peek_reserved() {
    for (const char *r : kReserved) {
      size_t n = std::strlen(r);
      if (s_.compare(pos_, n, r) == 0) {
        char next = at(n);
        if (next == '\0' || is_meta(next)) return r;
      }
    }
    return "";
  }

  void expect_reserved(const char *w) {
    skip_newlines();
    if (peek_reserved() == w) {
      pos_ += std::strlen(w);
      return;
    }
    if (eof()) fail_eof(w);
    fail_at_token();
  }

  [[noreturn]] void fail_at_token() {
    if (eof()) fail_eof("");
    std::string tok = peek_reserved();
    if (tok.empty()) {
      static const char *const kOps[] = {"&&", "||", ";;", "<<", ";", "&", "|", "(", ")", "\n"};
      for (const char *o : kOps)
        if (s_.compare(pos_, std::strlen(o), o) == 0) {
          tok = o;
          break;
        }
    }
    if (tok == "\n") fail("newline unexpected");
    if (tok.empty()) tok = std::string(1, cur());
    fail("\"" + tok + "\" unexpected");
  }

  // A list of and-or lists separated by ; or newlines, ending before one of @stops (reserved
  // words), before ')' when @paren, or at the end of the text (only when both are empty).
  NodePtr compound_list(std::initializer_list<const char *> stops, bool paren) {
    DepthGuard g(this);
    auto list = std::make_unique<Node>();
    list->kind = Node::Kind::kList;
    list->line = line_;
    const bool top = stops.size() == 0 && !paren;
    for (;;) {
      skip_newlines();
      if (eof()) {
        if (top) return list;
        fail_eof(stops.size() ? *(stops.end() - 1) : ")");
      }
      if (paren && cur() == ')') break;
      std::string r = peek_reserved();
      bool stop = false;
      for (const char *st : stops) stop |= r == st;
      if (stop) break;
      list->kids.push_back(and_or());
      skip_blanks();
      if (cur() == ';' && at(1) != ';') {
        pos_++;
      } else if (cur() == '\n') {
        pos_++;
        line_++;
      } else if (cur() == '&' && at(1) != '&') {
        fail("\"&\" unexpected (background lists are not supported: use spawn)");
      } else {
        break;
      }
    }
    if (list->kids.empty()) fail_at_token();
    return list;
  }

  NodePtr and_or() {
    auto first = pipeline();
    skip_blanks();
    if (!((cur() == '&' && at(1) == '&') || (cur() == '|' && at(1) == '|'))) return first;
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::kAndOr;
    n->line = first->line;
    n->kids.push_back(std::move(first));
    while ((cur() == '&' && at(1) == '&') || (cur() == '|' && at(1) == '|')) {
      n->and_ops.push_back(cur() == '&');
      pos_ += 2;
      skip_newlines();
      if (eof()) fail_eof("");
      n->kids.push_back(pipeline());
      skip_blanks();
    }
    return n;
  }

  NodePtr pipeline() {
    skip_blanks();
    if (peek_reserved() == "!") {
      int line = line_;
      pos_++;
      skip_blanks();
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::kNot;
      n->line = line;
      n->kids.push_back(command());
      return n;
    }
    return command();
  }

  NodePtr command() {
    DepthGuard g(this);
    skip_blanks();
    if (eof()) fail_eof("");
    std::string r = peek_reserved();
    NodePtr n;
    if (r == "if") n = if_clause();
    else if (r == "while" || r == "until") n = while_clause(r == "while");
    else if (r == "for") n = for_clause();
    else if (r == "{") n = brace_group();
    else if (r == "case") n = case_clause();
    else if (cur() == '(') n = subshell();
    else if (!r.empty() && r != "in") fail_at_token();  // then, fi, done, esac, ... out of place
    else return simple_command();
    // Redirections after a compound command.
    for (;;) {
      skip_blanks();
      if (!try_redir(n.get())) break;
    }
    skip_blanks();
    if (!eof() && !is_meta(cur())) fail_at_token();
    if (cur() == '|' && at(1) != '|') fail("\"|\" unexpected (pipelines are not supported)");
    return n;
  }

  NodePtr new_node(Node::Kind k) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->line = line_;
    return n;
  }

  NodePtr if_clause() {
    auto n = new_node(Node::Kind::kIf);
    pos_ += 2;
    for (;;) {
      n->kids.push_back(compound_list({"then"}, false));
      expect_reserved("then");
      n->kids.push_back(compound_list({"elif", "else", "fi"}, false));
      std::string r = peek_reserved();
      if (r == "elif") {
        pos_ += 4;
        continue;
      }
      if (r == "else") {
        pos_ += 4;
        n->kids.push_back(compound_list({"fi"}, false));
      }
      expect_reserved("fi");
      return n;
    }
  }

  NodePtr while_clause(bool is_while) {
    auto n = new_node(is_while ? Node::Kind::kWhile : Node::Kind::kUntil);
    pos_ += 5;
    n->kids.push_back(compound_list({"do"}, false));
    expect_reserved("do");
    n->kids.push_back(compound_list({"done"}, false));
    expect_reserved("done");
    return n;
  }

  NodePtr for_clause() {
    auto n = new_node(Node::Kind::kFor);
    pos_ += 3;
    skip_blanks();
    size_t start = pos_;
    while (is_name_char(cur())) pos_++;
    n->var = s_.substr(start, pos_ - start);
    if (n->var.empty() || !is_name_start(n->var[0])) {
      if (eof()) fail_eof("");
      fail("Bad for loop variable");
    }
    skip_newlines();
    if (peek_reserved() == "in") {
      pos_ += 2;
      n->has_in = true;
      for (;;) {
        skip_blanks();
        if (eof()) fail_eof("do");
        if (cur() == ';' || cur() == '\n') {
          pos_++;
          if (s_[pos_ - 1] == '\n') line_++;
          break;
        }
        if (is_meta(cur())) fail_at_token();
        n->items.push_back(word());
      }
    } else if (cur() == ';') {
      pos_++;
    }
    expect_reserved("do");
    n->kids.push_back(compound_list({"done"}, false));
    expect_reserved("done");
    return n;
  }

  // case WORD in [(]PATTERN [| PATTERN]...) [LIST] ;; ... esac (the last ;; may be left out).
  NodePtr case_clause() {
    auto n = new_node(Node::Kind::kCase);
    pos_ += 4;
    skip_blanks();
    if (eof()) fail_eof("in");
    if (is_meta(cur())) fail_at_token();
    n->words.push_back(word());
    skip_newlines();
    if (peek_reserved() != "in") {
      if (eof()) fail_eof("in");
      fail_at_token();
    }
    pos_ += 2;
    for (;;) {
      skip_newlines();
      if (eof()) fail_eof("esac");
      if (peek_reserved() == "esac") {
        pos_ += 4;
        return n;
      }
      if (cur() == '(') pos_++;
      std::vector<Word> pats;
      for (;;) {
        skip_blanks();
        if (eof()) fail_eof(")");
        if (is_meta(cur())) fail_at_token();
        pats.push_back(word());
        skip_blanks();
        if (cur() == '|' && at(1) != '|') {
          pos_++;
          continue;
        }
        if (cur() == ')') {
          pos_++;
          break;
        }
        if (eof()) fail_eof(")");
        fail_at_token();
      }
      skip_newlines();
      NodePtr body;
      if ((cur() == ';' && at(1) == ';') || peek_reserved() == "esac") {
        body = new_node(Node::Kind::kList);
      } else {
        body = compound_list({"esac"}, false);
      }
      skip_newlines();
      if (cur() == ';' && at(1) == ';') {
        pos_ += 2;
      } else if (peek_reserved() != "esac") {
        if (eof()) fail_eof("esac");
        fail_at_token();
      }
      n->patterns.push_back(std::move(pats));
      n->kids.push_back(std::move(body));
    }
  }

  NodePtr brace_group() {
    auto n = new_node(Node::Kind::kBrace);
    pos_ += 1;
    n->kids.push_back(compound_list({"}"}, false));
    expect_reserved("}");
    return n;
  }

  NodePtr subshell() {
    auto n = new_node(Node::Kind::kSubshell);
    pos_ += 1;
    n->kids.push_back(compound_list({}, true));
    if (cur() != ')') fail_at_token();
    pos_++;
    return n;
  }

  static bool assignment_name(const Word &w, std::string *name, Word *value) {
    if (w.parts.empty() || w.parts[0].kind != WordPart::Kind::kLit || w.parts[0].quoted) return false;
    const std::string &t = w.parts[0].text;
    size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0 || !is_name_start(t[0])) return false;
    for (size_t i = 0; i < eq; i++)
      if (!is_name_char(t[i])) return false;
    *name = t.substr(0, eq);
    value->parts.assign(w.parts.begin(), w.parts.end());
    value->parts[0].text = t.substr(eq + 1);
    return true;
  }

  NodePtr simple_command() {
    auto n = new_node(Node::Kind::kSimple);
    for (;;) {
      skip_blanks();
      if (eof()) break;
      if (try_redir(n.get())) continue;
      char c = cur();
      if (c == '|' && at(1) != '|') fail("\"|\" unexpected (pipelines are not supported)");
      if (c == '(' ) fail_at_token();
      if (is_meta(c)) break;
      if (n->words.empty() && n->assigns.empty()) n->line = line_;
      Word w = word();
      std::string name;
      Word value;
      if (n->words.empty() && assignment_name(w, &name, &value))
        n->assigns.emplace_back(std::move(name), std::move(value));
      else
        n->words.push_back(std::move(w));
    }
    if (n->words.empty() && n->assigns.empty() && n->redirs.empty()) fail_at_token();
    return n;
  }

  // [N]op WORD at the position: parsed into @n, true; false (nothing read) when not one.
  bool try_redir(Node *n) {
    size_t p = pos_;
    int fd = -1;
    while (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) p++;
    if (p < s_.size() && p > pos_ && (s_[p] == '<' || s_[p] == '>')) {
      if (p - pos_ > 1) fail("bad file descriptor number " + s_.substr(pos_, p - pos_));
      fd = s_[pos_] - '0';
    } else {
      p = pos_;
    }
    if (p >= s_.size() || (s_[p] != '<' && s_[p] != '>')) return false;
    Redir r;
    char c0 = s_[p], c1 = p + 1 < s_.size() ? s_[p + 1] : '\0';
    size_t len = 1;
    if (c0 == '<' && c1 == '<') fail("here-documents are not supported");
    if (c0 == '>' && c1 == '>') r.op = Redir::Op::kAppend, len = 2;
    else if (c0 == '<' && c1 == '>') r.op = Redir::Op::kReadWrite, len = 2;
    else if (c0 == '<' && c1 == '&') r.op = Redir::Op::kDupIn, len = 2;
    else if (c0 == '>' && c1 == '&') r.op = Redir::Op::kDupOut, len = 2;
    else if (c0 == '>' && c1 == '|') r.op = Redir::Op::kOut, len = 2;
    else r.op = c0 == '<' ? Redir::Op::kIn : Redir::Op::kOut;
    bool input = r.op == Redir::Op::kIn || r.op == Redir::Op::kDupIn || r.op == Redir::Op::kReadWrite;
    r.fd = fd >= 0 ? fd : (input ? 0 : 1);
    pos_ = p + len;
    skip_blanks();
    if (eof()) fail_eof("");
    if (is_meta(cur())) fail_at_token();
    r.target = word();
    n->redirs.push_back(std::move(r));
    return true;
  }

  static void add_lit(Word *w, const std::string &text, bool quoted) {
    if (!w->parts.empty() && w->parts.back().kind == WordPart::Kind::kLit &&
        w->parts.back().quoted == quoted && !(quoted && text.empty())) {
      w->parts.back().text += text;
      return;
    }
    WordPart p;
    p.kind = WordPart::Kind::kLit;
    p.quoted = quoted;
    p.text = text;
    w->parts.push_back(std::move(p));
  }

  Word word() {
    DepthGuard g(this);
    Word w;
    while (!eof() && !is_meta(cur())) {
      char c = cur();
      if (c == '\\') {
        if (at(1) == '\n') {
          continuation();
        } else if (pos_ + 1 >= s_.size()) {
          add_lit(&w, "\\", false);
          pos_++;
        } else {
          add_lit(&w, std::string(1, at(1)), true);
          pos_ += 2;
        }
      } else if (c == '\'') {
        size_t end = s_.find('\'', pos_ + 1);
        if (end == std::string::npos) {
          pos_ = s_.size();
          throw SyntaxError{line_, "Syntax error: Unterminated quoted string", true};
        }
        std::string text = s_.substr(pos_ + 1, end - pos_ - 1);
        for (char t : text) line_ += t == '\n';
        add_lit(&w, text, true);
        pos_ = end + 1;
      } else if (c == '"') {
        double_quoted(&w);
      } else if (c == '$') {
        dollar(&w, false);
      } else if (c == '`') {
        backquote(&w, false);
      } else {
        add_lit(&w, std::string(1, c), false);
        pos_++;
      }
    }
    return w;
  }

  void double_quoted(Word *w) {
    int start_line = line_;
    pos_++;
    add_lit(w, "", true);  // "" is an empty field, not nothing
    for (;;) {
      if (eof()) throw SyntaxError{start_line, "Syntax error: Unterminated quoted string", true};
      char c = cur();
      if (c == '"') {
        pos_++;
        return;
      }
      if (c == '\\' && std::strchr("$`\"\\\n", at(1)) && at(1) != '\0') {
        if (at(1) == '\n') {
          continuation();
        } else {
          add_lit(w, std::string(1, at(1)), true);
          pos_ += 2;
        }
      } else if (c == '$') {
        dollar(w, true);
      } else if (c == '`') {
        backquote(w, true);
      } else {
        if (c == '\n') line_++;
        add_lit(w, std::string(1, c), true);
        pos_++;
      }
    }
  }

  void dollar(Word *w, bool quoted) {
    WordPart p;
    p.quoted = quoted;
    char c1 = at(1);
    if (c1 == '(' && at(2) == '(') {
      pos_ += 3;
      p.kind = WordPart::Kind::kArith;
      arith(&p);
    } else if (c1 == '(') {
      pos_ += 2;
      p.kind = WordPart::Kind::kCmdSub;
      p.sub = compound_list({}, true);
      if (cur() != ')') fail_at_token();
      pos_++;
    } else if (c1 == '{') {
      pos_ += 2;
      p.kind = WordPart::Kind::kParam;
      if (cur() == '#' && at(1) != '}') {  // ${#NAME}: the length
        p.op = "#";
        pos_++;
      }
      size_t start = pos_;
      if (is_name_start(cur())) {
        while (is_name_char(cur())) pos_++;
      } else if (std::isdigit(static_cast<unsigned char>(cur()))) {
        while (std::isdigit(static_cast<unsigned char>(cur()))) pos_++;
      } else if (cur() && std::strchr("?!$#@*-", cur())) {
        pos_++;
      }
      p.text = s_.substr(start, pos_ - start);
      if (p.op.empty() && !p.text.empty() && cur() != '}') {
        size_t n = cur() == ':' ? 2 : 1;
        std::string op = s_.substr(pos_, n);
        if (op == ":-" || op == "-" || op == ":=" || op == "=" || op == ":+" || op == "+" ||
            op == ":?" || op == "?") {
          p.op = op;
          pos_ += n;
          Word alt;
          brace_word(&alt, quoted);
          p.arith = std::move(alt.parts);
        }
      }
      if (cur() != '}' || p.text.empty()) {
        size_t end = s_.find('}', pos_);
        if (end == std::string::npos) fail_eof("}");
        fail("Bad substitution");
      }
      pos_++;
    } else if (is_name_start(c1)) {
      pos_++;
      size_t start = pos_;
      while (is_name_char(cur())) pos_++;
      p.kind = WordPart::Kind::kParam;
      p.text = s_.substr(start, pos_ - start);
    } else if (c1 && (std::strchr("?!$#@*-", c1) || std::isdigit(static_cast<unsigned char>(c1)))) {
      p.kind = WordPart::Kind::kParam;
      p.text = std::string(1, c1);
      pos_ += 2;
    } else {
      add_lit(w, "$", quoted);
      pos_++;
      return;
    }
    w->parts.push_back(std::move(p));
  }

  // The word of ${NAME:-word} and the like, up to the '}' that closes it: quoting and
  // expansions as in a word, blanks kept; inside "..." everything is quoted.
  void brace_word(Word *w, bool quoted) {
    DepthGuard g(this);
    add_lit(w, "", quoted);
    for (;;) {
      if (eof()) fail_eof("}");
      char c = cur();
      if (c == '}') return;
      if (c == '\\' && at(1) == '\n') {
        continuation();
      } else if (c == '\\' && pos_ + 1 < s_.size()) {
        add_lit(w, std::string(1, at(1)), true);
        pos_ += 2;
      } else if (c == '\'' && !quoted) {
        size_t end = s_.find('\'', pos_ + 1);
        if (end == std::string::npos) fail_eof("}");
        std::string text = s_.substr(pos_ + 1, end - pos_ - 1);
        for (char t : text) line_ += t == '\n';
        add_lit(w, text, true);
        pos_ = end + 1;
      } else if (c == '"') {
        double_quoted(w);
      } else if (c == '$') {
        dollar(w, quoted);
      } else if (c == '`') {
        backquote(w, quoted);
      } else {
        if (c == '\n') line_++;
        add_lit(w, std::string(1, c), quoted);
        pos_++;
      }
    }
  }

  // The inside of $(( )): expansions are parsed, everything else is the expression's text,
  // up to the "))" that closes it (parentheses inside must balance).
  void arith(WordPart *p) {
    DepthGuard g(this);
    Word expr;
    int parens = 0;
    for (;;) {
      if (eof()) fail_eof("))");
      char c = cur();
      if (c == ')') {
        if (parens == 0) {
          if (at(1) != ')') {
            if (pos_ + 1 >= s_.size()) fail_eof("))");
            fail("\")\" unexpected (expecting \"))\")");
          }
          pos_ += 2;
          break;
        }
        parens--;
      } else if (c == '(') {
        parens++;
      }
      if (c == '$') {
        dollar(&expr, true);
        continue;
      }
      if (c == '`') {
        backquote(&expr, true);
        continue;
      }
      if (c == '\\' && at(1) == '\n') {
        continuation();
        continue;
      }
      if (c == '\n') line_++;
      add_lit(&expr, std::string(1, c), true);
      pos_++;
    }
    p->arith = std::move(expr.parts);
  }

  // `...`: backslash quotes $ ` and \ inside; the text between is parsed as a command list.
  void backquote(Word *w, bool quoted) {
    int start_line = line_;
    pos_++;
    std::string inner;
    for (;;) {
      if (eof()) throw SyntaxError{start_line, "Syntax error: EOF in backquote substitution", true};
      char c = cur();
      if (c == '`') {
        pos_++;
        break;
      }
      if (c == '\\' && at(1) && std::strchr("$`\\", at(1))) {
        inner += at(1);
        pos_ += 2;
        continue;
      }
      if (c == '\n') line_++;
      inner += c;
      pos_++;
    }
    Parser sub(inner, start_line, false);
    sub.depth_ = depth_;
    WordPart p;
    p.kind = WordPart::Kind::kCmdSub;
    p.quoted = quoted;
    p.sub = sub.program();
    w->parts.push_back(std::move(p));
  }
};

}  // namespace

ParseResult sh_parse(const std::string &text, int first_line, bool streaming) {
  ParseResult r;
  Parser p(text, first_line, streaming);
  try {
    r.program = p.program();
    r.ok = true;
  } catch (const SyntaxError &e) {
    r.ok = false;
    r.incomplete = e.eof;
    r.error_line = e.line;
    r.error = e.msg;
  }
  return r;
}

}  // namespace umemcg::sh

// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_arith.cc: $(( )) arithmetic by precedence climbing (see sh_arith.h).
//
// && || and ?: evaluate both sides' syntax but apply only the side taken: an assignment or a
// division by zero in the side not taken has no effect, as in C and the shells.
#include "tools/sh/sh_arith.h"

#include <cctype>
#include <cstring>

namespace umemcg::sh {
namespace {

struct ArithError {
  std::string msg;
};

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
int64_t s(uint64_t v) { return static_cast<int64_t>(v); }

bool parse_constant(const std::string &t, int64_t *out) {
  if (t.empty()) return false;
  size_t i = 0;
  int base = 10;
  if (t.size() > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, i = 2;
  else if (t[0] == '0') base = 8;
  if (i >= t.size()) return false;
  uint64_t v = 0;
  for (; i < t.size(); i++) {
    int d;
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t[i])));
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    if (d >= base) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);  // wraps, as strtoimax's callers do
  }
  *out = s(v);
  return true;
}

class Arith {
 public:
  Arith(const std::string &e, const ArithVars &v) : e_(e), vars_(v) {}

  int64_t run() {
    int64_t v = assign(true);
    skip();
    if (p_ < e_.size()) throw ArithError{"syntax error: \"" + e_.substr(p_) + "\" unexpected"};
    return v;
  }

 private:
  const std::string &e_;
  const ArithVars &vars_;
  size_t p_ = 0;
  int depth_ = 0;

  void skip() {
    while (p_ < e_.size() && std::isspace(static_cast<unsigned char>(e_[p_]))) p_++;
  }
  bool eat(const char *op) {
    skip();
    size_t n = std::strlen(op);
    if (e_.compare(p_, n, op) != 0) return false;
    // "<" must not match "<<" or "<=", "&" not "&&", "=" not "==", ...
    char next = p_ + n < e_.size() ? e_[p_ + n] : '\0';
    if (n == 1 && (next == op[0] || next == '=') && std::strchr("<>&|=", op[0])) return false;
    if (n == 1 && next == '=' && std::strchr("*/%+-^!~", op[0])) return false;
    if (n == 2 && next == '=' && (!std::strcmp(op, "<<") || !std::strcmp(op, ">>"))) return false;
    p_ += n;
    return true;
  }

  struct Depth {
    Arith *a;
    explicit Depth(Arith *x) : a(x) {
      if (++a->depth_ > 200) throw ArithError{"expression nested too deeply"};
    }
    ~Depth() { a->depth_--; }
  };

  int64_t var_value(const std::string &name) {
    std::string v = vars_.get(name);
    size_t b = 0, e = v.size();
    while (b < e && std::isspace(static_cast<unsigned char>(v[b]))) b++;
    while (e > b && std::isspace(static_cast<unsigned char>(v[e - 1]))) e--;
    v = v.substr(b, e - b);
    if (v.empty()) return 0;
    bool neg = v[0] == '-';
    if (v[0] == '-' || v[0] == '+') v.erase(0, 1);
    int64_t r;
    if (!parse_constant(v, &r)) throw ArithError{"Illegal number: " + vars_.get(name)};
    return neg ? s(0 - u(r)) : r;
  }

  // Assignment (right-associative), then the ternary.
  int64_t assign(bool live) {
    Depth d(this);
    skip();
    size_t save = p_;
    if (p_ < e_.size() && (std::isalpha(static_cast<unsigned char>(e_[p_])) || e_[p_] == '_')) {
      size_t b = p_;
      while (p_ < e_.size() && (std::isalnum(static_cast<unsigned char>(e_[p_])) || e_[p_] == '_')) p_++;
      std::string name = e_.substr(b, p_ - b);
      skip();
      static const char *const kOps[] = {"<<=", ">>=", "*=", "/=", "%=", "+=", "-=", "&=",
                                         "^=", "|=", "="};
      for (const char *op : kOps) {
        size_t n = std::strlen(op);
        if (e_.compare(p_, n, op) != 0) continue;
        if (n == 1 && p_ + 1 < e_.size() && e_[p_ + 1] == '=') break;  // ==
        p_ += n;
        int64_t rhs = assign(live);
        if (!live) return rhs;
        int64_t v = n == 1 ? rhs : binop(std::string(op, n - 1), var_value(name), rhs);
        vars_.set(name, std::to_string(v));
        return v;
      }
    }
    p_ = save;
    return ternary(live);
  }

  int64_t ternary(bool live) {
    int64_t c = binary(0, live);
    if (!eat("?")) return c;
    int64_t a = assign(live && c != 0);
    if (!eat(":")) throw ArithError{"syntax error: expecting \":\""};
    int64_t b = assign(live && c == 0);
    return c ? a : b;
  }

  static int prec(const std::string &op) {
    static const struct { const char *op; int prec; } kTable[] = {
        {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4}, {"&", 5}, {"==", 6}, {"!=", 6},
        {"<", 7},  {"<=", 7}, {">", 7}, {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9},
        {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10}};
    for (const auto &t : kTable)
      if (op == t.op) return t.prec;
    return -1;
  }

  // The binary operator at the position (not consumed), or "".
  std::string peek_op() {
    skip();
    static const char *const kOps[] = {"||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "|",
                                       "^", "&", "<", ">", "+", "-", "*", "/", "%"};
    for (const char *op : kOps) {
      size_t save = p_;
      if (eat(op)) {
        p_ = save;
        return op;
      }
    }
    return "";
  }

  int64_t binop(const std::string &op, int64_t a, int64_t b) {
    if (op == "*") return s(u(a) * u(b));
    if (op == "/" || op == "%") {
      if (b == 0) throw ArithError{"division by zero"};
      if (b == -1) return op == "/" ? s(0 - u(a)) : 0;  // INT64_MIN / -1 wraps
      return op == "/" ? a / b : a % b;
    }
    if (op == "+") return s(u(a) + u(b));
    if (op == "-") return s(u(a) - u(b));
    if (op == "<<") return s(u(a) << (u(b) & 63));
    if (op == ">>") return a >> (u(b) & 63);
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    if (op == ">=") return a >= b;
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    if (op == "&") return a & b;
    if (op == "^") return a ^ b;
    if (op == "|") return a | b;
    if (op == "&&") return a && b;
    return a || b;  // "||"
  }

  int64_t binary(int min_prec, bool live) {
    Depth d(this);
    int64_t lhs = unary(live);
    for (;;) {
      std::string op = peek_op();
      int pr = op.empty() ? -1 : prec(op);
      if (pr < 0 || pr <= min_prec - 1 || pr < min_prec) return lhs;
      p_ += op.size();
      bool rhs_live = live && !(op == "&&" && lhs == 0) && !(op == "||" && lhs != 0);
      int64_t rhs = binary(pr + 1, rhs_live);
      if (op == "&&") lhs = lhs != 0 && rhs != 0;
      else if (op == "||") lhs = lhs != 0 || rhs != 0;
      else if (!rhs_live && (op == "/" || op == "%")) lhs = 0;
      else lhs = binop(op, lhs, rhs);
    }
  }

  int64_t unary(bool live) {
    Depth d(this);
    skip();
    if (p_ >= e_.size()) throw ArithError{"syntax error: missing operand"};
    char c = e_[p_];
    if (c == '+' || c == '-' || c == '!' || c == '~') {
      if (p_ + 1 < e_.size() && (e_[p_ + 1] == c) && (c == '+' || c == '-'))
        throw ArithError{"syntax error: ++ and -- are not supported"};
      p_++;
      int64_t v = unary(live);
      if (c == '-') return s(0 - u(v));
      if (c == '!') return !v;
      if (c == '~') return ~v;
      return v;
    }
    if (c == '(') {
      p_++;
      int64_t v = assign(live);
      if (!eat(")")) throw ArithError{"syntax error: missing \")\""};
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t b = p_;
      while (p_ < e_.size() && std::isalnum(static_cast<unsigned char>(e_[p_]))) p_++;
      int64_t v;
      if (!parse_constant(e_.substr(b, p_ - b), &v))
        throw ArithError{"Illegal number: " + e_.substr(b, p_ - b)};
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t b = p_;
      while (p_ < e_.size() && (std::isalnum(static_cast<unsigned char>(e_[p_])) || e_[p_] == '_')) p_++;
      return var_value(e_.substr(b, p_ - b));
    }
    throw ArithError{std::string("syntax error: \"") + e_.substr(p_) + "\" unexpected"};
  }
};

}  // namespace

bool sh_arith(const std::string &expr, const ArithVars &vars, int64_t *out, std::string *error) {
  try {
    Arith a(expr, vars);
    *out = a.run();
    return true;
  } catch (const ArithError &e) {
    *error = e.msg;
    return false;
  }
}

}  // namespace umemcg::sh

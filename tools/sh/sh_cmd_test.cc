// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmd_test.cc: test EXPR and [ EXPR ] (XCU test): unary -z -n -e -d -f, binary
// = != -eq -ne -lt -le -gt -ge, ! and the argument-count rules of POSIX (0 to 4 arguments),
// beyond those -a and -o (and binds tighter) and ( ). Status 0 true, 1 false, 2 an error (a
// bad integer, a missing ]), as test's own statuses are.
#include <cerrno>

#include "tools/sh/sh_cmds.h"

namespace umemcg::sh {
namespace {

struct TestError {
  std::string what;
};

class TestEval {
 public:
  TestEval(Shell &sh, std::vector<std::string> a) : sh_(sh), a_(std::move(a)) {}

  bool run() {
    switch (a_.size()) {
      case 0: return false;
      case 1: return !a_[0].empty();
      case 2:
        if (a_[0] == "!") return a_[1].empty();
        if (is_unary(a_[0])) return unary(a_[0], a_[1]);
        throw TestError{a_[0] + ": unexpected operator"};
      case 3:
        if (is_binary(a_[1])) return binary(a_[0], a_[1], a_[2]);
        if (a_[0] == "!") return !sub(1, 3);
        if (a_[0] == "(" && a_[2] == ")") return !a_[1].empty();
        break;
      case 4:
        if (a_[0] == "!") return !sub(1, 4);
        if (a_[0] == "(" && a_[3] == ")") return sub(1, 3);
        break;
      default:
        break;
    }
    pos_ = 0;
    bool v = or_expr();
    if (pos_ != a_.size()) throw TestError{a_[pos_] + ": unexpected operator"};
    return v;
  }

 private:
  Shell &sh_;
  std::vector<std::string> a_;
  size_t pos_ = 0;
  int depth_ = 0;

  bool sub(size_t b, size_t e) {
    TestEval t(sh_, std::vector<std::string>(a_.begin() + static_cast<long>(b), a_.begin() + static_cast<long>(e)));
    return t.run();
  }

  static bool is_unary(const std::string &op) {
    return op == "-z" || op == "-n" || op == "-e" || op == "-d" || op == "-f";
  }
  static bool is_binary(const std::string &op) {
    return op == "=" || op == "!=" || op == "-eq" || op == "-ne" || op == "-lt" || op == "-le" ||
           op == "-gt" || op == "-ge" || op == "-a" || op == "-o";
  }

  static long long integer(const std::string &s) {
    size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) b++;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) e--;
    long long v;
    if (!parse_int(s.substr(b, e - b), -(1ll << 53), 1ll << 53, &v))
      throw TestError{"Illegal number " + s};
    return v;
  }

  bool unary(const std::string &op, const std::string &x) {
    if (op == "-z") return x.empty();
    if (op == "-n") return !x.empty();
    bool is_dir = false;
    if (sh_.os().stat(sh_.resolve(x), &is_dir) < 0) return false;
    if (op == "-d") return is_dir;
    if (op == "-f") return !is_dir;
    return true;  // -e
  }

  bool binary(const std::string &l, const std::string &op, const std::string &r) {
    if (op == "=") return l == r;
    if (op == "!=") return l != r;
    if (op == "-a") return !l.empty() && !r.empty();
    if (op == "-o") return !l.empty() || !r.empty();
    long long a = integer(l), b = integer(r);
    if (op == "-eq") return a == b;
    if (op == "-ne") return a != b;
    if (op == "-lt") return a < b;
    if (op == "-le") return a <= b;
    if (op == "-gt") return a > b;
    return a >= b;  // -ge
  }

  // The general grammar for longer expressions.
  const std::string &need() {
    if (pos_ >= a_.size()) throw TestError{"argument expected"};
    return a_[pos_];
  }
  bool or_expr() {
    bool v = and_expr();
    while (pos_ < a_.size() && a_[pos_] == "-o") {
      pos_++;
      v = and_expr() || v;
    }
    return v;
  }
  bool and_expr() {
    bool v = primary();
    while (pos_ < a_.size() && a_[pos_] == "-a") {
      pos_++;
      v = primary() && v;
    }
    return v;
  }
  bool primary() {
    if (++depth_ > 200) throw TestError{"expression nested too deeply"};
    struct Out {
      int *d;
      ~Out() { --*d; }
    } out{&depth_};
    const std::string &t = need();
    if (t == "!") {
      pos_++;
      return !primary();
    }
    if (t == "(") {
      pos_++;
      bool v = or_expr();
      if (need() != ")") throw TestError{"closing paren expected"};
      pos_++;
      return v;
    }
    if (is_unary(t) && pos_ + 1 < a_.size()) {
      pos_ += 2;
      return unary(t, a_[pos_ - 1]);
    }
    if (pos_ + 2 < a_.size() + 0 && is_binary(a_[pos_ + 1]) && a_[pos_ + 1] != "-a" &&
        a_[pos_ + 1] != "-o") {
      pos_ += 3;
      return binary(a_[pos_ - 3], a_[pos_ - 2], a_[pos_ - 1]);
    }
    pos_++;
    return !t.empty();
  }
};

}  // namespace

int cmd_test(Shell &sh, const Cmd &c) {
  std::vector<std::string> args(c.argv.begin() + 1, c.argv.end());
  if (c.argv[0] == "[") {
    if (args.empty() || args.back() != "]") {
      sh.error(c, "missing ]", EINVAL);
      return 2;
    }
    args.pop_back();
  }
  try {
    TestEval t(sh, std::move(args));
    return t.run() ? 0 : 1;
  } catch (const TestError &e) {
    sh.error(c, e.what, EINVAL);
    return 2;
  }
}

}  // namespace umemcg::sh

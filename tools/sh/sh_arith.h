// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_arith.h: $(( )) arithmetic (XCU 2.6.4): signed 64-bit integers, C's operators
// and precedence (unary + - ! ~, * / %, + -, << >>, < <= > >=, == !=, &, ^, |, &&, ||, ?:,
// = and the op= assignments), decimal, 0octal and 0xhex constants, variables by name.
// Overflow wraps (two's complement), as in dash and bash; division by zero is an error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace umemcg::sh {

struct ArithVars {
  std::function<std::string(const std::string &)> get;  // "" when unset
  std::function<void(const std::string &, const std::string &)> set;
};

/**
 * sh_arith - evaluate an arithmetic expression
 * @expr: the expression, after parameter expansion and command substitution
 * @vars: variable access (a variable's value must itself be an integer constant, or empty: 0)
 * @out: (output) the value
 * @error: (output) on failure: what is wrong ("division by zero", "syntax error: ...")
 *
 * Returns true, or false with *@error. Nesting is limited to 200 levels of parentheses or
 * unary operators (an error beyond).
 */
bool sh_arith(const std::string &expr, const ArithVars &vars, int64_t *out, std::string *error);

}  // namespace umemcg::sh

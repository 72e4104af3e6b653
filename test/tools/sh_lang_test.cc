// SPDX-License-Identifier: GPL-2.0-only
// test/tools/sh_lang_test.cc: the cgroup shell's language (../shared/spec/cgroup-shell.md,
// Language): words and quoting, parameters, command substitution, arithmetic, test, lists and
// compound commands, status and -e, syntax errors, streaming, determinism.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <streambuf>

#include "test/tools/sh_test_util.h"
#include "tools/sh/sh_main.h"

using namespace umemcg::sh;
using namespace umemcg::sh::test;

TEST_CASE("sh: words, blanks, quoting and comments", "[tools][sh]") {
  CHECK(sh_out("echo a   b\t'c  d' \"e  f\"  # a comment\n") == "a b c  d e  f\n");
  CHECK(sh_out("echo 'a\"b' \"c'd\" \\$x \"\\$x \\\\ \\a\"\n") == "a\"b c'd $x $x \\ \\a\n");
  CHECK(sh_out("echo a#b '#c' # d\n") == "a#b #c\n");
  CHECK(sh_out("echo one; echo two;echo three\n") == "one\ntwo\nthree\n");
  CHECK(sh_out("echo a\\\nb\n") == "ab\n");                 // backslash-newline
  CHECK(sh_out("echo 'multi\nline'\n") == "multi\nline\n");
  CHECK(sh_out("printf '[%s]' '' \"\" x\n") == "[][][x]");  // quoted empty words are fields
}

TEST_CASE("sh: parameters and field splitting", "[tools][sh]") {
  CHECK(sh_out("x=hello; echo $x ${x}world \"$x\"\n") == "hello helloworld hello\n");
  CHECK(sh_out("echo \"[$unset]\"\n") == "[]\n");
  CHECK(sh_out("x='a  b'; printf '[%s]' $x; printf '[%s]' \"$x\"\n") == "[a][b][a  b]");
  CHECK(sh_out("e=; printf '[%s]' $e x \"$e\"\n") == "[x][]");
  CHECK(sh_out("x=1 y=$x; echo $y\n") == "1\n");  // assignments left to right
  CHECK(sh_out("false; echo $?; true; echo $?\n") == "1\n0\n");
  CHECK(sh_out("echo \"$?\" $#\n") == "0 0\n");
  // An assignment before a command lasts for that command only.
  CHECK(sh_out("x=1; x=2 true; echo $x\n") == "1\n");
  CHECK(sh_out("echo $$\n") == "1000\n");
  CHECK(sh_out("set -- a b; echo $# $1 $2 \"$*\"\n") == "2 a b a b\n");
}

TEST_CASE("sh: parameter operators", "[tools][sh]") {
  CHECK(sh_out("x=abc; e=; echo ${#x} ${#e} ${#u}\n") == "3 0 0\n");
  CHECK(sh_out("e=; echo ${u:-d1} ${e:-d2} ${e-d3}. ${u-d4}\n") == "d1 d2 . d4\n");
  CHECK(sh_out("x=v; e=; echo ${x:+alt} [${e:+alt}] ${e+set} [${u+set}]\n") == "alt [] set []\n");
  CHECK(sh_out("echo ${u:=new} $u; e=; echo ${e=kept}. ${e:=now} $e\n") == "new new\n. now now\n");
  CHECK(sh_out("printf '[%s]' ${u:-'a b'} ${u:-a b} \"${u:-a  b}\"\n") == "[a b][a][b][a  b]");
  CHECK(sh_out("x=1; echo ${u:-$x$(echo 2)$((1 + 2))}\n") == "123\n");
  CHECK(sh_out("set -- a; echo ${1:-no} ${2:-none}\n") == "a none\n");
  CHECK(sh_out("echo \"${u:-\"a  b\"}\" \"${u:-}\"x\n") == "a  b x\n");
  FakeOs os;
  ShResult r = run_script(os, "echo ${u:?is required}\necho $?\necho ${u?}\necho ${1=x}\n");
  CHECK(r.out == "1\n");
  CHECK(r.err == "umemcg sh: 1: u: is required\n"
                 "umemcg sh: 3: u: parameter not set\n"
                 "umemcg sh: 4: 1: cannot assign in this way\n");
}

TEST_CASE("sh: command substitution", "[tools][sh]") {
  CHECK(sh_out("x=$(echo a; echo; echo); echo \"[$x]\"\n") == "[a]\n");  // trailing newlines go
  CHECK(sh_out("x=$(printf 'a\\n\\nb\\n'); echo \"[$x]\"\n") == "[a\n\nb]\n");
  CHECK(sh_out("echo $(echo $(echo nested))\n") == "nested\n");
  CHECK(sh_out("echo `echo back`quote\n") == "backquote\n");
  CHECK(sh_out("x=$(false); echo $?\n") == "1\n");
  // A substitution is a subshell: its variables, cd and exit stay inside.
  CHECK(sh_out("y=0; z=$(y=1; cd ..; exit 3); echo $? $y; pwd\n") == "3 0\n/sys/fs/cgroup\n");
  // Expansion happens before splitting: the output is split when unquoted.
  CHECK(sh_out("printf '[%s]' $(echo 'a b')\n") == "[a][b]");
}

TEST_CASE("sh: arithmetic", "[tools][sh]") {
  CHECK(sh_out("echo $((1 + 2 * 3)) $(( (1+2)*3 )) $((10 - 4 - 3))\n") == "7 9 3\n");
  CHECK(sh_out("echo $((7 / 2)) $((7 % 3)) $((-7 / 2)) $((-7 % 2))\n") == "3 1 -3 -1\n");
  CHECK(sh_out("echo $((1 << 4)) $((256 >> 2)) $((6 & 3)) $((6 | 3)) $((6 ^ 3)) $((~0))\n") ==
        "16 64 2 7 5 -1\n");
  CHECK(sh_out("echo $((2 < 3)) $((3 <= 2)) $((2 == 2)) $((2 != 2)) $((1 && 0)) $((0 || 5)) $((!3))\n") ==
        "1 0 1 0 0 1 0\n");
  CHECK(sh_out("echo $((1 ? 10 : 20)) $((0 ? 10 : 20)) $((0x10 + 010))\n") == "10 20 24\n");
  CHECK(sh_out("x=4; echo $((x * x)) $(($x + 1)); echo $((y = 5)) $y; echo $((y += 2)) $y\n") ==
        "16 5\n5 5\n7 7\n");
  CHECK(sh_out("echo $((9223372036854775807 + 1))\n") == "-9223372036854775808\n");
  CHECK(sh_out("echo $((1 + 2 * 3 - 4 / 2 << 1))\n") == "10\n");
  CHECK(sh_out("echo $((0 && 1 / 0)) $((1 || 1 / 0))\n") == "0 1\n");  // the side not taken
  // Expansions run left to right, each seeing the effects of the ones before it.
  CHECK(sh_out("echo $((i = 1)) $((i += 1)) $i ${j:=$i}$((j * 10))\n") == "1 2 2 220\n");
  FakeOs os;
  ShResult r = run_script(os, "echo $((1 / 0))\necho $?\necho $((2 +))\necho after\n");
  CHECK(r.out == "1\nafter\n");
  CHECK(r.err == "umemcg sh: 1: arithmetic expression: division by zero: \"1 / 0\"\n"
                 "umemcg sh: 3: arithmetic expression: syntax error: missing operand: \"2 +\"\n");
  CHECK(r.status == 0);
}

TEST_CASE("sh: test and [ ]", "[tools][sh]") {
  auto t = [](const std::string &expr) {
    return sh_out("mkdir d; echo x > d/cgroup.procs; if " + expr + "; then echo y; else echo n; fi\n");
  };
  CHECK(t("[ 3 -eq 3 ]") == "y\n");
  CHECK(t("[ 3 -ne 3 ]") == "n\n");
  CHECK(t("[ 2 -lt 3 ]") == "y\n");
  CHECK(t("[ 3 -le 3 ]") == "y\n");
  CHECK(t("[ 3 -gt 4 ]") == "n\n");
  CHECK(t("[ -5 -ge -6 ]") == "y\n");
  CHECK(t("[ abc = abc ]") == "y\n");
  CHECK(t("[ abc != abc ]") == "n\n");
  CHECK(t("[ -z '' ]") == "y\n");
  CHECK(t("[ -n '' ]") == "n\n");
  CHECK(t("[ -e d/cgroup.procs ]") == "y\n");
  CHECK(t("[ -e d/nope ]") == "n\n");
  CHECK(t("test -e /sys/fs/cgroup/d") == "y\n");
  CHECK(t("[ ! -e d ]") == "n\n");
  CHECK(t("[ x ]") == "y\n");
  CHECK(t("[ ]") == "n\n");
  CHECK(t("[ 1 -eq 1 -a 2 -eq 3 ]") == "n\n");
  CHECK(t("[ 1 -eq 1 -o 2 -eq 3 ]") == "y\n");
  FakeOs os;
  ShResult r = run_script(os, "[ abc -eq 1 ]\necho $?\n[ 1 -eq 1\necho $?\n");
  CHECK(r.out == "2\n2\n");
  CHECK(r.err == "umemcg sh: 1: [: Illegal number abc: Invalid argument\n"
                 "umemcg sh: 3: [: missing ]: Invalid argument\n");
}

TEST_CASE("sh: lists, if, while, until, for, break", "[tools][sh]") {
  CHECK(sh_out("true && echo a; false && echo b; false || echo c; true || echo d\n") == "a\nc\n");
  CHECK(sh_out("false && echo x || echo y; echo $?\n") == "y\n0\n");
  CHECK(sh_out("false || false; echo $?\n") == "1\n");
  CHECK(sh_out("! true; echo $?; ! false; echo $?\n") == "1\n0\n");
  CHECK(sh_out("if false; then echo 1; elif true; then echo 2; else echo 3; fi\n") == "2\n");
  CHECK(sh_out("if false; then echo 1; fi; echo $?\n") == "0\n");
  CHECK(sh_out("if false\nthen\n  echo 1\nelse\n  echo 2\nfi\n") == "2\n");
  CHECK(sh_out("i=0; while [ $i -lt 3 ]; do echo $i; i=$((i + 1)); done\n") == "0\n1\n2\n");
  CHECK(sh_out("i=0; until [ $i -eq 2 ]; do i=$((i + 1)); done; echo $i\n") == "2\n");
  CHECK(sh_out("for v in a 'b c' d; do echo \"<$v>\"; done\n") == "<a>\n<b c>\n<d>\n");
  CHECK(sh_out("x='1 2 3'; for v in $x; do printf $v; done\n") == "123");
  CHECK(sh_out("for v in a b c; do if [ $v = b ]; then continue; fi; echo $v; done\n") == "a\nc\n");
  CHECK(sh_out("for i in 1 2; do for j in 1 2 3; do [ $j = 2 ] && break 2; echo $i$j; done; done\n") ==
        "11\n");
  CHECK(sh_out("while true; do echo once; break; done\n") == "once\n");
  CHECK(sh_out("{ echo a; echo b; }; (echo c; exit 4); echo $?\n") == "a\nb\nc\n4\n");
}

TEST_CASE("sh: case", "[tools][sh]") {
  const std::string c = "case $x in\n  a|b) echo ab ;;\n  (c*) echo c-star;;\n  '*') echo star ;;\n"
                        "  \"$y\") echo y ;;\n  *) echo other\nesac\n";
  CHECK(sh_out("x=a; " + c) == "ab\n");
  CHECK(sh_out("x=b; " + c) == "ab\n");
  CHECK(sh_out("x=cat; " + c) == "c-star\n");
  CHECK(sh_out("x='*'; " + c) == "star\n");
  CHECK(sh_out("x='[z]'; y='[z]'; " + c) == "y\n");  // a quoted expansion matches itself
  CHECK(sh_out("x=zz; " + c) == "other\n");
  CHECK(sh_out("case x in y) echo no;; esac; echo $?\n") == "0\n");
  CHECK(sh_out("case x in x) ;; esac; case x in (x) false; esac; echo $?\n") == "1\n");
  FakeOs os;
  ShResult r = run_script(os, "mkdir a\ncase x in\nx) echo\n");
  CHECK(r.err == "umemcg sh: 4: Syntax error: end of file unexpected (expecting \"esac\")\n");
  CHECK(os.log.empty());
  r = run_script(os, "echo a;;\n");
  CHECK(r.err == "umemcg sh: 1: Syntax error: \";;\" unexpected\n");
}

TEST_CASE("sh: status, exit and -e", "[tools][sh]") {
  FakeOs os;
  CHECK(run_script(os, "true\nfalse\n").status == 1);
  CHECK(run_script(os, "exit 3\necho no\n").status == 3);
  CHECK(run_script(os, "false\nexit\n").status == 1);
  ShResult r = run_script(os, "exit 300\n");
  CHECK(r.status == 44);
  r = run_script(os, "echo a\ncat nope\necho b\n");
  CHECK(r.out == "a\nb\n");
  CHECK(r.status == 0);
  r = run_script(os, "set -e\necho a\ncat nope\necho b\n");
  CHECK(r.out == "a\n");
  CHECK(r.status == 1);
  ShOptions e;
  e.errexit = true;
  r = run_script(os, "if false; then :; fi\nfalse && true\n! true\nfalse || true\necho still\nfalse\necho no\n", e);
  CHECK(r.out == "still\n");
  CHECK(r.status == 1);
  r = run_script(os, "set -e; set +e; false; echo on\n");
  CHECK(r.out == "on\n");
  r = run_script(os, "exit abc\necho no\n");
  CHECK(r.status == 2);
  CHECK(r.err == "umemcg sh: 1: exit: Illegal number abc: Invalid argument\n");
}

TEST_CASE("sh: syntax errors: line number, status 2, nothing run", "[tools][sh]") {
  struct Case {
    const char *script;
    const char *err;
  } cases[] = {
      {"mkdir a\nif true; then\n  echo b\n", "umemcg sh: 4: Syntax error: end of file unexpected (expecting \"fi\")\n"},
      {"mkdir a\necho b\nfi\n", "umemcg sh: 3: Syntax error: \"fi\" unexpected\n"},
      {"mkdir a\necho 'open\n", "umemcg sh: 2: Syntax error: Unterminated quoted string\n"},
      {"mkdir a\necho a | cat\n", "umemcg sh: 2: Syntax error: \"|\" unexpected (pipelines are not supported)\n"},
      {"mkdir a\n; echo\n", "umemcg sh: 2: Syntax error: \";\" unexpected\n"},
      {"mkdir a\nwhile true; do\ndone\n", "umemcg sh: 3: Syntax error: \"done\" unexpected\n"},
      {"mkdir a\necho ${x%y}\n", "umemcg sh: 2: Syntax error: Bad substitution\n"},
      {"mkdir a\necho ${x:-y\n", "umemcg sh: 3: Syntax error: end of file unexpected (expecting \"}\")\n"},
      {"mkdir a\necho $((1 + 2)\n", "umemcg sh: 2: Syntax error: \")\" unexpected (expecting \"))\")\n"},
      {"mkdir a\necho $((1 + 2", "umemcg sh: 2: Syntax error: end of file unexpected (expecting \"))\")\n"},
      {"mkdir a\nsleep 1 &\n", "umemcg sh: 2: Syntax error: \"&\" unexpected (background lists are not supported: use spawn)\n"},
      {"mkdir a\nfor 1 in x; do :; done\n", "umemcg sh: 2: Syntax error: Bad for loop variable\n"},
      {"mkdir a\necho a &&\n", "umemcg sh: 3: Syntax error: end of file unexpected\n"},
  };
  for (const Case &c : cases) {
    INFO(c.script);
    FakeOs os;
    ShResult r = run_script(os, c.script);
    CHECK(r.status == 2);
    CHECK(r.err == c.err);
    CHECK(r.out.empty());
    CHECK(os.log.empty());  // nothing ran, not even the mkdir before the error
  }
}

namespace {

// An input that hands out one line at a time and runs a check before each line after the
// first, so a test sees what the shell did with the lines it already had.
class LineFeeder : public std::streambuf {
 public:
  LineFeeder(std::vector<std::string> lines, std::function<void(size_t)> before)
      : lines_(std::move(lines)), before_(std::move(before)) {}

 protected:
  int_type underflow() override {
    if (next_ >= lines_.size()) return traits_type::eof();
    before_(next_);
    cur_ = lines_[next_++] + "\n";
    setg(cur_.data(), cur_.data(), cur_.data() + cur_.size());
    return traits_type::to_int_type(cur_[0]);
  }

 private:
  std::vector<std::string> lines_;
  std::function<void(size_t)> before_;
  size_t next_ = 0;
  std::string cur_;
};

}  // namespace

TEST_CASE("sh: standard input runs line by line as it arrives", "[tools][sh]") {
  FakeOs os;
  std::vector<bool> existed;
  LineFeeder feed({"mkdir a", "if true; then", "  mkdir b", "fi", "mkdir c"}, [&](size_t next) {
    (void)next;
    existed.push_back(os.exists("/sys/fs/cgroup/a"));
    existed.push_back(os.exists("/sys/fs/cgroup/b"));
  });
  std::istream in(&feed);
  std::ostringstream out, err;
  Shell sh(os, out, err, ShOptions{});
  CHECK(sh.run_stream(in) == 0);
  // Before line 2: a exists. Before lines 3 and 4 (inside the if): b does not. Before line 5: b.
  std::vector<bool> want = {false, false, true, false, true, false, true, false, true, true};
  CHECK(existed == want);
  CHECK(os.exists("/sys/fs/cgroup/c"));
  CHECK(err.str().empty());
}

TEST_CASE("sh: each streamed command's output is out before the next line is read", "[tools][sh]") {
  FakeOs os;
  std::ostringstream out, err;
  std::vector<std::string> seen;
  LineFeeder feed({"echo one", "cat nope", "printf 'two\\n'"}, [&](size_t) {
    seen.push_back(out.str() + "|" + err.str());
  });
  std::istream in(&feed);
  Shell sh(os, out, err, ShOptions{});
  CHECK(sh.run_stream(in) == 0);
  std::vector<std::string> want = {"|", "one\n|",
                                   "one\n|umemcg sh: 2: cat: nope: No such file or directory\n"};
  CHECK(seen == want);
  CHECK(out.str() == "one\ntwo\n");
}

TEST_CASE("sh: sh_main runs a SCRIPT file whole, or standard input", "[tools][sh]") {
  char path[] = "/tmp/umemcg-sh-test-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string script = "echo $0 $1\nmkdir a\nfi\n";
  REQUIRE(write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size()));
  close(fd);
  ShOptions opts;
  opts.script = path;
  opts.args = {"arg1"};
  FakeOs os;
  std::istringstream none;
  std::ostringstream out, err;
  CHECK(sh_main(opts, os, none, out, err) == 2);  // a syntax error: nothing ran
  CHECK(out.str().empty());
  CHECK(err.str() == "umemcg sh: 3: Syntax error: \"fi\" unexpected\n");
  CHECK(os.log.empty());
  const std::string good = "echo $0 $1\nexit 7\n";
  FILE *f = std::fopen(path, "w");
  REQUIRE(f);
  std::fputs(good.c_str(), f);
  std::fclose(f);
  std::ostringstream out2, err2;
  CHECK(sh_main(opts, os, none, out2, err2) == 7);
  CHECK(out2.str() == std::string(path) + " arg1\n");
  unlink(path);
  std::ostringstream out3, err3;
  CHECK(sh_main(opts, os, none, out3, err3) == 127);
  CHECK(err3.str() == "umemcg sh: cannot open " + std::string(path) + ": No such file or directory\n");
  opts.script = "-";
  std::istringstream in("echo from stdin\n");
  std::ostringstream out4, err4;
  CHECK(sh_main(opts, os, in, out4, err4) == 0);
  CHECK(out4.str() == "from stdin\n");
}

TEST_CASE("sh: streamed syntax error stops after what already ran", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_stream(os, "mkdir a\necho a b\nfi\nmkdir c\n");
  CHECK(r.status == 2);
  CHECK(r.out == "a b\n");
  CHECK(r.err == "umemcg sh: 3: Syntax error: \"fi\" unexpected\n");
  CHECK(os.exists("/sys/fs/cgroup/a"));
  CHECK_FALSE(os.exists("/sys/fs/cgroup/c"));
  // A command continued over lines runs when complete; exit stops reading.
  FakeOs os2;
  r = run_stream(os2, "echo a \\\n  b\nfor i in 1 2\ndo echo $i\ndone\nexit 5\necho no\n");
  CHECK(r.out == "a b\n1\n2\n");
  CHECK(r.status == 5);
  // An unterminated compound at the end of input is a syntax error.
  FakeOs os3;
  r = run_stream(os3, "echo x\nwhile true; do\n");
  CHECK(r.status == 2);
  CHECK(r.out == "x\n");
  CHECK(r.err == "umemcg sh: 3: Syntax error: end of file unexpected (expecting \"done\")\n");
}

TEST_CASE("sh: same script, same bytes", "[tools][sh]") {
  const std::string script =
      "mkdir -p a/b\necho 10M > a/memory.max\nspawn a anon 4M --hold\np=$!\nsleep 0.25\n"
      "kill -9 $p\nwait $p\necho status $?\nls a\ncat nope\nfor i in 1 2 3; do printf '%d,' $((i * i)); done\n";
  FakeOs os1, os2;
  ShResult r1 = run_script(os1, script), r2 = run_script(os2, script);
  CHECK(r1.out == r2.out);
  CHECK(r1.err == r2.err);
  CHECK(r1.status == r2.status);
  CHECK(os1.log == os2.log);
  CHECK(r1.out == "status 137\nb\ncgroup.controllers\ncgroup.events\ncgroup.procs\n"
                  "cgroup.subtree_control\nmemory.current\nmemory.max\nmemory.peak\n1,4,9,");
}

TEST_CASE("sh: unknown commands and error lines carry the line", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os, "\n\nfrob x\necho $?\n\ncat nope\n");
  CHECK(r.out == "127\n");
  CHECK(r.err == "umemcg sh: 3: frob: command not found: No such file or directory\n"
                 "umemcg sh: 6: cat: nope: No such file or directory\n");
}

TEST_CASE("sh: pathname expansion against the tree", "[tools][sh]") {
  CHECK(sh_out("mkdir x; cd x; echo memory.*\n") == "memory.current memory.max memory.peak\n");
  CHECK(sh_out("echo nomatch*\n") == "nomatch*\n");
  CHECK(sh_out("mkdir x; echo 'x/memory.*' x/cgroup.c*\n") == "x/memory.* x/cgroup.controllers\n");
}

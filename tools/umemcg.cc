// SPDX-License-Identifier: GPL-2.0-only
// tools/umemcg.cc: the umemcg command line.
#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    std::printf("usage: umemcg <command> [args]\n\ncommands:\n  help    this text\n");
    return argc < 2 ? 2 : 0;
  }
  std::fprintf(stderr, "umemcg: unknown command '%s'\n", argv[1]);
  return 2;
}

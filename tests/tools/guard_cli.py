"""The command line every guard script in tests/tools shares: `SCRIPT SOURCE_DIR` prints each problem `check` finds
and exits 1 when there is one; `SCRIPT --self-test` runs `self_test` (which plants problems and expects them)."""
import pathlib
import sys


def main(check, self_test, usage):
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(usage)
        return 2
    problems = check(pathlib.Path(sys.argv[1]))
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0

"""What the CLI test scripts share: expectations counted instead of stopping at the first, and running kiln."""
import subprocess


class Checks:
    """Counts failed expectations; finish() prints the summary and returns the exit code."""

    def __init__(self, name):
        self.name = name
        self.failures = 0

    def expect(self, condition, what):
        if not condition:
            self.failures += 1
            print(f"FAIL: {what}")

    def finish(self):
        print(f"{self.name}: ok" if not self.failures else f"{self.name}: {self.failures} failures")
        return 1 if self.failures else 0


def run_kiln(kiln, *args, timeout=300, env=None):
    """(exit code, stdout, stderr) of one kiln command."""
    result = subprocess.run([kiln, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return result.returncode, result.stdout, result.stderr

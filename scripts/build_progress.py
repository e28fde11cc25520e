"""Filter a verbose pip build of llama-cpp-python down to its progress, for set-up's stderr.

CMake drives either Make ("[ 42%] Building …") or Ninja ("[123/456] Building …"); both become
"  llama.cpp build: 42%", printed when the percentage changes. Errors and the final line pass."""
import re
import sys

MAKE = re.compile(r"^\s*\[\s*(\d+)%\]")
NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]")
KEEP = re.compile(r"Successfully|ERROR|error:|Error ")


def main() -> None:
    last = None
    for line in sys.stdin:
        make, ninja = MAKE.match(line), NINJA.match(line)
        pct = int(make.group(1)) if make else (100 * int(ninja.group(1)) // max(1, int(ninja.group(2)))
                                               if ninja else None)
        if pct is not None and pct != last:
            print(f"  llama.cpp build: {pct}%", flush=True)
            last = pct
        elif pct is None and KEEP.search(line):
            print("  " + line.strip()[:300], flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Splits a valgrind massif profile of the fault soak by owner: tinker-local (the in-process server,
which keeps its arrival log and results), the client (the SDK), the test, and the rest.

The soak's process RSS mixes the client with the server it runs in-process; this tells them apart.
Usage (doc/reliability.md#the-fault-soak):
  TINKER_SOAK_STEPS=400 valgrind --tool=massif --depth=60 --threshold=0.01 --massif-out-file=soak.massif \\
      build/release/test/tinker_fault_tests --gtest_filter='*Training*'
  test/faults/heap_by_owner.py soak.massif          # one line per detailed snapshot, MB per owner
"""
import re
import sys

NODE = re.compile(r"( *)n(\d+): (\d+) (.*)")
CLIENT = re.compile(r"tinker::(client|http|detail|sync|api|async|TrainingClient|ServiceClient|SamplingClient|Future)")


def owner(stack):
    text = " ".join(stack)
    if "tinker::local::" in text or "sentencepiece" in text:
        return "server"
    if "below massif" in stack[-1]:
        return "unattributed"
    if CLIENT.search(text):
        return "client"
    if "tinker::test" in text or "testing::" in text:
        return "test"
    return "other"


def snapshots(lines):
    """Yields (snapshot number, heap bytes, tree lines) for each detailed snapshot."""
    i = 0
    while i < len(lines):
        if not lines[i].startswith("snapshot="):
            i += 1
            continue
        number = int(lines[i].split("=")[1])
        heap = int(lines[i + 3].split("=")[1])
        detailed = lines[i + 6] == "heap_tree=detailed"
        j = i + 7
        tree = []
        while detailed and j < len(lines) and not lines[j].startswith("#"):
            tree.append(lines[j])
            j += 1
        if detailed:
            yield number, heap, tree
        i = j


def totals_by_owner(tree):
    totals, stack = {}, []
    for line in tree:
        match = NODE.match(line)
        depth, children, size, where = len(match.group(1)), int(match.group(2)), int(match.group(3)), match.group(4)
        stack = stack[:depth] + [where]
        if children == 0 and depth > 0:  # a leaf: one whole call stack
            totals[owner(stack)] = totals.get(owner(stack), 0) + size
    return totals


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as profile:
        lines = profile.read().split("\n")
    owners = ("client", "server", "test", "other", "unattributed")
    print("snapshot  heap MB  " + "  ".join(f"{name:>12}" for name in owners))
    for number, heap, tree in snapshots(lines):
        totals = totals_by_owner(tree)
        print(f"{number:8}  {heap / 1e6:7.2f}  " + "  ".join(f"{totals.get(name, 0) / 1e6:12.3f}" for name in owners))


if __name__ == "__main__":
    main()

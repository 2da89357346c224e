#!/usr/bin/env python3
"""Checks that the Hopper kit's pattern documents and their GPU test agree (no GPU needed).

Usage: tests/kit/check_patterns.py <repository root>

Every fenced ```cuda block of every kits/hopper/patterns/*.md starts with a line "// <fragment name>" and must
appear verbatim in tests/gpu/kit/patterns_test.cu between the lines "// pattern-begin: <document>#<fragment name>"
and "// pattern-end", where it is run and checked on a GPU. Also: every marker pair is used by a document,
fragment names are unique, markers are well formed (no nesting, no unterminated pair), C/C++ code blocks use the
cuda fence, and the test names every fragment as a string "<document>#<fragment name>" (it reports a PASS/FAIL line
per fragment). Prints what is wrong and exits 1, else prints a one-line summary and exits 0.
"""
import os
import re
import sys

DOCS = os.path.join("kits", "hopper", "patterns")
TEST = os.path.join("tests", "gpu", "kit", "patterns_test.cu")
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
CODE_LANGS = {"c", "cc", "cpp", "c++", "cxx", "cu", "cuh", "h", "hpp"}  # must be written as ```cuda


def doc_fragments(path, root, errors):
    """[(name, text, line)] of the ```cuda blocks of a markdown file; text is the block's lines joined by \\n."""
    rel = os.path.relpath(path, root)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        i += 1
        body = []
        while i < len(lines) and not re.match(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[i]):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            errors.append(f"{rel}:{start + 1}: code fence is never closed")
            break
        i += 1  # the closing fence
        if lang in CODE_LANGS:
            errors.append(f"{rel}:{start + 1}: code block fenced as '{lang}': write C++/CUDA fragments as ```cuda")
            continue
        if lang != "cuda":
            continue
        if indent:
            errors.append(f"{rel}:{start + 1}: ```cuda block is indented; fragments start at column 0")
            continue
        first = re.fullmatch(r"// (" + NAME + r")", body[0]) if body else None
        if not first:
            errors.append(f"{rel}:{start + 1}: ```cuda block does not start with a line '// <fragment name>'")
            continue
        out.append((first.group(1), "\n".join(body), start + 1))
    return out


def test_fragments(path, root, errors):
    """({(document, name): (text, line)}, whole file text) from the marker pairs of the test file."""
    rel = os.path.relpath(path, root)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.split("\n")
    begin_re = re.compile(r"^// pattern-begin: (\S+)#(\S+)$")
    frags = {}
    open_at = None
    key = None
    body = []
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("// pattern-begin"):
            m = begin_re.match(line)
            if not m:
                errors.append(f"{rel}:{n}: malformed marker "
                              "(want '// pattern-begin: <document>.md#<name>' at column 0)")
                continue
            if open_at is not None:
                errors.append(f"{rel}:{n}: pattern-begin inside the pair opened at line {open_at}")
                continue
            doc, name = m.group(1), m.group(2)
            if not doc.endswith(".md") or not re.fullmatch(NAME, name):
                errors.append(f"{rel}:{n}: marker '{doc}#{name}' is not '<document>.md#<identifier>'")
            open_at, key, body = n, (doc, name), []
        elif stripped.startswith("// pattern-end"):
            if line != "// pattern-end":
                errors.append(f"{rel}:{n}: malformed marker (want '// pattern-end' at column 0)")
            if open_at is None:
                errors.append(f"{rel}:{n}: pattern-end without a pattern-begin")
                continue
            if key in frags:
                errors.append(f"{rel}:{open_at}: fragment {key[0]}#{key[1]} marked twice (also line {frags[key][1]})")
            else:
                frags[key] = ("\n".join(body), open_at)
            open_at = None
        elif open_at is not None:
            body.append(line)
    if open_at is not None:
        errors.append(f"{rel}:{open_at}: pattern-begin is never closed by a pattern-end")
    return frags, source


def first_difference(a, b):
    """1-based line of the first difference between two texts, with both versions of that line."""
    la, lb = a.split("\n"), b.split("\n")
    for k in range(max(len(la), len(lb))):
        x = la[k] if k < len(la) else "<end of fragment>"
        y = lb[k] if k < len(lb) else "<end of fragment>"
        if x != y:
            return k + 1, x, y
    return None


def main(argv):
    if len(argv) != 2:
        print("usage: check_patterns.py <repository root>", file=sys.stderr)
        return 2
    root = argv[1]
    docs_dir = os.path.join(root, DOCS)
    test_path = os.path.join(root, TEST)
    errors = []
    if not os.path.isdir(docs_dir):
        print(f"check_patterns: no folder {docs_dir}")
        return 1
    if not os.path.isfile(test_path):
        print(f"check_patterns: no file {test_path}")
        return 1
    docs = sorted(f for f in os.listdir(docs_dir) if f.endswith(".md"))
    if not docs:
        errors.append(f"{DOCS}: no documents")

    # Fragments of the documents, names unique across all of them.
    documented = {}  # (doc, name) -> (text, line)
    seen_names = {}  # name -> "doc:line"
    for doc in docs:
        frags = doc_fragments(os.path.join(docs_dir, doc), root, errors)
        if not frags:
            errors.append(f"{DOCS}/{doc}: no ```cuda fragments")
        for name, text, line in frags:
            where = f"{DOCS}/{doc}:{line}"
            if name in seen_names:
                errors.append(f"{where}: fragment name '{name}' is already used at {seen_names[name]}")
                continue
            seen_names[name] = where
            documented[(doc, name)] = (text, line)

    marked, source = test_fragments(test_path, root, errors)

    # Each document fragment: marked in the test with the same text.
    for (doc, name), (text, line) in sorted(documented.items()):
        if (doc, name) not in marked:
            errors.append(f"{DOCS}/{doc}:{line}: fragment '{name}' has no "
                          f"'// pattern-begin: {doc}#{name}' pair in {TEST}")
            continue
        test_text, test_line = marked[(doc, name)]
        if test_text != text:
            k, in_doc, in_test = first_difference(text, test_text)
            errors.append(
                f"{DOCS}/{doc}:{line}: fragment '{name}' differs from {TEST}:{test_line} at its line {k}:\n"
                f"    document: {in_doc!r}\n    test:     {in_test!r}")
        if f'"{doc}#{name}"' not in source:
            errors.append(f"{TEST}: never names \"{doc}#{name}\" (the test must record a PASS/FAIL line for it)")

    # Each marker pair: a fragment of a document, and its first line names it.
    for (doc, name), (text, line) in sorted(marked.items(), key=lambda kv: kv[1][1]):
        if (doc, name) in documented:
            continue
        if doc not in docs:
            errors.append(f"{TEST}:{line}: marker {doc}#{name}: no document {DOCS}/{doc}")
        else:
            errors.append(f"{TEST}:{line}: marker {doc}#{name}: {DOCS}/{doc} has no ```cuda block '// {name}'")
        if text.split("\n")[0] != f"// {name}":
            errors.append(f"{TEST}:{line}: fragment {doc}#{name} does not start with the line '// {name}'")

    if errors:
        for e in errors:
            print(e)
        print(f"check_patterns: {len(errors)} problem(s)")
        return 1
    print(f"check_patterns: {len(documented)} fragments in {len(docs)} documents, each verbatim in {TEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

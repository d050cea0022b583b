// Package integrity is the pre-scan that runs before any verifier starts: it decides, from the
// paths a candidate patch touches alone, whether the pair must be rejected as an
// integrity_violation (protected paths, evaluator-owned paths, .git components, modules that
// would shadow the test tooling). Under a repository's `symlinks: in-tree` it also judges the
// symlinks a patch creates (inside the tree, and resolving to nothing protected, restored or
// evaluator-owned) and the paths a restored link of the base tree resolves to (links.go). It
// also holds the path Matcher that the suite loader uses to compile protected_paths and
// restored_paths.
//
// integrity never reads a workspace, never runs git, a container or candidate code, and never
// imports gitsafe, sandbox or the grader: it is a pure function of patch metadata and patterns.
//
// # Pattern rules (a contract: the authoring-matrix test pins every one)
//
// Patterns are doublestar patterns over slash-separated paths relative to the repository root.
// A path is a file path as it appears in a patch, such as "src/app/grading/oracle.txt"; its
// components are the parts between slashes and its ancestors are "src", "src/app" and
// "src/app/grading".
//
//  1. A pattern matches a path when it matches the path itself OR any of its ancestors, so a
//     pattern that matches a directory covers the directory's whole subtree (a directory
//     pattern prunes its subtree; the bare "grading" pattern can never leak grading/x).
//  2. A pattern that contains no slash, after the optional leading "/" and trailing "/" are set
//     aside, is matched against the name of every component at any depth, like .gitignore:
//     "grading" matches grading, grading/x, docs/grading and src/grading/x; "*.ext" matches
//     a.ext, x/y/a.ext and everything below a directory named d.ext.
//  3. A trailing "/" restricts rule 2 to directories: "grading/" matches what is below a
//     component named grading at any depth, but not a file that is itself named grading.
//  4. A pattern that contains a slash anywhere but at its end is anchored at the root and
//     matched with doublestar against the path and each ancestor. So "grading/*" matches
//     grading/a and everything below grading/a, but not grading itself; "grading/**" matches
//     grading itself and everything below it (doublestar's "**" matches zero or more
//     components); "**/*.ext" matches a.ext at the root and at any depth, like "*.ext".
//  5. A leading "/" anchors a slash-free pattern at the root: "/grading" matches grading and
//     grading/x but not docs/grading. "/dir/" is anchored and directory-only.
//  6. Whether a pattern "contains a slash" is decided on its text: "{a,b/c}" is anchored.
//  7. With fold (used for protected_paths), the pattern and the path are both compared in a
//     canonical form: default-ignorable code points (U+200B..U+200F, U+FEFF, variation
//     selectors, ...) are removed, every rune is case-folded in the decomposed (NFD) text
//     (ToLower of ToUpper, so "K", "k" and KELVIN SIGN are one letter, and so are "I", "i" and
//     "ı"), and the result is composed again (NFC), so "café" in NFC and in NFD are one name
//     and "caf?" matches both. "?" still matches one code point, so a letter that has no
//     composed form with its accent counts as two. Character-class ranges are folded endpoint
//     by endpoint, so keep classes to one letter case or to ASCII non-letters. A path
//     component that is only ignorable code points disappears.
//  8. Match reports true for a path that is not a clean relative slash path (empty, absolute,
//     a "." or ".." or empty component, a backslash or NUL), so a caller that forgot to
//     validate a path fails closed. Scan reports such paths as "unsafe_path".
//
// Compile refuses, naming the field and index: an empty pattern, whitespace at either end, a
// NUL, a backslash (no escapes: match a literal "*" with "[*]"), "//" at the start (a UNC or
// network path), a drive letter such as "C:", empty, "." or ".." components, and anything
// doublestar itself rejects (an unclosed "[" or "{").
package integrity

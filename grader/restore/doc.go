// Package restore resets the evaluator's paths in a workspace after the candidate patch has
// been applied and before the evaluator's test patch and hidden assets are written
// (the README: "Restored paths").
//
// Order of work, in one plain directory:
//  1. Walk the workspace without following anything. A symlink or special file anywhere is an
//     "unsafe_workspace_entry" violation and nothing is changed (a patch cannot create one, so
//     its presence means something upstream failed; fail closed). A top-level .git directory
//     is Tender's own and is skipped.
//  2. Remove every regular file under restored_paths that the base commit does not have (the
//     patch added it), then directories emptied by that which the base does not have.
//  3. Rewrite every base file under restored_paths whose content or mode differs, and recreate
//     those the patch deleted. The mode is the base's when the Base also implements
//     ModeBase, otherwise 0644. A path the candidate turned into a file-over-directory
//     conflict outside restored_paths is a "restore_conflict" violation.
//  4. Reset only the test-runner section of the mixed-purpose configs at the repository root:
//     all [tool.pytest*] tables of pyproject.toml, [tool:pytest] of setup.cfg and [pytest] of
//     tox.ini. The section text is spliced from the base file into the candidate's file, and
//     the result is parsed again and must equal the base's section plus the candidate's other
//     values; otherwise (odd forms, parse errors, duplicates, a deleted file whose base had the
//     section) it is a "config_section_unverifiable" violation.
//
// TOML is read with go-toml/v2: its unstable parser locates the table headers (so a "[" inside
// a multi-line string is never mistaken for one) and Unmarshal, which refuses duplicate keys
// and tables, checks the result. A test-runner table is one whose key is tool.<name> with name
// starting "pytest" (tool.pytest, tool.pytest.ini_options, tool.pytest_env, ...); only
// "[tool.pytest...]" headers are spliced, so the same data written as a dotted key, an inline
// table or inside [tool] survives the splice and fails the check unless it is exactly the
// base's.
//
// INI is read with gopkg.in/ini.v1 configured to be faithful to Python's readers: no
// inline-comment stripping (a "#" in a value is part of it, as in pytest's iniconfig), no
// backslash continuation, Python-style indented multi-line values, surrounding quotes kept,
// case kept, duplicate sections and keys kept so they can be refused, key order kept. A
// section header for the splice is a line starting with "[" in column 0; an indented line
// that looks like the test-runner header is refused as an odd form, because readers disagree
// on it.
//
// restore never follows a symlink in the workspace (every operation goes through an os.Root,
// after an Lstat of each component), never writes outside the workspace, never runs git or
// candidate code, and never reads the evaluator's hidden assets.
package restore

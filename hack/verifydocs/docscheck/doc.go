// Package docscheck checks that the project's Markdown stays in step with
// the repository and the CLI: every relative link names a file that exists
// (and, with a #fragment, one of its headings), and every `kubectl ocm`
// command in a shell code block names a verb the command tree has, with
// only flags that verb takes; and the development guide's Layout names
// the tree's directories as they are.
package docscheck

package docscheck

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// DevelopmentGuide is the page whose Layout and "Kept as they are"
// sections Layout checks.
const DevelopmentGuide = "docs/development.md"

// LayoutTrees are the directories whose every subdirectory the Layout
// names.
var LayoutTrees = []string{"config", "controllers", "hack", "pkg", "plugins", "test"}

// dirToken matches a directory as the Layout writes it: slash-separated
// names ending in a slash.
var dirToken = regexp.MustCompile(`^[A-Za-z0-9_.<>-]+(/[A-Za-z0-9_.<>-]+)*/$`)

// Layout checks the Layout and "Kept as they are" sections of the
// development guide (file, a slash path in fsys, the repository) against
// the tree: every directory the Layout's code block names exists, every
// subdirectory of LayoutTrees is named there, and every path named in a
// code span of "Kept as they are" exists.
//
// In the code block, a directory is a word ending in a slash. One at the
// start of a line names a path from the repository's root; one indented by
// two spaces at the start of a line names a child of the last entry that
// starts a line; any other one with more than one name is a path from the
// root, and one with a single name (image/) is a child of the entry whose
// description it is in. A placeholder (plugins/<verb>/) is not a
// directory: the children named after it are its parent's.
func Layout(fsys fs.FS, file string) ([]Problem, error) {
	src, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, err
	}
	doc := parse(src)
	var problems []Problem
	block, ok := sectionBlock(doc, "Layout")
	if !ok {
		return []Problem{{File: file, Line: 1, Msg: "no code block under a Layout heading"}}, nil
	}
	named := map[string]bool{}
	for _, d := range layoutDirs(block) {
		named[d.path] = true
		if info, err := fs.Stat(fsys, d.path); err != nil || !info.IsDir() {
			problems = append(problems, Problem{File: file, Line: d.line,
				Msg: fmt.Sprintf("the Layout names %s/, which does not exist: remove it or name the directory that replaced it", d.path)})
		}
	}
	var missing []string
	for _, tree := range LayoutTrees {
		entries, err := fs.ReadDir(fsys, tree)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
				continue
			}
			if p := tree + "/" + e.Name(); !named[p] {
				missing = append(missing, p+"/")
			}
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		problems = append(problems, Problem{File: file, Line: block.lines[0].n - 1,
			Msg: fmt.Sprintf("the Layout does not name %s: add it, with what it holds", p)})
	}
	for _, l := range section(doc, "Kept as they are") {
		for _, p := range keptPaths(l.text) {
			if !exists(fsys, p) {
				problems = append(problems, Problem{File: file, Line: l.n,
					Msg: fmt.Sprintf("%q is kept as it is, but %s does not exist: remove the entry or name the path it moved to", p, p)})
			}
		}
	}
	return problems, nil
}

// section returns the prose lines under the level-2 heading named heading
// of doc, up to the next heading of level 1 or 2.
func section(doc document, heading string) []line {
	var out []line
	in := false
	for _, l := range doc.prose {
		if m := atxHeading.FindStringSubmatch(l.text); m != nil && len(m[1]) <= 2 {
			in = m[2] == heading
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return out
}

// sectionBlock returns the first code block under the level-2 heading
// named heading of doc.
func sectionBlock(doc document, heading string) (codeBlock, bool) {
	start, end := -1, -1
	for _, l := range doc.prose {
		m := atxHeading.FindStringSubmatch(l.text)
		if m == nil || len(m[1]) > 2 {
			continue
		}
		if start >= 0 {
			end = l.n
			break
		}
		if m[2] == heading {
			start = l.n
		}
	}
	for _, b := range doc.blocks {
		if start >= 0 && len(b.lines) > 0 && b.lines[0].n > start && (end < 0 || b.lines[0].n < end) {
			return b, true
		}
	}
	return codeBlock{}, false
}

// layoutDir is a directory the Layout names, at a line.
type layoutDir struct {
	path string
	line int
}

// layoutDirs returns the directories block names (see Layout), as slash
// paths without the trailing slash.
func layoutDirs(block codeBlock) []layoutDir {
	var out []layoutDir
	var top, entry string // the last entry starting a line, the current entry
	for _, l := range block.lines {
		words := strings.Fields(l.text)
		for i, w := range words {
			w = strings.TrimLeft(w, "(")
			w = strings.TrimRight(w, ",;:.)")
			if !dirToken.MatchString(w) {
				continue
			}
			p := strings.TrimSuffix(w, "/")
			switch {
			case i == 0 && !strings.HasPrefix(l.text, " "):
				top, entry = p, p
			case i == 0 && strings.HasPrefix(l.text, "  ") && !strings.HasPrefix(l.text, "   "):
				p = path.Join(base(top), p)
				entry = p
			case strings.Contains(p, "/"):
			default:
				p = path.Join(base(entry), p)
			}
			if !strings.Contains(p, "<") {
				out = append(out, layoutDir{p, l.n})
			}
		}
	}
	return out
}

// base returns p without its trailing placeholder elements (<verb>).
func base(p string) string {
	for strings.HasSuffix(p, ">") {
		p = path.Dir(p)
	}
	return p
}

// keptCode matches an inline code span's text.
var keptCode = regexp.MustCompile("`([^`]+)`")

// keptPaths returns the repository paths named in the code spans of text:
// spans with a slash and no space, a {a,b} alternation expanded.
func keptPaths(text string) []string {
	var out []string
	for _, m := range keptCode.FindAllStringSubmatch(text, -1) {
		s := m[1]
		if !strings.Contains(s, "/") || strings.ContainsAny(s, " :") || strings.HasPrefix(s, "-") {
			continue
		}
		out = append(out, expand(s)...)
	}
	return out
}

// expand returns s with its first {a,b,...} alternation expanded.
func expand(s string) []string {
	i, j := strings.Index(s, "{"), strings.Index(s, "}")
	if i < 0 || j < i {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, s[:i]+alt+s[j+1:])
	}
	return out
}

// goIdent matches a Go identifier after a package path (benchkit.Poll).
var goIdent = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`)

// exists reports whether p, or p without a trailing .Identifier, is a
// file or directory of fsys.
func exists(fsys fs.FS, p string) bool {
	p = strings.TrimSuffix(p, "/")
	if _, err := fs.Stat(fsys, p); err == nil {
		return true
	}
	if q := goIdent.ReplaceAllString(p, ""); q != p {
		_, err := fs.Stat(fsys, q)
		return err == nil
	}
	return false
}

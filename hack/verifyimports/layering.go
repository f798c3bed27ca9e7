package main

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Trees are the top-level directories whose imports the rules cover.
var Trees = []string{"config", "controllers", "plugins"}

// wiring are the packages that put the verbs together into the command
// tree: they may import every verb.
var wiring = map[string]bool{"plugins/root": true, "plugins/kubectl-ocm": true}

// An Exception allows one import the rules refuse.
type Exception struct {
	// From is the importing package's directory, or a parent of it.
	From string
	// To is the imported package's directory, or a parent of it.
	To string
	// Reason says why the import stays.
	Reason string
}

// Exceptions are the imports allowed against the rules, each with its
// reason. One that allows nothing is reported, so that the list shrinks
// with the code.
var Exceptions = []Exception{
	// The MCP server's writes run the verbs' own Validate and Run, so a
	// write has one path: the same checks, messages and dry run as the CLI.
	{From: "plugins/mcp", To: "plugins/work", Reason: "apply_work runs work create --overwrite's Validate and Run"},
	{From: "plugins/mcp", To: "plugins/work/rollout", Reason: "the rollout tools run the rollout verbs' Validate and Run"},
	{From: "plugins/mcp", To: "plugins/work/diff", Reason: "work_diff runs the diff verb, which writes and cleans up probe works as the caller"},
}

// A Violation is one import a rule refuses.
type Violation struct {
	// File is the importing file's slash path in the repository.
	File string
	// Line is the import's line.
	Line int
	// Import is the imported package's directory in the repository.
	Import string
	// Why is the rule and its fix.
	Why string
}

// String formats v as file:line: message.
func (v Violation) String() string {
	return fmt.Sprintf("%s:%d: imports %s: %s", v.File, v.Line, v.Import, v.Why)
}

// topOf returns the first two elements of a slash path under one of the
// trees ("controllers/work" for "controllers/work/agent/apply"), or the
// path itself when it has one element.
func topOf(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 2 {
		return p
	}
	return parts[0] + "/" + parts[1]
}

// Rule returns why the package in directory from may not import the
// package in directory to (both slash paths in the repository), or "".
//   - A controller domain (controllers/X) imports no other domain nor
//     controllers/cmd; controllers/cmd wires them all.
//   - Nothing under controllers/ imports plugins/.
//   - Nothing under config/ imports controllers/ or plugins/.
//   - A verb (plugins/X) imports no other verb, only plugins/cli;
//     plugins/root and plugins/kubectl-ocm wire the verbs; plugins/cli
//     imports no verb.
func Rule(from, to string) string {
	fromTree, _, _ := strings.Cut(from, "/")
	toTree, _, _ := strings.Cut(to, "/")
	fromTop, toTop := topOf(from), topOf(to)
	switch {
	case fromTree == "controllers" && toTree == "plugins":
		return "the controllers share code with the CLI through pkg/"
	case fromTree == "config" && (toTree == "controllers" || toTree == "plugins"):
		return "config/ renders the manifests both sides install, below controllers/ and plugins/: move what it needs into config/ or pkg/"
	case fromTree == "controllers" && toTree == "controllers" && fromTop != "controllers/cmd" && fromTop != toTop:
		if toTop == "controllers/cmd" {
			return "controllers/cmd wires the domains, not the other way round"
		}
		return fmt.Sprintf("the controller domains %s and %s share code through pkg/ and meet only through API objects", fromTop, toTop)
	case fromTree == "plugins" && toTree == "plugins" && !wiring[fromTop] && fromTop != toTop && toTop != "plugins/cli":
		return fmt.Sprintf("the verbs %s and %s share code through plugins/cli or pkg/; plugins/root wires the verbs (and can hand one verb's function to another)", fromTop, toTop)
	}
	return ""
}

// within reports whether directory p is dir or under it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// allowed returns the index in exceptions of the most specific one that
// allows from to import to, or -1.
func allowed(exceptions []Exception, from, to string) int {
	best := -1
	for i, e := range exceptions {
		if within(from, e.From) && within(to, e.To) && (best < 0 || len(e.To) > len(exceptions[best].To)) {
			best = i
		}
	}
	return best
}

// Check parses the imports of every Go file (tests included, whatever
// their build tags) under the trees of fsys, a module named module, and
// returns every import a rule refuses and that no exception allows, then
// every exception that allowed nothing. It skips a tree fsys lacks,
// testdata directories and nested modules.
func Check(fsys fs.FS, module string, exceptions []Exception) ([]Violation, []Exception, error) {
	var out []Violation
	used := make([]bool, len(exceptions))
	fset := token.NewFileSet()
	for _, tree := range Trees {
		if _, err := fs.Stat(fsys, tree); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := fs.WalkDir(fsys, tree, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != tree && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
					return fs.SkipDir
				}
				if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); err == nil {
					return fs.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			src, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly)
			if err != nil {
				return err
			}
			from := path.Dir(p)
			for _, spec := range f.Imports {
				imp, err := strconv.Unquote(spec.Path.Value)
				if err != nil || !strings.HasPrefix(imp, module+"/") {
					continue
				}
				to := strings.TrimPrefix(imp, module+"/")
				why := Rule(from, to)
				if why == "" {
					continue
				}
				if i := allowed(exceptions, from, to); i >= 0 {
					used[i] = true
					continue
				}
				out = append(out, Violation{File: p, Line: fset.Position(spec.Pos()).Line, Import: to, Why: why})
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	var unused []Exception
	for i, e := range exceptions {
		if !used[i] {
			unused = append(unused, e)
		}
	}
	return out, unused, nil
}

package docscheck

import (
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// Files returns the Markdown files the check covers, as slash paths in
// fsys (the repository): README.md, every .md file under docs/, and the
// READMEs of test/bench and test/fuzz.
func Files(fsys fs.FS) ([]string, error) {
	files := []string{"README.md", "test/bench/README.md", "test/fuzz/README.md"}
	err := fs.WalkDir(fsys, "docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path.Base(p), ".md") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files[3:])
	return files, err
}

// Check runs Links and Commands on files, with root the kubectl-ocm
// command tree, Layout on the development guide when files hold it, and
// HelpLinks on root and the other command trees given, returning every
// problem found.
func Check(fsys fs.FS, files []string, root *cobra.Command, others ...*cobra.Command) ([]Problem, error) {
	problems, err := Links(fsys, files)
	if err != nil {
		return nil, err
	}
	more, err := Commands(fsys, files, root)
	if err != nil {
		return nil, err
	}
	problems = append(problems, more...)
	if slices.Contains(files, DevelopmentGuide) {
		more, err := Layout(fsys, DevelopmentGuide)
		if err != nil {
			return nil, err
		}
		problems = append(problems, more...)
	}
	return append(problems, HelpLinks(fsys, append([]*cobra.Command{root}, others...)...)...), nil
}

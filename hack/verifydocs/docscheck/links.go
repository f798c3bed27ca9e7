package docscheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// scheme matches a link target that names a scheme (https:, mailto:, ...):
// such a link leaves the repository and is not checked.
var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// Links checks every relative link of the Markdown files named (slash
// paths in fsys): the file or directory it names exists in fsys, and its
// #fragment, if any, is a heading of the Markdown file it names (or of the
// file itself, for a bare #fragment).
func Links(fsys fs.FS, files []string) ([]Problem, error) {
	load := documents(fsys)
	var problems []Problem
	for _, file := range files {
		doc, err := load(file)
		if err != nil {
			return nil, err
		}
		for _, l := range doc.prose {
			for _, target := range links(l.text) {
				if msg := checkLink(fsys, file, target, load); msg != "" {
					problems = append(problems, Problem{File: file, Line: l.n, Msg: msg})
				}
			}
		}
	}
	return problems, nil
}

// checkLink returns what is wrong with target, a link in file, or "".
func checkLink(fsys fs.FS, file, target string, load func(string) (document, error)) string {
	if target == "" || scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	ref, frag, _ := strings.Cut(target, "#")
	if q := strings.IndexByte(ref, '?'); q >= 0 {
		ref = ref[:q]
	}
	if p, err := url.PathUnescape(ref); err == nil {
		ref = p
	}
	name := file
	if ref != "" {
		if strings.HasPrefix(ref, "/") {
			name = path.Clean(strings.TrimPrefix(ref, "/"))
		} else {
			name = path.Join(path.Dir(file), ref)
		}
		if name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Sprintf("link %q leaves the repository", target)
		}
		info, err := fs.Stat(fsys, name)
		if err != nil {
			return fmt.Sprintf("link %q: %s does not exist", target, name)
		}
		if info.IsDir() {
			if frag != "" {
				return fmt.Sprintf("link %q: %s is a directory, which has no #%s", target, name, frag)
			}
			return ""
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(name, ".md") {
		return ""
	}
	doc, err := load(name)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	if !doc.anchors()[frag] {
		return fmt.Sprintf("link %q: %s has no heading #%s", target, name, frag)
	}
	return ""
}

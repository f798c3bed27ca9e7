package docscheck

import (
	"bufio"
	"bytes"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A Problem is one thing wrong in a Markdown file, at a line of it.
type Problem struct {
	// File is the file's path as given to the check.
	File string
	// Line is the 1-based line the problem is on.
	Line int
	// Msg says what is wrong.
	Msg string
}

// String formats p as file:line: message.
func (p Problem) String() string {
	return p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Msg
}

// line is one line of a Markdown file outside fenced code blocks, or a
// code block: the lines between its fences and the fence's info string.
type line struct {
	n    int
	text string
}

// codeBlock is a fenced code block: its info string (the first word after
// the opening fence, lowercased) and its lines.
type codeBlock struct {
	lang  string
	lines []line
}

// document is a Markdown file split into prose lines and code blocks.
type document struct {
	prose  []line
	blocks []codeBlock
}

// parse splits src into its prose lines and fenced code blocks (``` or ~~~
// fences, possibly indented, as in list items).
func parse(src []byte) document {
	var doc document
	var cur *codeBlock
	var fence string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		trimmed := strings.TrimLeft(text, " \t")
		if cur != nil {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				doc.blocks = append(doc.blocks, *cur)
				cur = nil
				continue
			}
			cur.lines = append(cur.lines, line{n, text})
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence = f
			info := strings.Fields(strings.TrimPrefix(trimmed, f))
			lang := ""
			if len(info) > 0 {
				lang = strings.ToLower(info[0])
			}
			cur = &codeBlock{lang: lang}
			continue
		}
		doc.prose = append(doc.prose, line{n, text})
	}
	if cur != nil {
		doc.blocks = append(doc.blocks, *cur)
	}
	return doc
}

// fenceOf returns the opening fence (three or more backticks or tildes) s
// starts with, or "".
func fenceOf(s string) string {
	for _, c := range []string{"`", "~"} {
		i := 0
		for i < len(s) && s[i] == c[0] {
			i++
		}
		if i >= 3 {
			return s[:i]
		}
	}
	return ""
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	linkInline = regexp.MustCompile(`\[([^\]]*)\]\(([^)]*)\)`)
	imageOrRef = regexp.MustCompile(`!?\[([^\]]*)\]`)
)

// anchors returns the fragment identifiers of doc's headings as GitHub
// makes them (see Slug; a repeated heading gets -1, -2, ...), and those of
// explicit <a name=...> or <a id=...> anchors.
func (doc document) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range doc.prose {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		slug := Slug(m[2])
		if k := seen[slug]; k > 0 {
			out[slug+"-"+strconv.Itoa(k)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug returns the fragment GitHub gives a heading's text: its rendered
// text (links as their text, no code or emphasis markers), lowercased,
// every character but letters, digits, spaces, '-' and '_' dropped, and
// each space a '-'.
func Slug(heading string) string {
	text := linkInline.ReplaceAllString(heading, "$1")
	text = imageOrRef.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeSpan matches an inline code span, whose text is no link.
var codeSpan = regexp.MustCompile("`+[^`]*`+")

// linkTarget matches the start of an inline link or image's target: what
// follows the closing bracket of its text.
var linkTarget = regexp.MustCompile(`\]\(`)

// refDefinition matches a link reference definition: [label]: target.
var refDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s+(\S+)`)

// links returns the targets of the inline links and images, and of the
// link reference definitions, on prose line text, outside code spans.
func links(text string) []string {
	if m := refDefinition.FindStringSubmatch(text); m != nil {
		return []string{strings.Trim(m[1], "<>")}
	}
	text = codeSpan.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	var out []string
	for _, loc := range linkTarget.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		// The target ends at the parenthesis that closes the link,
		// counting nested ones, or at a space before a title.
		depth, end := 0, -1
		for i, r := range rest {
			if r == '(' {
				depth++
			} else if r == ')' {
				if depth == 0 {
					end = i
					break
				}
				depth--
			}
		}
		if end < 0 {
			continue
		}
		target := strings.TrimSpace(rest[:end])
		if i := strings.IndexAny(target, " \t"); i >= 0 {
			target = target[:i]
		}
		out = append(out, strings.Trim(target, "<>"))
	}
	return out
}

// documents returns a reader of the Markdown files of fsys that parses each
// file once.
func documents(fsys fs.FS) func(name string) (document, error) {
	docs := map[string]document{}
	return func(name string) (document, error) {
		if d, ok := docs[name]; ok {
			return d, nil
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return document{}, err
		}
		d := parse(src)
		docs[name] = d
		return d, nil
	}
}

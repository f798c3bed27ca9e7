package docscheck

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// shellLangs are the info strings of the code blocks whose commands are
// checked; in a console block only the lines after a "$ " prompt are.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// Commands checks every `kubectl ocm` (or `kubectl-ocm`) command in the
// shell code blocks of the Markdown files named (slash paths in fsys)
// against root, the command tree the kubectl-ocm binary builds: each names
// a command of the tree, hidden ones (clusteradm's spellings) included, and
// only flags that command has, its own or inherited.
func Commands(fsys fs.FS, files []string, root *cobra.Command) ([]Problem, error) {
	var problems []Problem
	for _, file := range files {
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		for _, b := range parse(src).blocks {
			if !shellLangs[b.lang] {
				continue
			}
			for _, c := range shellCommands(b) {
				for _, words := range c.commands {
					if msg := checkCommand(root, words); msg != "" {
						problems = append(problems, Problem{File: file, Line: c.n, Msg: msg})
					}
				}
			}
		}
	}
	return problems, nil
}

// shellLine is one logical line of a shell code block (continuation lines
// joined), starting at line n: the simple commands on it, each as its
// words.
type shellLine struct {
	n        int
	commands [][]string
}

// shellCommands splits code block b into logical lines: a line ending in a
// backslash, a pipe or && continues on the next. In a console block only
// lines after a "$ " prompt are commands; elsewhere a "$ " prompt is
// dropped.
func shellCommands(b codeBlock) []shellLine {
	var out []shellLine
	var text string
	start := 0
	for _, l := range b.lines {
		s := strings.TrimSpace(l.text)
		if text == "" {
			if p, ok := strings.CutPrefix(s, "$ "); ok {
				s = p
			} else if b.lang == "console" {
				continue
			}
			start = l.n
		}
		text += s
		switch {
		case strings.HasSuffix(s, "\\"):
			text = strings.TrimSuffix(text, "\\") + " "
			continue
		case strings.HasSuffix(s, "|"), strings.HasSuffix(s, "&&"), strings.HasSuffix(s, "||"):
			text += " "
			continue
		}
		out = append(out, shellLine{n: start, commands: splitShell(text)})
		text = ""
	}
	if text != "" {
		out = append(out, shellLine{n: start, commands: splitShell(text)})
	}
	return out
}

// splitShell splits a line of shell into simple commands, each as its
// words: quotes group and are removed, a word starting with # starts a
// comment, and |, ||, &&, ;, &, $( and ) and backquotes separate commands.
// A redirection and its file are dropped, and <placeholder text> is one
// word.
func splitShell(s string) [][]string {
	var cmds [][]string
	var words []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, dropRedirections(words))
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '\\' && i+1 < len(s):
			word.WriteByte(s[i+1])
			inWord = true
			i++
		case c == ' ' || c == '\t':
			endWord()
		case c == '#' && !inWord:
			endCmd()
			return cmds
		case c == '<' && !inWord && i+1 < len(s) && isLetter(s[i+1]) && strings.IndexByte(s[i:], '>') > 0:
			j := strings.IndexByte(s[i:], '>')
			word.WriteString(s[i : i+j+1])
			inWord = true
			i += j
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			endCmd()
			i++
		case c == '|' || c == ';' || c == '&' || c == ')' || c == '`':
			endCmd()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// dropRedirections returns words without redirections (>, >>, 2>, <) and
// their files.
func dropRedirections(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := strings.TrimLeft(words[i], "0123456789")
		if strings.HasPrefix(w, ">") || (strings.HasPrefix(w, "<") && !strings.HasSuffix(w, ">")) {
			if strings.Trim(w, "<>&") == "" {
				i++ // the file is the next word
			}
			continue
		}
		out = append(out, words[i])
	}
	return out
}

// pluginArgs returns the words after `kubectl ocm` or `kubectl-ocm` in
// words, a simple command (after any VAR=value assignments), and whether
// it runs the plugin.
func pluginArgs(words []string) ([]string, bool) {
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	switch {
	case len(words) >= 2 && words[0] == "kubectl" && words[1] == "ocm":
		return words[2:], true
	case len(words) >= 1 && words[0] == "kubectl-ocm":
		return words[1:], true
	}
	return nil, false
}

// placeholder reports whether word stands for something the reader fills
// in (<verb>, ...), after which a command's words are not checked.
func placeholder(word string) bool {
	return strings.HasPrefix(word, "<") || strings.Contains(word, "...")
}

// checkCommand returns what is wrong with words, a simple command, when it
// runs the plugin: an unknown command or flag; or "".
func checkCommand(root *cobra.Command, words []string) string {
	args, ok := pluginArgs(words)
	if !ok {
		return ""
	}
	cmd := root
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			return ""
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			skip, msg := checkFlag(cmd, args, i)
			if msg != "" {
				return msg
			}
			i += skip
			continue
		}
		if !cmd.HasSubCommands() {
			continue // an argument of the command
		}
		if placeholder(w) {
			return ""
		}
		sub := subcommand(cmd, w)
		if sub == nil {
			return fmt.Sprintf("unknown command %q for %q", w, commandPath(cmd))
		}
		cmd = sub
	}
	return ""
}

// commandPath is cmd's command path as a user types it.
func commandPath(cmd *cobra.Command) string {
	names := []string{}
	for c := cmd; c.HasParent(); c = c.Parent() {
		names = append([]string{c.Name()}, names...)
	}
	return strings.Join(append([]string{"kubectl ocm"}, names...), " ")
}

// subcommand returns cmd's subcommand called, or aliased, name; the help
// command cobra adds when it runs counts too.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	if name == "help" {
		return &cobra.Command{Use: "help"}
	}
	return nil
}

// checkFlag checks the flag args[i] of cmd, returning how many of the
// words after it are its value (0 or 1) and, when cmd has no such flag,
// the error.
func checkFlag(cmd *cobra.Command, args []string, i int) (int, string) {
	w := args[i]
	if name, ok := strings.CutPrefix(w, "--"); ok {
		name, _, hasValue := strings.Cut(name, "=")
		if name == "help" {
			return 0, ""
		}
		f := lookupFlag(cmd, name, "")
		if f == nil {
			return 0, fmt.Sprintf("unknown flag --%s for %q", name, commandPath(cmd))
		}
		if hasValue || f.NoOptDefVal != "" {
			return 0, ""
		}
		return 1, ""
	}
	// Shorthands: -n NS, -nNS, -R, or several booleans at once (-Rf).
	short := w[1:]
	for j := 0; j < len(short); j++ {
		s := short[j : j+1]
		if s == "h" {
			continue
		}
		f := lookupFlag(cmd, "", s)
		if f == nil {
			return 0, fmt.Sprintf("unknown shorthand flag -%s in %s for %q", s, w, commandPath(cmd))
		}
		if f.NoOptDefVal != "" {
			continue
		}
		if j+1 < len(short) {
			return 0, "" // the rest of the word is its value
		}
		return 1, ""
	}
	return 0, ""
}

// lookupFlag returns cmd's flag name (or, with name empty, shorthand
// short): its own, or a persistent flag of a command above it.
func lookupFlag(cmd *cobra.Command, name, short string) *pflag.Flag {
	find := func(fs *pflag.FlagSet) *pflag.Flag {
		if name != "" {
			return fs.Lookup(name)
		}
		return fs.ShorthandLookup(short)
	}
	if f := find(cmd.Flags()); f != nil {
		return f
	}
	for c := cmd; c != nil; c = c.Parent() {
		if f := find(c.PersistentFlags()); f != nil {
			return f
		}
	}
	return nil
}

// helpLink matches a docs page named in help text, with its fragment.
var helpLink = regexp.MustCompile(`docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md(#[A-Za-z0-9_-]+)?`)

// HelpLinks checks every docs page the help of the command trees names
// (in a command's Long or Example, or a flag's usage) as a link from the
// repository's root: the page exists in fsys and has the heading its
// fragment names. A problem's File is the command's path.
func HelpLinks(fsys fs.FS, roots ...*cobra.Command) []Problem {
	load := documents(fsys)
	var problems []Problem
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		texts := []string{c.Long, c.Example}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, text := range texts {
			for _, target := range helpLink.FindAllString(text, -1) {
				if msg := checkLink(fsys, "README.md", target, load); msg != "" {
					problems = append(problems, Problem{File: c.CommandPath(), Msg: "help: " + msg})
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return problems
}

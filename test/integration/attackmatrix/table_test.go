package attackmatrix

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// securityDoc is the threat model, whose section matrixHeading holds the
// table of expected outcomes.
var securityDoc = filepath.Join("..", "..", "..", "docs", "security.md")

// matrixHeading opens the section of the table.
const matrixHeading = "## Attack matrix"

// The outcomes a cell of the table may expect.
const (
	allow = "allow"
	deny  = "deny"
)

// table is the attack matrix as the threat model writes it: one row per
// write, one column per actor, each cell allow or deny.
type table struct {
	// actors are the column headings after the first.
	actors []string
	rows   []tableRow
}

// tableRow is one write and what each actor's attempt at it must give, in
// the order of table.actors.
type tableRow struct {
	write string
	cells []string
	// line is the row's line in the document, for messages.
	line int
}

// readTable reads the first table of the section matrixHeading of path.
func readTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var (
		tb        table
		inSection bool
		inTable   bool
		line      int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case !inSection:
			inSection = text == matrixHeading
			continue
		case strings.HasPrefix(text, "## "):
			return finish(&tb, path)
		case !strings.HasPrefix(text, "|"):
			if inTable {
				return finish(&tb, path)
			}
			continue
		}
		cells := splitRow(text)
		switch {
		case !inTable:
			inTable = true
			if len(cells) < 2 {
				return nil, fmt.Errorf("%s:%d: the table's heading names no actor", path, line)
			}
			tb.actors = cells[1:]
		case strings.Trim(strings.Join(cells, ""), "-: ") == "":
			// The delimiter row.
		default:
			if len(cells) != len(tb.actors)+1 {
				return nil, fmt.Errorf("%s:%d: row %q has %d cells, want one per actor (%d) and the write", path, line, cells[0], len(cells), len(tb.actors)+1)
			}
			for i, c := range cells[1:] {
				if c != allow && c != deny {
					return nil, fmt.Errorf("%s:%d: row %q, actor %q: cell %q is neither %s nor %s", path, line, cells[0], tb.actors[i], c, allow, deny)
				}
			}
			tb.rows = append(tb.rows, tableRow{write: cells[0], cells: cells[1:], line: line})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !inSection {
		return nil, fmt.Errorf("%s has no section %q", path, matrixHeading)
	}
	return finish(&tb, path)
}

// finish checks that tb holds a table.
func finish(tb *table, path string) (*table, error) {
	if len(tb.rows) == 0 {
		return nil, fmt.Errorf("section %q of %s holds no table with a row", matrixHeading, path)
	}
	return tb, nil
}

// splitRow returns the cells of a markdown table row, trimmed, with
// backquotes removed.
func splitRow(text string) []string {
	text = strings.TrimSuffix(strings.TrimPrefix(text, "|"), "|")
	parts := strings.Split(text, "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "`", ""))
	}
	return parts
}

// TestMatrixTableMatchesTheTest checks, without a hub, that the table of
// docs/security.md and this package name the same writes and actors, once
// each: a row or actor of the table without an implementation, or an
// implementation the table does not list, fails.
func TestMatrixTableMatchesTheTest(t *testing.T) {
	tb, err := readTable(securityDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCoverage(tb); err != nil {
		t.Fatal(err)
	}
}

// checkCoverage reports every difference between the writes and actors of
// tb and those this package implements (rows, actorNames).
func checkCoverage(tb *table) error {
	var problems []string
	seen := map[string]bool{}
	for _, a := range tb.actors {
		if seen[a] {
			problems = append(problems, fmt.Sprintf("actor %q is a column twice", a))
		}
		seen[a] = true
		if _, ok := actorSlugs[a]; !ok {
			problems = append(problems, fmt.Sprintf("actor %q of the table has no credential in the test (actorSlugs)", a))
		}
	}
	for _, a := range slices.Sorted(maps.Keys(actorSlugs)) {
		if !seen[a] {
			problems = append(problems, fmt.Sprintf("the test's actor %q is no column of the table", a))
		}
	}
	clear(seen)
	for _, r := range tb.rows {
		if seen[r.write] {
			problems = append(problems, fmt.Sprintf("line %d: write %q is a row twice", r.line, r.write))
		}
		seen[r.write] = true
		if _, ok := rowByName(r.write); !ok {
			problems = append(problems, fmt.Sprintf("line %d: write %q of the table has no implementation in the test (rows)", r.line, r.write))
		}
	}
	for _, r := range rows {
		if !seen[r.name] {
			problems = append(problems, fmt.Sprintf("the test's write %q is no row of the table", r.name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the attack matrix of %s and test/integration/attackmatrix differ:\n  %s", securityDoc, strings.Join(problems, "\n  "))
	}
	return nil
}

// TestReadTable checks the parser on a table of its own: it reads the
// first table of the section and refuses cells other than allow and deny,
// and rows with a cell too few.
func TestReadTable(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "doc.md")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := "# T\n\n| a | b |\n|---|---|\n| x | y |\n\n" + matrixHeading + "\n\ntext\n\n| write | one | `two` |\n|---|---|---|\n| w1 | allow | deny |\n| `w2` | deny | deny |\n\n| other | table |\n|---|---|\n| z | z |\n"
	tb, err := readTable(write(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tb.actors); got != "[one two]" {
		t.Errorf("actors %s, want [one two]", got)
	}
	if len(tb.rows) != 2 || tb.rows[1].write != "w2" || fmt.Sprint(tb.rows[0].cells) != "[allow deny]" || tb.rows[0].line != 13 {
		t.Errorf("rows %+v", tb.rows)
	}
	for what, text := range map[string]string{
		"a cell that is neither": matrixHeading + "\n| write | one |\n|---|---|\n| w | maybe |\n",
		"a cell too few":         matrixHeading + "\n| write | one | two |\n|---|---|---|\n| w | allow |\n",
		"no section":             "| write | one |\n|---|---|\n| w | allow |\n",
		"no row":                 matrixHeading + "\n| write | one |\n|---|---|\n\n## Next\n",
	} {
		if _, err := readTable(write(text)); err == nil {
			t.Errorf("%s: read without an error", what)
		}
	}
}

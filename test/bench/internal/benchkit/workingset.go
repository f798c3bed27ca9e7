package benchkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// ClearReferenced clears the accessed bits of pid's pages
// (/proc/<pid>/clear_refs), so that the Referenced counts of its smaps, and
// ReadWorkingSet, count the pages it touches from then on. Only the process's
// owner or a privileged reader may.
func ClearReferenced(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("1"), 0)
}

// WorkingSet is the part of a process's memory it used over a period: its
// anonymous pages, which a node without swap cannot reclaim, and the pages
// of mapped files (its binary) it referenced since ClearReferenced. The other
// resident file pages are clean pages it has not touched in that period; the
// kernel may reclaim them under memory pressure and reads them back when they
// are touched again. The longer the period, the more of them it touches.
type WorkingSet struct {
	Anon           uint64 // resident anonymous pages (RssAnon)
	FileResident   uint64 // resident pages of mapped files
	FileReferenced uint64 // of those, the pages referenced since ClearReferenced
}

// Total is the working set: anonymous pages and referenced file pages.
func (w WorkingSet) Total() uint64 { return w.Anon + w.FileReferenced }

// ReadWorkingSet reads pid's working set from /proc/<pid>/smaps.
func ReadWorkingSet(pid int) (WorkingSet, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return WorkingSet{}, err
	}
	defer f.Close()
	w, err := ParseSmapsWorkingSet(f)
	if err != nil {
		return w, fmt.Errorf("/proc/%d/smaps: %w", pid, err)
	}
	return w, nil
}

// ParseSmapsWorkingSet sums the text of /proc/<pid>/smaps: every mapping's
// Anonymous pages, and the Rss and Referenced pages of file mappings (an
// inode other than 0) that are not anonymous (a private file mapping's
// written pages are).
func ParseSmapsWorkingSet(r io.Reader) (WorkingSet, error) {
	var w WorkingSet
	var (
		file                 bool
		rss, ref, anon       uint64
		mappings             int
		sawRss, sawReference bool
	)
	flush := func() {
		w.Anon += anon
		if file {
			w.FileResident += rss - min(rss, anon)
			w.FileReferenced += ref - min(ref, anon)
		}
		rss, ref, anon = 0, 0, 0
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			// A mapping's header: "start-end perms offset dev inode [path]".
			if _, _, err := parseMapsRange(line); err != nil {
				return w, err
			}
			if len(fields) < 5 {
				return w, fmt.Errorf("mapping line %q has no inode", line)
			}
			if mappings > 0 {
				flush()
			}
			mappings++
			file = fields[4] != "0"
			continue
		}
		var dst *uint64
		switch fields[0] {
		case "Rss:":
			dst, sawRss = &rss, true
		case "Referenced:":
			dst, sawReference = &ref, true
		case "Anonymous:":
			dst = &anon
		default:
			continue
		}
		v, err := kbValue(fields, line)
		if err != nil {
			return w, err
		}
		*dst = v
	}
	if err := sc.Err(); err != nil {
		return w, err
	}
	if mappings == 0 || !sawRss || !sawReference {
		return w, fmt.Errorf("no mapping with Rss and Referenced lines")
	}
	flush()
	return w, nil
}
